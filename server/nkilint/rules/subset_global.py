"""NKI108: ``global``/``nonlocal`` in kernel code (0.2-0.6)."""

import ast

from nki_studio.core.findings import Severity
from nki_studio.nkilint.rule import Basis
from nki_studio.nkilint.ruleutil import construct_rule

construct_rule(
    code="NKI108",
    name="global-in-kernel",
    node_types=(ast.Global, ast.Nonlocal),
    severity=Severity.WARNING,
    basis=Basis.INFERRED,
    message="global/nonlocal in kernel code: kernels must be pure functions of their arguments (results are "
    "cached per specialisation)",
    summary="`global` or `nonlocal` in kernel code.",
    why="Kernels must be pure functions of their arguments: depending on or mutating globals gives stale "
    "cached results (stated, Kernel Caching); `global`/`nonlocal` are not in the documented subset "
    "(inferred). Off for NKI 0.7, where the tracer runs ordinary Python (the caching caveat remains).",
    bad="import nki\nimport nki.language as nl\n\nCOUNT = 0\n\n\n@nki.jit\ndef kernel(x):\n    global COUNT\n"
    "    COUNT += 1\n    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    good="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    sources="python-subset.md §1 (purity: S), §4 (global/nonlocal: I)",
)
