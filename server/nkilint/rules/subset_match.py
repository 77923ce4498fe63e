"""NKI119: ``match`` statements in kernel code (0.2-0.6)."""

import ast

from nki_studio.core.findings import Severity
from nki_studio.nkilint.rule import Basis
from nki_studio.nkilint.ruleutil import construct_rule

construct_rule(
    code="NKI119",
    name="match-in-kernel",
    node_types=(ast.Match,),
    severity=Severity.WARNING,
    basis=Basis.INFERRED,
    message="match statements are not documented in kernels before NKI 0.7; use if/elif",
    summary="A `match` statement in kernel code.",
    why="`match` (Python 3.10) is never mentioned by the NKI docs and not used by real kernels; `if`/`elif` on "
    "compile-time values is documented (inferred). Off for NKI 0.7.",
    bad="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, mode):\n    match mode:\n"
    "        case 0:\n            width = 64\n        case _:\n            width = 128\n"
    "    out = nl.ndarray((128, width), dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    good="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, mode):\n"
    "    width = 64 if mode == 0 else 128\n"
    "    out = nl.ndarray((128, width), dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    sources="python-subset.md §3 (match: I)",
)
