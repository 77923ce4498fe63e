"""Simulate specs: the comment grammar, NKI601 findings, pyproject specs, precedence and input generation."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
from nki_studio.verify.inputs import make_inputs
from nki_studio.verify.spec import (
    InstanceSpec,
    SimSpec,
    SpecError,
    TensorSpec,
    comment_findings,
    parse_fields,
    parse_value,
    parses,
    resolve,
)

KERNEL = textwrap.dedent("""\
    import nki
    import nki.language as nl

    # nki-studio: simulate x=bfloat16[1024,4096] residual=bf16[1024, 4096] weight=bfloat16[4096] eps=1e-6 reference=ref seed=7
    @nki.jit
    def rmsnorm(x, residual, weight, eps):
        return x
    """)


def test_good_comment_parses_every_field(tmp_path: Path) -> None:
    res = resolve(KERNEL, str(tmp_path / "k.py"), "rmsnorm", use_pyproject=False)
    assert res.problems == [] and res.findings == []
    spec = res.spec
    assert spec is not None
    assert spec.args == (
        ("x", TensorSpec("bfloat16", (1024, 4096))),
        ("residual", TensorSpec("bfloat16", (1024, 4096))),
        ("weight", TensorSpec("bfloat16", (4096,))),
        ("eps", 1e-6),
    )
    assert (spec.reference, spec.seed, spec.lnc, spec.origin) == ("ref", 7, 1, ("comment",))


def test_spec_round_trips_through_comment_and_json() -> None:
    spec = SimSpec(
        "k",
        (
            ("a", TensorSpec("float32", (128, 512))),
            ("k", 3),
            ("flag", True),
            ("shape", (3, 4)),
            ("one", (5,)),
        ),
        reference="m:ref",
        seed=3,
        lnc=2,
        atol=0.01,
    )
    fields, errors = parse_fields(spec.to_comment().split("simulate", 1)[1])
    assert errors == []
    assert fields == {
        "a": TensorSpec("float32", (128, 512)),
        "k": 3,
        "flag": True,
        "shape": (3, 4),
        "one": (5,),
        "reference": "m:ref",
        "seed": 3,
        "lnc": 2,
        "atol": 0.01,
    }
    assert SimSpec.from_json(spec.to_json()) == spec


def test_none_and_instances_round_trip_through_comment_and_json() -> None:
    config = InstanceSpec("Config", (("size", 512), ("flag", False), ("scale", 0.5), ("bias", None)))
    spec = SimSpec("k", (("mask", None), ("config", config), ("default", InstanceSpec("Config"))))
    assert spec.to_comment().endswith(
        "mask=none config=Config(size=512,flag=false,scale=0.5,bias=none) default=Config()"
    )
    fields, errors = parse_fields(spec.to_comment().split("simulate", 1)[1])
    assert errors == [] and fields == dict(spec.args)
    assert SimSpec.from_json(spec.to_json()) == spec
    assert parse_value("None") is None and parse_value("Config( size = 2 )") == InstanceSpec(
        "Config", (("size", 2),)
    )


SEEDED = textwrap.dedent("""\
    import nki

    @nki.jit
    def dropout(x, seed, config=None):
        return x

    @nki.jit
    def plain(x):
        return x
    """)


def test_seed_none_goes_to_a_kernels_seed_parameter(tmp_path: Path) -> None:
    # nki-samples' flash attention takes seed=None: the kernel gets None, the inputs are drawn with seed 0
    path = str(tmp_path / "k.py")
    override = parse_fields("x=float32[4] seed=none config=Config(size=2)")[0]
    spec = resolve(SEEDED, path, "dropout", override=override, use_pyproject=False, infer=False).spec
    assert spec is not None and spec.seed == 0
    assert spec.args == (
        ("x", TensorSpec("float32", (4,))),
        ("seed", None),
        ("config", InstanceSpec("Config", (("size", 2),))),
    )
    plain = resolve(
        SEEDED, path, "plain", override=parse_fields("x=float32[4] seed=none")[0], use_pyproject=False
    )
    assert plain.spec is None and "seed=none is for a kernel's seed parameter" in plain.problems[0]


def test_an_instance_is_built_from_the_kernels_module() -> None:
    import dataclasses
    import types

    module = types.ModuleType("kernel_module")

    @dataclasses.dataclass(frozen=True)
    class Config:
        size: int = 8
        flag: bool = True

    module.Config = Config  # type: ignore[attr-defined]
    spec = SimSpec("k", (("config", InstanceSpec("Config", (("flag", False),))), ("seed", None)))
    assert make_inputs(spec, module) == [Config(8, False), None]
    with pytest.raises(ValueError, match="defines no class 'Missing'"):
        make_inputs(SimSpec("k", (("config", InstanceSpec("Missing")),)), module)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x=bfloat17[4]", "unknown dtype 'bfloat17'"),
        ("x=Config(size)", "is not a new field=value"),
        ("x=Config(a=1,a=2)", "is not a new field=value"),
        ("x=Config(a=float32[4])", "neither dtype[shape]"),
        ("x=float32[4,-1]", "'-1'"),
        ("x=float32[4,0]", "not a positive integer"),
        ("x=hello", "neither dtype[shape]"),
        ("x=(3,4.5)", "nor a tuple of integers"),
        ("lnc=3", "lnc= must be 1 or 2"),
        ("ranks=0", "ranks= expects the number of collective ranks"),
        ("seed=-1", "seed= expects a non-negative integer"),
        ("atol=big", "atol= expects a non-negative number"),
        ("reference=a-b", "reference= expects a function name"),
        ("x=float32[4] x=float32[8]", "given twice"),
        ("x float32[4]", "expected name=value"),
    ],
)
def test_bad_values_are_reported(text: str, message: str) -> None:
    _, errors = parse_fields(text)
    assert any(message in str(e) for e in errors), [str(e) for e in errors]


def test_findings_point_at_the_offending_token() -> None:
    src = KERNEL.replace("weight=bfloat16[4096]", "weight=bfloat16[40x96]").replace(
        "eps=1e-6", "eps=1e-6 y=float32[4]"
    )
    findings = comment_findings(src, "k.py")
    assert {f.code for f in findings} == {"NKI601"}
    line = src.splitlines()[3]
    spans = {line[f.span.column - 1 : f.span.end_column - 1] for f in findings}
    assert spans == {"weight=bfloat16[40x96]", "y="}, spans
    assert all(f.span.line == 4 and f.source == "nki-sim" for f in findings)
    assert any("has no parameter 'y'" in f.message for f in findings)


def test_missing_parameter_and_misplaced_comment() -> None:
    src = KERNEL.replace("eps=1e-6 ", "")
    findings = comment_findings(src, "k.py")
    assert len(findings) == 1 and "no value for parameter(s) eps" in findings[0].message
    misplaced = "# nki-studio: simulate x=float32[4]\nx = 1\n"
    [f] = comment_findings(misplaced, "k.py")
    assert "not directly above" in f.message


@pytest.mark.parametrize("half", ["weight=bfloat16[40", "weight=bfl", "weight=", "weight"])
def test_a_value_still_being_typed_waits_while_typing(half: str) -> None:
    """While typing, an error in the spec's last field is the field being typed: reported only once the text
    is saved or opened (``typing=False``); an error before it, or a wrong name, is reported at once."""
    src = KERNEL.replace("weight=bfloat16[4096] eps=1e-6 reference=ref seed=7", "eps=1e-6 " + half)
    assert comment_findings(src, "k.py", typing=True) == []
    assert [f.code for f in comment_findings(src, "k.py")] == ["NKI601"]
    earlier = src.replace("eps=1e-6", "eps=one")
    [f] = comment_findings(earlier, "k.py", typing=True)
    assert "'one'" in f.message


def test_an_unparsable_file_is_told_apart_from_one_without_kernels() -> None:
    assert parses(KERNEL, "k.py") and parses("x = 1\n", "k.py")
    assert not parses(KERNEL.replace("return x", "return x +"), "k.py")


def test_inputs_function_replaces_arguments() -> None:
    src = KERNEL.replace(
        "x=bfloat16[1024,4096] residual=bf16[1024, 4096] weight=bfloat16[4096] eps=1e-6", "inputs=make"
    )
    assert comment_findings(src, "k.py") == []
    res = resolve(src, "k.py", "rmsnorm", use_pyproject=False)
    assert res.spec is not None and res.spec.inputs == "make" and res.spec.args == ()


def test_pyproject_spec_and_precedence(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        textwrap.dedent("""\
        [tool.nki-studio.simulate."kern/add.py::add"]
        a = "float32[128,512]"
        b = "float32[128,512]"
        reference = "ref_add"
        seed = 3
        [tool.nki-studio.simulate]
        other = "a=float32[4] b=float32[4]"
        """)
    )
    src = "import nki\n\n@nki.jit\ndef add(a, b):\n    return a\n\n@nki.jit\ndef other(a, b):\n    return a\n"
    path = tmp_path / "kern" / "add.py"
    path.parent.mkdir()
    res = resolve(src, str(path), "add")
    assert res.spec is not None and res.spec.reference == "ref_add" and res.spec.seed == 3
    assert res.spec.origin == ("pyproject",)
    # a comment wins key by key; the pyproject still supplies what the comment does not say
    commented = src.replace(
        "@nki.jit\ndef add", "# nki-studio: simulate a=bfloat16[4] seed=9\n@nki.jit\ndef add"
    )
    res = resolve(commented, str(path), "add")
    assert res.spec is not None
    assert dict(res.spec.args)["a"] == TensorSpec("bfloat16", (4,))
    assert dict(res.spec.args)["b"] == TensorSpec("float32", (128, 512))
    assert (res.spec.seed, res.spec.reference, res.spec.origin) == (9, "ref_add", ("comment", "pyproject"))
    # inference sits between the comment and the pyproject
    res = resolve(src, str(path), "add", inferred={"a": TensorSpec("float32", (8, 8))})
    assert res.spec is not None and dict(res.spec.args)["a"] == TensorSpec("float32", (8, 8))
    assert res.spec.origin == ("inferred", "pyproject")
    assert resolve(src, str(path), "other").spec is not None


def test_no_spec_anywhere_says_what_is_missing(tmp_path: Path) -> None:
    res = resolve(
        "import nki\n@nki.jit\ndef k(a):\n    return a\n", str(tmp_path / "k.py"), use_pyproject=False
    )
    assert res.spec is None and "no value for parameter(s) a" in res.problems[0]
    assert "no kernel named" in resolve(KERNEL, "k.py", "nope").problems[0]
    assert "no @nki.jit kernel" in resolve("def (", "k.py").problems[0]


def test_inputs_are_seeded_and_dtype_aware() -> None:
    spec = SimSpec(
        "k",
        (
            ("x", TensorSpec("bfloat16", (4, 8))),
            ("i", TensorSpec("int32", (16,))),
            ("m", TensorSpec("bool", (3,))),
            ("k", 5),
        ),
        seed=7,
    )
    a, b = make_inputs(spec), make_inputs(spec)
    assert str(a[0].dtype) == "bfloat16" and a[0].shape == (4, 8)
    assert a[1].dtype == np.int32 and a[2].dtype == np.bool_ and a[3] == 5
    assert all(np.array_equal(x.view(np.uint8), y.view(np.uint8)) for x, y in zip(a[:3], b[:3], strict=True))
    other = make_inputs(SimSpec("k", spec.args, seed=8))
    assert not np.array_equal(a[0].astype(np.float32), other[0].astype(np.float32))


def test_parse_value_scalars() -> None:
    assert parse_value("3") == 3 and parse_value("0x10") == 16 and parse_value("2.5") == 2.5
    assert parse_value("TRUE") is True
    with pytest.raises(SpecError):
        parse_value("float32[4")


def test_every_simulate_code_has_a_docs_page() -> None:
    import re

    import nki_studio.verify.report as report
    import nki_studio.verify.spec as spec

    root = Path(__file__).resolve().parents[2]
    codes = set(re.findall(r"NKI6\d\d", Path(report.__file__).read_text() + Path(spec.__file__).read_text()))
    assert {"NKI601", "NKI610", "NKI611", "NKI612", "NKI613", "NKI620", "NKI621", "NKI622", "NKI630"} <= codes
    for code in codes:
        page = root / "docs" / "rules" / f"{code}.md"
        assert page.is_file() and "## Bad" in page.read_text() and "## Good" in page.read_text(), code


def test_reserved_key_that_is_also_a_parameter_goes_to_both() -> None:
    src = "import nki\n\n# nki-studio: simulate x=float32[128,512] ranks=4\n@nki.jit\ndef k(x, ranks):\n    return x\n"
    assert comment_findings(src, "k.py") == []
    spec = resolve(src, "k.py", use_pyproject=False).spec
    assert spec is not None and spec.ranks == 4 and dict(spec.args)["ranks"] == 4
    assert spec.to_comment().count("ranks=") == 1 and SimSpec.from_json(spec.to_json()) == spec


def test_a_missing_value_says_where_the_spec_goes_with_a_line_that_works(tmp_path: Path) -> None:
    src = "import nki\n\n\n@nki.jit\ndef k(a, b, scale=2.0):\n    return a\n"
    [problem] = resolve(src, str(tmp_path / "k.py"), use_pyproject=False).problems
    assert "in a spec comment on the line directly above the kernel's decorator" in problem
    assert "[tool.nki-studio.simulate] in pyproject.toml" in problem
    example = problem.split("e.g. `", 1)[1].split("`", 1)[0]
    assert example == "# nki-studio: simulate a=float32[128,512] b=float32[128,512]"
    fixed = src.replace("@nki.jit", example + "\n@nki.jit")  # the example, pasted where the message says
    res = resolve(fixed, str(tmp_path / "k.py"), use_pyproject=False)
    assert res.spec is not None and not res.problems and not comment_findings(fixed, "k.py"), res.problems


def test_spec_arguments_leave_out_tuple_values() -> None:
    from nki_studio.verify.spec import spec_arguments

    source = "import nki\n\n\n# nki-studio: simulate x=float32[8,24] dims=(4,6) n=3\n@nki.jit\ndef k(x, dims, n):\n    return x\n"
    assert spec_arguments(source, "k.py") == {"k": {"x": ((8, 24), "float32"), "n": 3}}
