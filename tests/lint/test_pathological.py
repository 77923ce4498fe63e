"""Pathological sources: nesting past what the analyses take is one NKI003 finding on the construct and the
rest of the file is still linted; sizes past any float are exact (or said to be approximate), never a crash."""

from __future__ import annotations

import pytest
from nki_studio.nkilint.api import lint_source
from nki_studio.nkilint.config import LintConfig
from nki_studio.nkilint.incremental import IncrementalLinter

HEADER = "import nki\nimport nki.language as nl\n\n\n"
# A kernel after the pathological one: its NKI301 (256 partitions) must still be reported.
TAIL = (
    "\n\n@nki.jit\ndef after(a):\n"
    "    t = nl.ndarray((256, 64), dtype=nl.float32, buffer=nl.sbuf)\n    return t\n"
)


def _elif_chain(n: int) -> str:
    branches = "".join(f"    elif a == {i}:\n        x = {i}\n" for i in range(1, n))
    return f"@nki.jit\ndef chain(a):\n    if a == 0:\n        x = 0\n{branches}    return a\n"


def _subscript_chain(n: int) -> str:
    return f"@nki.jit\ndef chain(a):\n    x = a{'[0]' * n}\n    return x\n"


@pytest.mark.parametrize("construct", [_elif_chain(1200), _subscript_chain(2500)], ids=["elif", "subscript"])
def test_too_deep_construct_is_one_finding_and_the_rest_is_linted(construct: str) -> None:
    text = HEADER + construct + TAIL
    found = lint_source(text, "/nonexistent/deep.py", LintConfig())
    assert not [f for f in found if f.code == "NKI999"], found
    [deep] = [f for f in found if f.code == "NKI003"]
    assert deep.span.line == 7 and "too deeply nested to analyse here" in deep.message
    after_line = text.splitlines().index("def after(a):") + 2
    assert [f.span.line for f in found if f.code == "NKI301"] == [after_line]


def test_incremental_lint_keeps_reporting_a_cut_construct_after_an_edit_elsewhere() -> None:
    text = HEADER + _subscript_chain(500) + TAIL
    linter = IncrementalLinter("/nonexistent/deep.py")
    config = LintConfig()
    first = linter.lint(text, config)
    edited = text.replace("(256, 64)", "(256, 32)")
    second = linter.lint(edited, config)
    assert [f.code for f in first if f.code == "NKI003"] == ["NKI003"]
    assert second == lint_source(edited, "/nonexistent/deep.py", config)
    assert [f.code for f in second if f.code == "NKI003"] == ["NKI003"]


def test_near_the_limit_is_analysed_as_usual() -> None:
    text = HEADER + _subscript_chain(90) + TAIL
    found = lint_source(text, "/nonexistent/deep.py", LintConfig())
    assert not [f for f in found if f.code in ("NKI003", "NKI999")]


def test_a_shape_of_300_dims_is_reported_without_overflow() -> None:
    shape = ", ".join(["1000"] * 300)
    text = HEADER + (
        "@nki.jit\ndef wide(a):\n"
        f"    t = nl.ndarray((128, {shape}), dtype=nl.float32, buffer=nl.sbuf)\n"
        f"    u = nl.ndarray((128, {shape}), dtype=nl.float32, buffer=nl.psum)\n"
        "    return t\n"
    )
    found = lint_source(text, "/nonexistent/wide.py", LintConfig())
    assert not [f for f in found if f.code == "NKI999"], found
    by_code = {f.code: f.message for f in found}
    # 1000^300 * 4 bytes = 2^(300*log2(1000) + 2) ~ 2^2991.6: stated as a power of two, not a wrong number
    assert "at least about 2^2991 B per partition" in by_code["NKI401"]
    assert "about 2^2980 banks" in by_code["NKI402"]
