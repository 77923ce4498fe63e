"""Loop iterators: ``nl.affine_range`` / ``sequential_range`` / ``static_range`` -> ``range`` (deprecations.md §A,
nki-0.7.md §2.2: deprecated, behave as Python ``range`` in 0.7). ``nl.dynamic_range`` (removed in 0.7) needs its
body moved into a function for ``nl.fori_loop``: listed with that recipe.

The legacy meanings differ only in how the compiler scheduled the loop (``affine_range``: no loop-carried
dependency, iterations may run in parallel; ``sequential_range``: carried dependency); the values a correct
kernel computes are those of the sequential loop, which is what ``range`` runs (the proof checks it).
"""

from __future__ import annotations

from nki_studio.migrate import loop_directives
from nki_studio.migrate.result import ManualStep, PassResult
from nki_studio.migrate.source import LANGUAGE, Source

_STATIC = frozenset({"affine_range", "sequential_range", "static_range"})


def run(src: Source) -> PassResult:
    """Rename the static iterators to ``range``; list dynamic loops."""
    out = PassResult()
    directed = loop_directives.rewritten_calls(src)  # that pass makes them range loops under nl.no_reorder()
    for call, name in src.calls_to(LANGUAGE):
        if name in _STATIC and id(call) not in directed:
            if any(k.arg not in ("start", "stop", "step") for k in call.keywords):
                out.manual.append(
                    ManualStep(
                        call.lineno,
                        f"nl.{name} options",
                        "scheduling options have no 0.7 equivalent: drop them and use range(...)",
                    )
                )
                continue
            out.change(src.replace(call.func, "range"), call.lineno, f"nl.{name}", "range")
        elif name == "dynamic_range":
            out.manual.append(
                ManualStep(
                    call.lineno,
                    "nl.dynamic_range",
                    "removed in 0.7: move the loop body into `def body(i): ...` (no return value; state in SBUF/HBM) "
                    "and call nl.fori_loop(lo, hi, body, step) (lint NKI's fix offers it)",
                )
            )
    return out
