"""PSUM results read where 0.7 wants SBUF -> ``nl.copy(...)`` of them.

``nl.matmul`` and ``nl.transpose`` return their tile in PSUM (language.md: "result in PSUM"; the legacy
``nki.language.transpose`` example copies it to SBUF first). The legacy compiler placed a value-returning call's
tile itself, so legacy kernels pass these results straight to another matrix product (``nl.matmul(scores,
nl.transpose(v))``, nki-samples' attention tutorial) or to ``nl.store``; in 0.7 a matmul's operands must be in
SBUF and ``nl.store`` writes from SBUF, so the simulator (as the compiler) refuses them. The rewrite copies such a
result to SBUF where it is made: ``v_t = nl.copy(nl.transpose(v))``. The copy keeps the dtype, so the values are
the same (the proof checks it); it is the instruction the legacy compiler had to insert (inferred).

Only a result passed directly (or through the name it is assigned to, in the same function) to ``nl.matmul``,
``nisa.nc_matmul``, ``nl.store`` or as ``nisa.affine_select``'s ``on_true_tile`` is copied; other readers
(``nl.exp(qk)`` ...) read PSUM in 0.7 as well. A PSUM tile the function allocates (``nl.ndarray(...,
buffer=nl.psum)``, also what ``isa_results`` made of a value-returning ``nc_matmul``) read there whole by name or
by a subscript is copied at the read: ``nl.store(out, value=nl.copy(acc))``, ``on_true_tile=nl.copy(qk[:, :])``.
"""

from __future__ import annotations

import ast

from nki_studio.migrate.matmul_accumulate import passed_accumulators
from nki_studio.migrate.result import PassResult
from nki_studio.migrate.source import ISA, LANGUAGE, Source, functions

_PRODUCERS = frozenset({f"{LANGUAGE}.matmul", f"{LANGUAGE}.transpose"})
# consumers reading only some operands from SBUF: isa.md §4.2, "``dst`` and ``on_true_tile`` in SBUF" (the legacy
# simulator took a PSUM one: nki-samples' flash-attention backward selects from its q @ k PSUM tile)
_SBUF_OPERANDS = {f"{ISA}.affine_select": frozenset({"on_true_tile"})}
_CONSUMERS = frozenset({f"{LANGUAGE}.matmul", f"{LANGUAGE}.store", f"{ISA}.nc_matmul", *_SBUF_OPERANDS})
_COPY = f"{LANGUAGE}.copy"
_STORE = f"{LANGUAGE}.store"
_PSUM = f"{LANGUAGE}.psum"


def run(src: Source) -> PassResult:
    """Wrap each PSUM result an SBUF-only reader takes in ``nl.copy``."""
    out = PassResult()
    nl = src.alias_of(LANGUAGE, "nl")
    for node in _copied(src):
        what = (
            f"nl.{(src.canonical(node.func) or '').rpartition('.')[2]} result"
            if isinstance(node, ast.Call)
            else "tile"
        )
        out.change(
            src.replace(node, f"{nl}.copy({src.text_of(node)})"),
            node.lineno,
            f"{what} in PSUM",
            f"{nl}.copy(...) to SBUF: a matmul operand or a stored value",
        )
    return out


def _copied(src: Source) -> list[ast.expr]:
    """The producer calls and PSUM tile reads to wrap (none already inside ``nl.copy``)."""
    found: dict[int, ast.expr] = {}
    for func in functions(src.tree):
        read = [arg for call in _calls(src, func, _CONSUMERS) for arg in _operands(src, call)]
        names = {arg.id for arg in read if isinstance(arg, ast.Name)}
        psum = set(passed_accumulators(src, func))  # and the PSUM tiles every call passes it (store_dk_dv's)
        for node in ast.walk(func):
            target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
            if isinstance(node, ast.AnnAssign):
                target = node.target
            value = getattr(node, "value", None)
            if not isinstance(target, ast.Name) or not isinstance(value, ast.Call):
                continue
            if target.id in names and src.canonical(value.func) in _PRODUCERS:
                found[id(value)] = value
            buffer = next((k.value for k in value.keywords if k.arg == "buffer"), None)
            if buffer is not None and src.canonical(buffer) == _PSUM:
                psum.add(target.id)
        for arg in read:
            if isinstance(arg, ast.Call) and src.canonical(arg.func) in _PRODUCERS:
                found[id(arg)] = arg
            elif _name(arg) in psum:  # a PSUM tile the function allocated, whole or a view of it
                found[id(arg)] = arg
    inside_copies = {id(arg) for call in _calls(src, src.tree, frozenset({_COPY})) for arg in call.args}
    return [node for key, node in found.items() if key not in inside_copies]


def _name(arg: ast.expr) -> str | None:
    """The name ``arg`` reads, itself or subscripted (``t``, ``t[:, :]``)."""
    arg = arg.value if isinstance(arg, ast.Subscript) else arg
    return arg.id if isinstance(arg, ast.Name) else None


def _operands(src: Source, call: ast.Call) -> list[ast.expr]:
    """What a consumer reads from SBUF: every argument but a destination (``dst=``, ``nl.store``'s first), or
    the operands ``_SBUF_OPERANDS`` names (as keywords: the 0.7 form ``isa_results`` wrote)."""
    name = src.canonical(call.func) or ""
    if name in _SBUF_OPERANDS:
        return [k.value for k in call.keywords if k.arg in _SBUF_OPERANDS[name]]
    positional = call.args[1:] if name == _STORE else call.args
    return [*positional, *(k.value for k in call.keywords if k.arg != "dst")]


def _calls(src: Source, tree: ast.AST, names: frozenset[str]) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and src.canonical(n.func) in names]
