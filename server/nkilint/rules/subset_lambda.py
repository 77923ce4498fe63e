"""NKI116: ``lambda`` in kernel code (0.2-0.6)."""

import ast

from nki_studio.core.findings import Severity
from nki_studio.nkilint.rule import Basis
from nki_studio.nkilint.ruleutil import construct_rule

construct_rule(
    code="NKI116",
    name="lambda-in-kernel",
    node_types=(ast.Lambda,),
    severity=Severity.WARNING,
    basis=Basis.INFERRED,
    message="lambda in kernel code is not documented before NKI 0.7; use a named helper function",
    summary="A `lambda` expression in kernel code.",
    why="Function values are supported (Composable Kernels), but lambdas are never mentioned for the 0.2-0.6 "
    "specialiser; a named `def` helper is documented and equivalent (inferred). Off for NKI 0.7.",
    bad="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n    half = lambda n: n // 2\n"
    "    out = nl.ndarray((half(x.shape[0]), 4), dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    good="import nki\nimport nki.language as nl\n\n\ndef half(n):\n    return n // 2\n\n\n@nki.jit\n"
    "def kernel(x):\n    out = nl.ndarray((half(x.shape[0]), 4), dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    return out\n",
    sources="python-subset.md §4 (lambda: I)",
)
