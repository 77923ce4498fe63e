"""NKI117: list/dict comprehensions in kernel code (0.2-0.6)."""

import ast

from nki_studio.core.findings import Severity
from nki_studio.nkilint.rule import Basis
from nki_studio.nkilint.ruleutil import construct_rule

construct_rule(
    code="NKI117",
    name="comprehension-in-kernel",
    node_types=(ast.ListComp, ast.DictComp),
    severity=Severity.WARNING,
    basis=Basis.INFERRED,
    message="comprehensions are not documented in kernels before NKI 0.7; use a for loop with append",
    summary="A list or dict comprehension in kernel code.",
    why="Comprehensions are not mentioned by the 0.2-0.6 docs and are generator-like scopes, and generators "
    "are stated to be unsupported before 0.7 (inferred). A plain `for` loop with `append` is documented. "
    "Off for NKI 0.7.",
    bad="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    "    tiles = [nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf) for _ in range(4)]\n"
    "    out = nl.ndarray((128, 64 * len(tiles)), dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    good="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n    tiles = []\n"
    "    for _ in range(4):\n        tiles.append(nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf))\n"
    "    out = nl.ndarray((128, 64 * len(tiles)), dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    sources="python-subset.md §4 (comprehensions: I)",
)
