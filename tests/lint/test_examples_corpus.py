"""The project's example kernels lint clean: no error-level finding on NKI 0.6 or 0.7, and warnings only in
examples/deprecated_loop.py, whose NKI201 warning and fix the editor walkthrough relies on."""

from __future__ import annotations

import os

import pytest
from nki_studio.core.findings import Severity
from nki_studio.model.targets import Target, parse_nki_version
from nki_studio.nkilint.api import iter_python_files, lint_paths, lint_source
from nki_studio.nkilint.config import LintConfig
from nkilint_testutil import apply_fix, parses

EXAMPLES = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
MINE = (
    "tensor_add.py",
    "rmsnorm_residual.py",
    "rmsnorm_residual_fused.py",
    "tiled_matmul.py",
    "softmax.py",
    "dynamic_loop.py",
    "composable.py",
    "deprecated_loop.py",
)


def _config(version: str) -> LintConfig:
    return LintConfig(target=Target(nki_version=parse_nki_version(version)))


@pytest.mark.parametrize("version", ["0.6", "0.7"])
def test_examples_have_no_errors_and_warn_only_where_intended(version: str) -> None:
    findings = lint_paths([EXAMPLES], _config(version))
    assert not [f for f in findings if f.severity is Severity.ERROR], findings
    warned = {os.path.basename(f.path) for f in findings if f.severity is Severity.WARNING}
    assert warned == {"deprecated_loop.py"}, findings


def test_every_named_example_exists_and_has_a_kernel() -> None:
    files = {os.path.basename(p) for p in iter_python_files([EXAMPLES])}
    assert set(MINE) <= files
    for name in MINE:
        with open(os.path.join(EXAMPLES, name), encoding="utf-8") as fh:
            text = fh.read()
        assert "@nki.jit" in text and "# nki-studio: simulate" in text and "reference=ref_" in text


def test_deprecated_loop_fix_removes_the_warning() -> None:
    path = os.path.join(EXAMPLES, "deprecated_loop.py")
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    found = [f for f in lint_source(text, path, _config("0.7")) if f.code == "NKI201"]
    assert len(found) == 1 and found[0].deprecated and found[0].fix is not None
    fixed = apply_fix(text, found[0].fix)
    assert parses(fixed) and "for i in range(n // p):" in fixed
    assert lint_source(fixed, path, _config("0.7")) == []
