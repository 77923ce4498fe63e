"""A kernel's first simulation (``service.first_run``): the guess for each parameter and where it comes from,
the spec comment written from the user's values, and the reference template the oracle will call."""

from __future__ import annotations

import textwrap
from pathlib import Path

from nki_studio.protocol.commands import LineEdit
from nki_studio.service import first_run
from nki_studio.service.settings import Settings
from nki_studio.service.simulation import prepare

KERNEL = textwrap.dedent("""\
    import nki
    import nki.language as nl


    @nki.jit
    def k(a, b, scale=2.0):
        assert a.shape == (128, 64)
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        return out
    """)


def _apply(source: str, edit: LineEdit) -> str:
    lines = source.splitlines(keepends=True)
    lines[edit["line"] : edit["line"] + edit["replace"]] = [edit["text"]]
    return "".join(lines)


def test_each_parameter_has_a_guess_and_says_from_where() -> None:
    got = first_run.guesses(KERNEL, "k.py", "k", {"b": "bfloat16[4,4]"})
    assert got is not None and got["needed"]
    assert got["parameters"] == [
        {"name": "a", "value": "float32[128,64]", "source": "asserts"},
        {"name": "b", "value": "bfloat16[4,4]", "source": "last run"},
    ]  # scale has a default: not asked
    assert first_run.guesses(KERNEL, "k.py", "k", {})["parameters"][1] == {  # type: ignore[index]
        "name": "b",
        "value": "float32[128,512]",
        "source": "example",
    }
    assert first_run.guesses(KERNEL, "k.py", "nope", {}) is None


def test_the_written_spec_runs(tmp_path: Path) -> None:
    path = str(tmp_path / "k.py")
    bad = first_run.write_spec(KERNEL, path, "k", {"a": "float32[128,64]", "b": "bf16[4,"})
    assert bad["edit"] is None and bad["problems"][0].startswith("b: ")
    written = first_run.write_spec(KERNEL, path, "k", {"a": "float32[128,64]", "b": "bf16[4,4]"})
    assert written["problems"] == [] and written["edit"] == {
        "line": 4,
        "replace": False,
        "text": "# nki-studio: simulate a=float32[128,64] b=bfloat16[4,4]\n",
    }
    source = _apply(KERNEL, written["edit"])
    guessed = first_run.guesses(source, path, "k", {})
    assert guessed is not None and not guessed["needed"]
    assert [p["source"] for p in guessed["parameters"]] == ["spec", "spec"]
    assert prepare(path, source, Settings()).spec.args[1][1].shape == (4, 4)
    # a second answer replaces the comment, keeping its other fields
    source = source.replace("b=bfloat16[4,4]", "b=bfloat16[4,4] seed=3")
    again = first_run.write_spec(source, path, "k", {"b": "float32[8]"})
    assert again["edit"] is not None and again["edit"]["replace"] and again["edit"]["line"] == 4
    assert again["edit"]["text"] == "# nki-studio: simulate a=float32[128,64] b=float32[8] seed=3\n"


def test_the_reference_template_is_named_in_the_spec(tmp_path: Path) -> None:
    path = str(tmp_path / "k.py")
    template = first_run.reference_template(KERNEL, path, "k")
    assert template is not None and template["function"] == "ref_k"
    source = _apply(KERNEL, template["edit"])
    assert "def ref_k(a, b, scale):" in source and 'raise NotImplementedError("write the reference' in source
    assert "# nki-studio: simulate a=float32[128,64] b=float32[128,512] reference=ref_k\n@nki.jit" in source
    assert prepare(path, source, Settings()).spec.reference == "ref_k"
    compile(source, path, "exec")
    # the function is there: asking again only names it
    again = first_run.reference_template(source, path, "k")
    assert again is not None and again["edit"]["replace"] and "def ref_k" not in again["edit"]["text"]


def test_guesses_from_type_hints_and_the_projects_tests(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.nki-studio]\n")
    kernels = tmp_path / "src" / "kernels.py"
    kernels.parent.mkdir()
    source = KERNEL.replace("def k(a, b, scale=2.0):", 'def k(a, b: "bf16[64,64]", c=None, scale=2.0):')
    source = source.replace("def k(a, b:", "def k(a, d, b:")
    kernels.write_text(source)
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_kernels.py").write_text(
        "import numpy as np\nfrom kernels import k\n\n\ndef test_k():\n"
        "    d = np.random.rand(8, 16).astype(np.float16)\n"
        "    k(np.zeros((1, 1), np.float32), d, np.zeros((2, 2), np.float32))\n"
    )
    got = first_run.guesses(source, str(kernels), "k", {})
    assert got is not None and got["parameters"] == [
        {"name": "a", "value": "float32[128,64]", "source": "asserts"},  # the asserts beat the tests
        {"name": "d", "value": "float16[8,16]", "source": "tests"},
        {"name": "b", "value": "bfloat16[64,64]", "source": "type hint"},  # the hint beats the tests
    ]
    # tests only in folders the search skips (dependencies, hidden environments): an example to edit
    (tmp_path / "node_modules").mkdir()
    (tests / "test_kernels.py").rename(tmp_path / "node_modules" / "test_kernels.py")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "k_test.py").write_text("k(1, np.zeros((3, 3), np.int8))\n")
    got = first_run.guesses(source, str(kernels), "k", {})
    assert got is not None
    assert got["parameters"][1] == {"name": "d", "value": "float32[128,512]", "source": "example"}


def test_the_reference_template_of_a_spec_less_kernel_takes_the_type_hints(tmp_path: Path) -> None:
    source = KERNEL.replace("def k(a, b, scale=2.0):", 'def k(a, b: "bf16[64,64]", scale=2.0):')
    template = first_run.reference_template(source, str(tmp_path / "k.py"), "k")
    assert template is not None
    assert (
        "# nki-studio: simulate a=float32[128,64] b=bfloat16[64,64] reference=ref_k\n"
        in template["edit"]["text"]
    )


def test_guesses_from_torch_calls_and_conftest_fixtures_of_the_projects_tests(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.nki-studio]\n")
    kernels = tmp_path / "kernels.py"
    source = KERNEL.replace("def k(a, b, scale=2.0):", "def k(x, w, b, scale=2.0):")
    kernels.write_text(source)
    tests = tmp_path / "tests" / "unit"
    tests.mkdir(parents=True)
    (tmp_path / "tests" / "conftest.py").write_text(
        "import pytest\nimport torch\n\n\n@pytest.fixture\ndef weights():\n"
        "    return torch.zeros((512, 128), dtype=torch.bfloat16)\n"
    )
    (tests / "conftest.py").write_text(  # nearer: overrides the one above for the tests here
        "import pytest\nimport numpy as np\n\n\n@pytest.fixture\ndef bias():\n    return np.ones((1, 128), np.float32)\n"
    )
    (tests / "test_k.py").write_text(
        "import torch\nfrom kernels import k\n\n\n"
        "def test_k(weights, bias):\n    k(torch.randn(128, 512, dtype=torch.bfloat16), weights, bias)\n"
    )
    got = first_run.guesses(source, str(kernels), "k", {})
    assert got is not None and got["parameters"] == [
        {"name": "x", "value": "bfloat16[128,512]", "source": "tests"},
        {"name": "w", "value": "bfloat16[512,128]", "source": "tests"},
        {"name": "b", "value": "float32[1,128]", "source": "tests"},
    ]
    # a conftest.py in a sibling folder does not apply
    (tmp_path / "tests" / "other").mkdir()
    (tests / "conftest.py").rename(tmp_path / "tests" / "other" / "conftest.py")
    got = first_run.guesses(source, str(kernels), "k", {})
    assert got is not None and got["parameters"][2]["source"] == "example"
