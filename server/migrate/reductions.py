"""Reductions over free axes that are not contiguous (``nl.sum(x, axis=[2, 4])``, nki-samples' average_pool2d):
listed. 0.7 reduces trailing contiguous free dims only (language.md §9, isa.md §3.4 for ``tensor_reduce``), so
such a call has no 0.7 form as written; the legacy API took any free axes (inferred: the tutorial ran on
hardware). Only a literal axis list with a gap is certain to be refused (without the rank, ``axis=[1]`` may or
may not be trailing: the proof checks those).
"""

from __future__ import annotations

import ast

from nki_studio.migrate.result import ManualStep
from nki_studio.migrate.source import ISA, LANGUAGE, Source

_REDUCTIONS = frozenset(
    {f"{LANGUAGE}.{n}" for n in ("sum", "max", "min", "mean", "prod", "all", "var")}
    | {f"{ISA}.tensor_reduce"}
)
RECIPE = (
    "0.7 reduces trailing contiguous free dims only: lay the reduced dims out last (e.g. reorder the [step, size] "
    "pairs of the operand's .ap() pattern) and reduce those"
)


def listed(src: Source) -> list[ManualStep]:
    """Each reduction whose literal ``axis`` list has a gap."""
    found = []
    for node in ast.walk(src.tree):
        if not (isinstance(node, ast.Call) and src.canonical(node.func) in _REDUCTIONS):
            continue
        position = (
            2 if src.canonical(node.func) == f"{ISA}.tensor_reduce" else 1
        )  # (op, data, axis) / (x, axis)
        axis = next((k.value for k in node.keywords if k.arg == "axis"), None)
        if axis is None and len(node.args) > position:
            axis = node.args[position]
        items = axis.elts if isinstance(axis, (ast.Tuple, ast.List)) else []
        axes = sorted(a.value for a in items if isinstance(a, ast.Constant) and type(a.value) is int)
        if len(axes) == len(items) > 1 and axes != list(range(axes[0], axes[-1] + 1)):
            name = (src.canonical(node.func) or "").rpartition(".")[2]
            module = "nisa" if name == "tensor_reduce" else "nl"
            found.append(ManualStep(node.lineno, f"{module}.{name} axes not contiguous", RECIPE))
    return found
