"""NKI109: ``import`` inside kernel code (0.2-0.6)."""

import ast

from nki_studio.core.findings import Severity
from nki_studio.nkilint.rule import Basis
from nki_studio.nkilint.ruleutil import construct_rule

construct_rule(
    code="NKI109",
    name="import-in-kernel",
    node_types=(ast.Import, ast.ImportFrom),
    severity=Severity.WARNING,
    basis=Basis.INFERRED,
    message="import inside kernel code; import at module level",
    summary="An `import` statement inside a kernel or a helper it calls.",
    why="All documented kernels import at module level; imports inside the kernel body are outside the "
    "documented 0.2-0.6 subset (inferred). Off for NKI 0.7 (Python tracing).",
    bad="import nki\n\n\n@nki.jit\ndef kernel(x):\n    import nki.language as nl\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    good="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    sources="python-subset.md §6 (import inside a kernel: I)",
)
