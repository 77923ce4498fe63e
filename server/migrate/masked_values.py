"""A named result of a call with an element-independent mask -> ``x = call if cond else <an allocation>``.

``x = nl.multiply(t, s, dtype=D, mask=c)`` with ``c`` the same for every element (``scalar_masks``): the legacy
instruction ran on every element or on none, and when it did not run the call still returned its result tile, its
elements unspecified ("a compile-time constant predicate that controls whether/how this instruction is executed",
v2.26.1 NKI API Masking). Under a Python ``if`` alone the name would be unbound when ``c`` is off, so the 0.7 form
binds it either way: ``x = nl.multiply(t, s, dtype=D) if c else nl.ndarray(t.shape, dtype=D, buffer=nl.sbuf)``,
on the statement's own lines (nki-samples' flash-attention backward computes ``dq_local``, ``dZ_sink`` and the
logit-bias ``intermediate`` this way under its causal-tile mask). The allocation takes the shape of the call's
first tile operand and the call's ``dtype=`` (else that operand's dtype): an element-wise result's (inferred for
operands that broadcast to it; the proof simulates both versions, masked-off tiles included). Its elements are as
unspecified as the legacy result's; a kernel reading them computes nothing the legacy kernel defined.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from nki_studio.migrate.isa_results import cheap
from nki_studio.migrate.source import LANGUAGE, Source


def fallback(src: Source, stmt: ast.stmt, is_scalar: Callable[[ast.expr], bool]) -> str | None:
    """The allocation binding ``stmt``'s name when its mask is off (``name = nl.op(...)``, one name target, an
    ``nl`` call with a tile operand that is a name or a subscript of one), or None (``is_scalar``: whether an
    expression is element-independent, so not a tile)."""
    if not (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.Call)
        and (src.canonical(stmt.value.func) or "").rpartition(".")[0] == LANGUAGE
    ):
        return None
    call = stmt.value
    operands = [*call.args, *(k.value for k in call.keywords if k.arg not in ("mask", "dtype"))]
    tile = next((o for o in operands if cheap(o) and not is_scalar(o)), None)
    if tile is None:
        return None
    nl = src.alias_of(LANGUAGE, "nl")
    dtype = next(
        (src.text_of(k.value) for k in call.keywords if k.arg == "dtype"), f"{src.text_of(tile)}.dtype"
    )
    return f"{nl}.ndarray({src.text_of(tile)}.shape, dtype={dtype}, buffer={nl}.sbuf)"
