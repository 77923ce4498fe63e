"""NKI103: generators (``yield``, generator expressions) in kernel code before NKI 0.7."""

import ast

from nki_studio.core.findings import Severity
from nki_studio.nkilint.rule import Basis
from nki_studio.nkilint.ruleutil import construct_rule

construct_rule(
    code="NKI103",
    name="generator-in-kernel",
    node_types=(ast.Yield, ast.YieldFrom, ast.GeneratorExp),
    severity=Severity.ERROR,
    basis=Basis.STATED,
    message="generators (yield, generator expressions) are not supported in kernels before NKI 0.7; "
    "use a list or tuple",
    summary="`yield`, `yield from` or a generator expression in kernel code.",
    why="The NKI 0.7 release notes list generators among the constructs the previous (0.2-0.6) specialisation "
    "did not support. Under the 0.7 tracer they are ordinary meta-programming, so the rule is off there.",
    bad="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
    "    total = sum(d for d in x.shape)\n    out = nl.ndarray((128, total), dtype=x.dtype, "
    "buffer=nl.shared_hbm)\n    return out\n",
    good="import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n    total = 0\n"
    "    for d in x.shape:\n        total += d\n    out = nl.ndarray((128, total), dtype=x.dtype, "
    "buffer=nl.shared_hbm)\n    return out\n",
    sources="python-subset.md §4 (generators: S, 2.33 release notes), nki-0.7.md §3.1",
)
