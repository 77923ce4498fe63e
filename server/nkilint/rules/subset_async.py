"""NKI118: ``async``/``await`` in kernel code (all versions)."""

import ast

from nki_studio.core.findings import Severity
from nki_studio.nkilint.rule import Basis
from nki_studio.nkilint.ruleutil import construct_rule

construct_rule(
    code="NKI118",
    name="async-in-kernel",
    node_types=(ast.AsyncFunctionDef, ast.Await, ast.AsyncFor, ast.AsyncWith),
    severity=Severity.ERROR,
    basis=Basis.INFERRED,
    max_version=None,
    message="async/await has no meaning in NKI kernel code",
    summary="`async def`, `await`, `async for` or `async with` in kernel code.",
    why="Kernels are specialised (0.2-0.6) or traced (0.7) synchronously; a coroutine never runs its body, so "
    "no instruction would be emitted. Not stated in the docs but certain to fail, so this inferred rule "
    "is an error (python-subset.md §4 suggests error for async).",
    bad="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x, source):\n"
    "    async def fetch():\n        return await source\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    good="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n    return out\n",
    sources="python-subset.md §4 (async: I, suggested error)",
)
