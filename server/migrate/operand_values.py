"""Legacy string values of ISA operands -> the 0.7 enum members (``perf_mode="double_row_gen3"`` ->
``perf_mode=nisa.matmul_perf_mode.double_row``; the table is ``model.legacy_values``, which the legacy simulator
reads too). A file calling the instruction without an ``nisa`` module alias keeps the string (the proof's 0.7 run
then refuses it)."""

from __future__ import annotations

import ast

from nki_studio.migrate.result import PassResult
from nki_studio.migrate.source import ISA, Source
from nki_studio.model.legacy_values import LEGACY_OPERAND_VALUES


def run(src: Source) -> PassResult:
    """Replace each legacy string operand value by its enum member."""
    out = PassResult()
    isa = src.alias_of(ISA, "")
    for call, name in src.calls_to(ISA) if isa else ():
        for k in call.keywords:
            legacy = k.value.value if isinstance(k.value, ast.Constant) else None
            member = (
                LEGACY_OPERAND_VALUES.get((name, k.arg or ""), {}).get(legacy)
                if isinstance(legacy, str)
                else None
            )
            if member is not None:
                new = f"{isa}.{member[0]}.{member[1]}"
                out.change(src.replace(k.value, new), k.value.lineno, f"{k.arg}={legacy!r}", new)
    return out
