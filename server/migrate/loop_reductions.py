"""``t[...] = nl.loop_reduce(x, op, loop_indices)`` -> a copy at the first iteration, ``op(t, x)`` into ``t`` after.

``nl.loop_reduce`` has no 0.7 name; its page gives the equivalent: ``b = nl.loop_reduce(a, op=np.add,
loop_indices=[k])`` over ``k`` is ``b = nisa.tensor_tensor(data1=b, data2=a, op=np.add)``, "the destination tile is
also the rhs input to op" [v2.26.1 nki.language.loop_reduce]; deprecations.md's recipe is the same
``nisa.tensor_tensor(dst=acc, data1=acc, data2=x, op=op)``. Assigned into a tile, that tile is the destination. The
reduction starts over at the first iteration of its loops, every loop index 0 (inferred from the page's example,
which reduces into a tile nothing wrote before; the legacy simulator's rule, ``sim/legacy/assignment.py``), so:

``nisa.tensor_copy(dst=t[...], src=x) if k == 0 else nisa.tensor_tensor(dst=t[...], data1=t[...], data2=x, op=op)``

0.7's loops are Python ``range`` loops resolved when the kernel is specialised (nki-0.7.md), so the condition is a
Python one. The legacy ``dtype=`` goes: the result is written into ``t`` in ``t``'s dtype either way (the page's
equivalent has no other; inferred). Runs after ``scalar_masks``, which put an element-independent ``mask=`` under
``if``; a call with a mask left, bound to a name (its destination is its own previous result) or with an
operand that cannot be read twice stays listed (``manual.py``). The new text keeps the statement's line count.
"""

from __future__ import annotations

import ast

from nki_studio.migrate.result import PassResult
from nki_studio.migrate.scalar_masks import Scalars
from nki_studio.migrate.source import ISA, LANGUAGE, Source, functions

_PARAMETERS = ("x", "op", "loop_indices")


def run(src: Source) -> PassResult:
    """Rewrite each ``t[...] = nl.loop_reduce(...)`` statement (no ``mask=`` left)."""
    out = PassResult()
    isa = src.alias_of(ISA, "")
    for stmt, call in _statements(src):
        new = _rewritten(src, stmt, call, isa) if not any(k.arg == "mask" for k in call.keywords) else None
        if new is not None:
            out.change(
                src.replace(stmt, new), stmt.lineno, "nl.loop_reduce", "tensor_copy, then tensor_tensor"
            )
    return out


def rewritten_calls(src: Source) -> set[int]:
    """The ``loop_reduce`` calls (by ``id``) this pass rewrites once ``scalar_masks`` has taken their mask (none,
    or one that does not depend on the element); ``manual.py`` lists the others."""
    isa = src.alias_of(ISA, "")
    done = set()
    for func in functions(src.tree):
        scalars = Scalars(src, func)
        for stmt, call in _statements(src, func):
            mask = next((k.value for k in call.keywords if k.arg == "mask"), None)
            if (mask is None or scalars.mask(mask) is not None) and _rewritten(
                src, stmt, call, isa
            ) is not None:
                done.add(id(call))
    return done


def _statements(src: Source, within: ast.AST | None = None) -> list[tuple[ast.Assign, ast.Call]]:
    """Each ``target = nl.loop_reduce(...)`` statement with its call."""
    return [
        (node, node.value)
        for node in ast.walk(within or src.tree)
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and src.canonical(node.value.func) == f"{LANGUAGE}.loop_reduce"
    ]


def _rewritten(src: Source, stmt: ast.Assign, call: ast.Call, isa: str) -> str | None:
    """The 0.7 text of ``stmt`` (as many lines), or None when it is not ``t[...] = nl.loop_reduce(x, op,
    loop_indices)`` with ``t`` a subscript of a name and the file importing the ISA module."""
    target = stmt.targets[0] if len(stmt.targets) == 1 else None
    args = {**dict(zip(_PARAMETERS, call.args, strict=False)), **{str(k.arg): k.value for k in call.keywords}}
    if not (
        isa
        and isinstance(target, ast.Subscript)
        and isinstance(target.value, ast.Name)
        and len(call.args) <= len(_PARAMETERS)
        and set(args) - {"dtype", "mask"} == set(_PARAMETERS)
    ):
        return None
    indices = args["loop_indices"]
    items = indices.elts if isinstance(indices, (ast.Tuple, ast.List)) else [indices]
    if not items:
        return None
    first = " and ".join(f"{src.text_of(i)} == 0" for i in items)
    t, x, op = src.text_of(target), src.text_of(args["x"]), src.text_of(args["op"])
    # the statement's line breaks go between the accumulation's operands (the last ones all before op=)
    breaks = (stmt.end_lineno or stmt.lineno) - stmt.lineno
    line = src.lines[stmt.lineno - 1]
    indent = "\n" + " " * (len(line) - len(line.lstrip()) + 4)
    operands = [f"dst={t}", f"data1={t}", f"data2={x}", f"op={op}"]
    joints = [indent if i < breaks else " " for i in range(3)]
    joints[-1] = "\n" * max(breaks - 3, 0) + joints[-1]
    accumulated = operands[0] + "".join(f",{j}{o}" for j, o in zip(joints, operands[1:], strict=True))
    return f"{isa}.tensor_copy(dst={t}, src={x}) if {first} else {isa}.tensor_tensor({accumulated})"
