"""NKI101: ``try``/``except``/``finally`` inside kernel code (0.2-0.6)."""

import ast

from nki_studio.core.findings import Severity
from nki_studio.nkilint.rule import Basis
from nki_studio.nkilint.ruleutil import construct_rule

_TRY = (ast.Try, ast.TryStar) if hasattr(ast, "TryStar") else (ast.Try,)

construct_rule(
    code="NKI101",
    name="try-in-kernel",
    node_types=_TRY,
    severity=Severity.WARNING,
    basis=Basis.INFERRED,
    message="try/except is not part of the NKI Python subset before NKI 0.7; use assert on compile-time values",
    summary="`try`/`except`/`finally` in kernel code.",
    why="The NKI 0.2-0.6 specialiser accepts only the documented Python subset. Exception handling is not "
    "documented, and real kernels use `assert` (nki-library's `kernel_assert`) instead. NKI 0.7 traces the "
    "kernel with Python, so the construct is ordinary meta-programming there and the rule is off.",
    bad="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n    try:\n        n = x.shape[0]\n"
    "    except IndexError:\n        n = 1\n    out = nl.ndarray((n, 4), dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    return out\n",
    good="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n    assert len(x.shape) == 2, "
    '"x must be 2-D"\n    out = nl.ndarray((x.shape[0], 4), dtype=x.dtype, buffer=nl.shared_hbm)\n'
    "    return out\n",
    sources="python-subset.md §6 (try/except: I), nki-0.7.md §3.1",
)
