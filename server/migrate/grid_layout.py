"""Where a legacy grid kernel's body splits when ``spmd_grids`` makes it loop over its own grid: the statements run
once for the kernel (hoisted before the loops), those run once per program (inside the loops), and the exits.

A legacy launch ran the whole body once per program, the ``shared_hbm`` tensors program 0 allocated reused by the
others (the legacy simulator's reading of the tutorials: one output every program writes). Hoisted, in their order:
the statements that compute the same for every program and do nothing else -- names from the parameters and
shapes, asserts, configuration defaults, the ``shared_hbm`` allocations and ``if``/``else`` around those
(flash attention's ``lse`` allocated only when training) -- provided no looped statement binds a name they read or
bind, and none before them reads a name they bind (moving them must not change what any statement sees). Grid
reads other than ``program_id`` are the same for every program (``nl.program_ndim()`` in an assert). The exits are
the trailing ``return``s, possibly under ``if`` on hoisted values, returning only hoisted names (the outputs
allocated once), never a per-program value (it would be the last program's only).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from nki_studio.migrate.source import ISA, LANGUAGE, Source

ALLOCATORS = frozenset({"ndarray", "zeros", "empty", "full", "ones", "zeros_like", "empty_like"})
_INVARIANT_READS = frozenset({"num_programs", "program_ndim"})  # the same in every program
# statements that act (loop, return, mutate, define) rather than compute a value once
_ACTING = (
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Lambda,
    ast.Return,
    ast.Yield,
    ast.YieldFrom,
    ast.Await,
    ast.AugAssign,
    ast.Delete,
    ast.Global,
    ast.Nonlocal,
    ast.Expr,
    ast.Import,
    ast.ImportFrom,
)

GridRead = Callable[[ast.AST], "str | None"]  # ``program_id`` / ``num_programs`` / ``program_ndim`` of a call


@dataclass(frozen=True)
class Layout:
    """A grid kernel's body split: hoisted once, looped per program, the trailing exits (left where they are)."""

    hoisted: list[ast.stmt]
    moved: list[ast.stmt]
    exits: list[ast.stmt]


def layout(src: Source, function: ast.FunctionDef, grid_read: GridRead) -> Layout | None:
    """The body's split, or None when looping over the grid cannot keep its meaning (see the module docstring)."""
    body = list(function.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring stays first
    exits: list[ast.stmt] = []
    while body and _exit(src, body[-1], grid_read):
        exits.insert(0, body.pop())
    if not body or any(isinstance(n, ast.Return) for s in body for n in [s, *own_nodes(s)]):
        return None
    hoisted = _hoisted(src, function, body, grid_read)
    moved = [s for s in body if s not in hoisted]
    outputs = {n for s in hoisted for n in _bound(s)}
    returned = [n.value for e in exits for n in [e, *own_nodes(e)] if isinstance(n, ast.Return) and n.value]
    names = [v for value in returned for v in (value.elts if isinstance(value, ast.Tuple) else [value])]
    if not all(isinstance(n, ast.Name) and n.id in outputs for n in names):
        return None  # a per-program value would be returned from the last program only
    if any(shared_output(src, n) for s in moved for n in [s, *own_nodes(s)]):
        return None  # each program would allocate its own "shared" output
    multi_line_strings = any(
        isinstance(n, ast.Constant) and isinstance(n.value, str) and n.lineno != n.end_lineno
        for s in moved
        for n in ast.walk(s)
    )
    if not moved or multi_line_strings or not all(_own_lines(src, s) for s in body):
        return None  # re-indenting would change a string's value, or a line holds two statements
    return Layout(hoisted, moved, exits)


def own_nodes(node: ast.AST) -> list[ast.AST]:
    """The nodes of a function's body, not those of functions or lambdas nested in it."""
    found: list[ast.AST] = []
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        found.append(child)
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(child))
    return found


def shared_output(src: Source, node: ast.AST) -> bool:
    """``nl.ndarray(..., buffer=nl.shared_hbm)`` (any allocator): a tensor every program writes."""
    if not isinstance(node, ast.Call):
        return False
    module, _, leaf = (src.canonical(node.func) or "").rpartition(".")
    buffer = next((k.value for k in node.keywords if k.arg == "buffer"), None)
    return (
        module == LANGUAGE
        and leaf in ALLOCATORS
        and buffer is not None
        and src.canonical(buffer) == f"{LANGUAGE}.shared_hbm"
    )


def _exit(src: Source, stmt: ast.stmt, grid_read: GridRead) -> bool:
    """``return ...``, or an ``if`` on a value of the kernel whose branches only exit (no grid read: the exits stay
    as they are, after the loops)."""
    if any(grid_read(n) for n in ast.walk(stmt)):
        return False
    if isinstance(stmt, ast.Return):
        return True
    return isinstance(stmt, ast.If) and all(_exit(src, s, grid_read) for s in [*stmt.body, *stmt.orelse])


def _bound(stmt: ast.stmt) -> set[str]:
    """The names a statement binds (nested blocks included)."""
    return {
        n.id for n in [stmt, *own_nodes(stmt)] if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
    }


def _read(stmt: ast.stmt) -> set[str]:
    return {n.id for n in [stmt, *own_nodes(stmt)] if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _invariant(src: Source, stmt: ast.stmt, defined: set[str], grid_read: GridRead) -> bool:
    """Whether a statement only computes values that are the same for every program: no loop, no store into a
    tensor, no call of the file's functions (a sub-kernel may store), no ``nl``/``nisa`` call but a ``shared_hbm``
    allocation or a grid-wide read, no program id."""
    for node in [stmt, *own_nodes(stmt)]:
        if isinstance(node, _ACTING):
            return False
        if isinstance(node, (ast.Subscript, ast.Attribute)) and not isinstance(node.ctx, ast.Load):
            return False
        if isinstance(node, ast.Subscript) and (src.canonical(node.value) or "").startswith(LANGUAGE):
            return False  # nl.mgrid[...]: index tiles are per use
        if isinstance(node, ast.Call):
            name = src.canonical(node.func) or ""
            read = grid_read(node)
            if read is not None and read not in _INVARIANT_READS:
                return False
            if name.startswith((LANGUAGE, ISA)) and read is None and not shared_output(src, node):
                return False
            if isinstance(node.func, ast.Name) and node.func.id in defined:
                return False
    return True


def _hoisted(
    src: Source, function: ast.FunctionDef, body: list[ast.stmt], grid_read: GridRead
) -> list[ast.stmt]:
    """The statements of ``body`` run once before the loops (see the module docstring), in their order."""
    defined = {f.name for f in ast.walk(src.tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    kept = [s for s in body if _invariant(src, s, defined, grid_read)]
    changed = True
    while changed:
        changed = False
        for stmt in list(kept):
            looped = [s for s in body if s not in kept]
            bound_looped = {n for s in looped for n in _bound(s)}
            before = [s for s in looped if s.lineno < stmt.lineno]
            if (_bound(stmt) | _read(stmt)) & bound_looped or any(_bound(stmt) & _read(s) for s in before):
                kept.remove(stmt)
                changed = True
    return kept


def _own_lines(src: Source, stmt: ast.stmt) -> bool:
    """Whether a statement has its lines to itself (nothing before it, at most a comment after it)."""
    first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
    before = src.lines[first - 1][: src.span(stmt).column - 1]
    after = src.lines[last - 1][src.span(stmt).end_column - 1 :]
    return not before.strip() and (not after.strip() or after.strip().startswith("#"))
