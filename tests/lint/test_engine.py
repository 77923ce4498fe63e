"""Engine behaviour: never raises, syntax errors, rule crashes, suppression comments, unused suppression,
severity and version handling, pyproject configuration (walk-up, reload, per-file ignores, errors)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nki_studio.core.findings import Finding, Severity
from nki_studio.model.targets import Generation, NkiVersion, Target
from nki_studio.nkilint import rule as rule_mod
from nki_studio.nkilint.api import lint_paths, lint_source, load_config
from nki_studio.nkilint.config import ConfigError, LintConfig
from nki_studio.nkilint.context import LintContext
from nki_studio.nkilint.rule import Basis, define_rule
from nkilint_testutil import apply_fix, codes, lint

KERNEL = (
    "import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    "    for i in nl.affine_range(2):{comment}\n        pass\n    return x\n"
)


def test_half_typed_file_gives_one_syntax_finding() -> None:
    text = "import nki\n\n@nki.jit\ndef kernel(x):\n    for i in nl.affine_range(\n"
    found = lint(text)
    assert codes(found) == ["NKI000"]
    assert found[0].severity is Severity.ERROR and found[0].span.line >= 5


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=200))
def test_never_raises_on_arbitrary_text(text: str) -> None:
    found = lint_source(text, "/nonexistent/x.py", LintConfig())
    assert len([f for f in found if f.code == "NKI000"]) <= 1


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=0, max_value=len(KERNEL)))
def test_every_prefix_of_a_kernel_lints(cut: int) -> None:
    text = KERNEL.format(comment="")[:cut]
    found = lint_source(text, "/nonexistent/x.py", LintConfig())
    assert len([f for f in found if f.code == "NKI000"]) <= 1
    assert "NKI999" not in codes(found)


@pytest.fixture()
def crashing_rule() -> Iterator[None]:
    def check(ctx: LintContext) -> list[Finding]:
        raise RuntimeError("boom")

    define_rule(
        code="NKI098",
        name="test-crash",
        severity=Severity.ERROR,
        summary="crashes",
        basis=Basis.STATED,
        bad="",
        good="",
        check=check,
    )
    try:
        yield
    finally:
        del rule_mod.REGISTRY["NKI098"]


def test_crashing_rule_reported_once_on_line_one(crashing_rule: None) -> None:
    found = lint(KERNEL.format(comment="") * 2)
    internal = [f for f in found if f.code == "NKI999"]
    assert len(internal) == 1
    assert internal[0].span.line == 1 and "NKI098" in internal[0].message and "boom" in internal[0].message
    assert "NKI201" in codes(found)  # other rules still ran


def test_noqa_forms() -> None:
    assert "NKI201" not in codes(lint(KERNEL.format(comment="  # noqa: NKI201")))
    assert "NKI201" not in codes(lint(KERNEL.format(comment="  # noqa: NKI2")))
    assert "NKI201" not in codes(lint(KERNEL.format(comment="  # noqa")))
    assert "NKI201" in codes(lint(KERNEL.format(comment="  # noqa: NKI101")))
    assert "NKI201" in codes(lint(KERNEL.format(comment="  # noqa: E501")))
    text = "# nki-studio: noqa\n" + KERNEL.format(comment="")
    assert lint(text) == []
    assert "NKI201" in codes(lint('s = "# noqa: NKI201"\n' + KERNEL.format(comment="")))


def test_unused_noqa_reported_with_fix() -> None:
    text = KERNEL.format(comment="  # noqa: NKI201, NKI118")
    found = [f for f in lint(text) if f.code == "NKI001"]
    assert len(found) == 1 and "NKI118" in found[0].message and found[0].unnecessary
    fixed = apply_fix(text, found[0].fix)  # type: ignore[arg-type]
    assert "# noqa: NKI201" in fixed and "NKI118" not in fixed
    assert "NKI001" not in codes(lint(fixed))
    bare_unused = "x = 1  # noqa\n"
    assert lint(bare_unused) == []
    # A code for a rule that does not apply to the target version is not "unused".
    assert "NKI001" not in codes(lint("x = 1  # noqa: NKI101\n", "0.7"))


def test_select_ignore_and_severity() -> None:
    text = KERNEL.format(comment="")
    assert lint(text, select=("NKI1",)) == []
    found = lint_source(text, "/nonexistent/x.py", LintConfig(severity=(("NKI201", Severity.ERROR),)))
    assert [f.severity for f in found if f.code == "NKI201"] == [Severity.ERROR]
    assert lint_source(text, "/nonexistent/x.py", LintConfig(ignore=("NKI201",))) == []


def test_version_dependent_severity() -> None:
    text = (
        "import nki\nimport nki.language as nl\n\n@nki.jit\ndef k(x, n):\n"
        "    for i in nl.dynamic_range(n):\n        pass\n    return x\n"
    )
    assert [f.severity for f in lint(text, "0.6") if f.code == "NKI202"] == [Severity.WARNING]
    assert [f.severity for f in lint(text, "0.7") if f.code == "NKI202"] == [Severity.ERROR]
    assert "NKI202" not in codes(lint(text, "0.5"))


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def test_pyproject_walk_up_reload_and_per_file_ignores(tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = str(tmp_path)
    os.makedirs(os.path.join(root, "pkg", "sub"))
    kernel = os.path.join(root, "pkg", "sub", "k.py")
    _write(kernel, KERNEL.format(comment=""))
    pyproject = os.path.join(root, "pyproject.toml")
    _write(
        pyproject,
        '[tool.nki-studio]\ntarget = "trn1"\nnki-version = "0.6"\n'
        'per-file-ignores = { "pkg/sub/*" = ["NKI201"] }\n',
    )
    cfg = load_config(kernel)
    assert cfg.target.generation is Generation.GEN2 and cfg.target.nki_version == NkiVersion(0, 6)
    assert cfg.source == pyproject
    assert lint_paths([root]) == []
    time.sleep(0.01)
    _write(pyproject, '[tool.nki-studio]\nnki-version = "0.7"\nseverity = { NKI201 = "info" }\n')
    os.utime(pyproject, (time.time() + 5, time.time() + 5))  # a new mtime even on coarse file systems
    found = lint_paths([root])
    assert [(f.code, f.severity) for f in found] == [("NKI201", Severity.INFO)]


def test_pyproject_rewritten_within_one_clock_tick_is_reread(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Same mtime (a save within the file system's clock tick), other length: the cached table is not used."""
    pyproject = os.path.join(tmp_path, "pyproject.toml")
    _write(pyproject, '[tool.nki-studio]\ntarget = "trn1"\n')
    assert load_config(str(tmp_path)).target.generation is Generation.GEN2
    mtime_ns = os.stat(pyproject).st_mtime_ns
    _write(pyproject, '[tool.nki-studio]\ntarget = "trn2"\nnki-version = "0.6"\n')
    os.utime(pyproject, ns=(mtime_ns, mtime_ns))
    assert load_config(str(tmp_path)).target.nki_version == NkiVersion(0, 6)


def test_invalid_config_is_reported_not_raised(tmp_path) -> None:  # type: ignore[no-untyped-def]
    _write(os.path.join(tmp_path, "pyproject.toml"), '[tool.nki-studio]\ntarget = "trn9"\n')
    kernel = os.path.join(tmp_path, "k.py")
    _write(kernel, KERNEL.format(comment=""))
    with pytest.raises(ConfigError, match="trn9"):
        load_config(kernel)
    found = lint_source(KERNEL.format(comment=""), kernel)
    assert codes(found)[0] == "NKI002" and "NKI201" in codes(found)
    _write(os.path.join(tmp_path, "pyproject.toml"), "[tool.nki-studio\nbroken")
    os.utime(os.path.join(tmp_path, "pyproject.toml"), (time.time() + 9, time.time() + 9))
    assert "NKI002" in codes(lint_source("x = 1\n", kernel))


def test_helper_module_is_kernel_code_when_linted_with_its_kernel(tmp_path) -> None:  # type: ignore[no-untyped-def]
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text(
        "def width(n):\n    try:\n        return n // 2\n    except ZeroDivisionError:\n"
        "        return 1\n\n\ndef host_only():\n    try:\n        pass\n    except OSError:\n"
        "        pass\n"
    )
    (pkg / "k.py").write_text(
        "import nki\nfrom .helpers import width\n\n\n@nki.jit\ndef k(x):\n    return width(4)\n"
    )
    cfg = LintConfig(target=Target(nki_version=NkiVersion(0, 6)))
    alone = lint_paths([str(pkg / "helpers.py")], cfg)
    assert "NKI101" not in codes(alone)  # nothing marks it as kernel code on its own
    together = [f for f in lint_paths([str(pkg)], cfg) if f.code == "NKI101"]
    assert [(os.path.basename(f.path), f.span.line) for f in together] == [("helpers.py", 2)]


def test_byte_order_mark_and_crlf(tmp_path) -> None:  # type: ignore[no-untyped-def]
    text = KERNEL.format(comment="").replace("\n", "\r\n")
    assert codes(lint("\ufeff" + text)) == ["NKI201"]
    path = tmp_path / "bom.py"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    found = lint_paths([str(path)], LintConfig())
    assert [(f.code, f.span.line, f.span.column) for f in found] == [("NKI201", 7, 14)]


def test_syntax_errors_survive_select_but_not_ignore() -> None:
    assert codes(lint("def k(:\n", select=("NKI2",))) == ["NKI000"]
    assert lint_source("def k(:\n", "/nonexistent/x.py", LintConfig(ignore=("NKI000",))) == []


def test_functions_issuing_isa_calls_are_kernel_code_on_their_own() -> None:
    helper = (
        "import nki.isa as nisa\n\n\ndef copy_rows(dst, src):\n    try:\n        nisa.dma_copy(dst=dst, src=src)\n"
        "    except ValueError:\n        pass\n\n\ndef host(x):\n    try:\n        return x\n    except ValueError:\n"
        "        return None\n"
    )
    found = [f for f in lint(helper, "0.6") if f.code == "NKI101"]
    assert [f.span.line for f in found] == [5]
