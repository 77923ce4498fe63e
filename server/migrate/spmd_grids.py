"""Legacy multi-axis SPMD launch grids (``kernel[a, b](...)`` reading ``nl.program_id(1)``) -> a kernel that loops
over its own grid.

NKI 0.7's launch bracket is one LNC degree (1 or 2; nki-0.7.md §2.5, deprecations.md "SPMD grids"), so a legacy
grid of ``a * b`` programs has no bracket form. The choice made here: the migrated kernel runs every program itself,
``for pid_0 in range(E0): for pid_1 in range(E1): <body>`` (0.7's ``range`` is the unrolled static loop that
replaced ``affine_range``; programs share nothing but their HBM outputs, so running them one after another computes
what the grid did, as the legacy simulator does), with ``nl.program_id(k)`` -> ``pid_k``, ``nl.num_programs(k)`` ->
``Ek`` (no axis: the product of all, the legacy default), ``nl.program_ndim()`` -> the rank, and the launch
``kernel[a, b](x, y)`` -> ``kernel(x, y)``. The extents ``Ek`` come from the file's launch sites: each grid expression,
its local names substituted (``grid_x = a.shape[0] // 128``), written in the kernel's own parameters through the
arguments the launch passes (``a.shape[0] // 128``); every launch of the kernel in the file must give the same
ones. The ``shared_hbm`` outputs each program allocated (one tensor all programs write, legacy semantics) are
allocated once before the loops and returned after them.

A grid this cannot carry over stays a manual step (manual.py) with the reason: no launch in the file, extents that
depend on something other than the kernel's arguments, launches that disagree, grid reads in a helper function or
with a non-literal axis, a kernel returning something other than the shared outputs it allocates. Launches in other
files (a unit test's ``kernel[a, b](...)``) must drop the bracket by hand: the change says so.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from nki_studio.core.findings import Span, TextEdit
from nki_studio.migrate.result import PassResult
from nki_studio.migrate.source import LANGUAGE, Source

_READS = frozenset({"program_id", "num_programs", "program_ndim"})
_ALLOCATORS = frozenset({"ndarray", "zeros", "empty", "full", "ones", "zeros_like", "empty_like"})
_BUILTINS = frozenset({"len", "int", "min", "max", "abs"})  # allowed in a grid extent besides the arguments


@dataclass(frozen=True)
class GridKernel:
    """A kernel of the file launched on a multi-axis grid that the rewrite carries over."""

    function: ast.FunctionDef
    extents: tuple[str, ...]  # per grid axis, an expression of the kernel's parameters
    launches: tuple[ast.Subscript, ...]  # the ``kernel[a, b]`` of each launch
    reads: tuple[ast.Call, ...]  # its program_id / num_programs / program_ndim calls


def run(src: Source) -> PassResult:
    """Make every carried-over grid kernel loop over its grid, and its launches drop the bracket."""
    out = PassResult()
    for grid in grid_kernels(src):
        function = grid.function
        out.change(
            _loop_edit(src, grid),
            function.lineno,
            "SPMD grid",
            f"{function.name} loops over its grid ({', '.join(grid.extents)}); launches in other files must drop "
            "the bracket",
        )
        for launch in grid.launches:
            out.change(
                src.replace(launch, function.name),
                launch.lineno,
                "SPMD grid",
                f"{src.text_of(launch)} -> {function.name}",
            )
    return out


def rewritten_calls(src: Source) -> set[int]:
    """The grid reads and launch brackets (by ``id``) this pass rewrites (not manual steps)."""
    return {id(n) for grid in grid_kernels(src) for n in (*grid.reads, *grid.launches)}


def launch_grids(text: str) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """Kernel name -> (its parameters, its grid extents in them), for the kernels this pass carries over: what the
    proof launches the original with."""
    return {
        g.function.name: (tuple(a.arg for a in _parameters(g.function)), g.extents)
        for g in grid_kernels(Source(text))
    }


def grid_kernels(src: Source) -> list[GridKernel]:
    """The kernels launched on a multi-axis grid whose rewrite is possible (see the module docstring)."""
    kernels = {f.name: f for f in src.tree.body if isinstance(f, ast.FunctionDef) and f.decorator_list}
    launches: dict[str, list[tuple[ast.Subscript, ast.Call]]] = {}
    for node in ast.walk(src.tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Subscript)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in kernels
            and isinstance(node.func.slice, ast.Tuple)
        ):
            launches.setdefault(node.func.value.id, []).append((node.func, node))
    found = []
    for name, sites in launches.items():
        function = kernels[name]
        rank = len(sites[0][0].slice.elts) if isinstance(sites[0][0].slice, ast.Tuple) else 0
        extents = {_extents(src, function, subscript, call) for subscript, call in sites}
        reads = _reads(src, function)
        if (
            len(extents) != 1
            or None in extents
            or reads is None
            or _other_uses(src, function, {id(s) for s, _ in sites})
            or _reads_in_callees(src, function)
            or _layout(src, function) is None
        ):
            continue
        (extent,) = extents
        assert extent is not None
        if all(_axes(src, call, rank) is not None for call in reads):
            found.append(GridKernel(function, extent, tuple(s for s, _ in sites), tuple(reads)))
    return found


def _parameters(function: ast.FunctionDef) -> list[ast.arg]:
    args = function.args
    return [*args.posonlyargs, *args.args, *args.kwonlyargs]


def _own_nodes(node: ast.AST) -> list[ast.AST]:
    """The nodes of a function's body, not those of functions or lambdas nested in it."""
    found: list[ast.AST] = []
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        found.append(child)
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(child))
    return found


def _grid_read(src: Source, node: ast.AST) -> str | None:
    """``program_id`` / ``num_programs`` / ``program_ndim`` for a call of one of them."""
    if not isinstance(node, ast.Call):
        return None
    module, _, leaf = (src.canonical(node.func) or "").rpartition(".")
    return leaf if module == LANGUAGE and leaf in _READS else None


def _reads(src: Source, function: ast.FunctionDef) -> list[ast.Call] | None:
    """The kernel's grid reads, each on one line (the rewrite works line by line); None when one is not."""
    calls = [n for n in ast.walk(function) if isinstance(n, ast.Call) and _grid_read(src, n)]
    return None if any(c.lineno != c.end_lineno for c in calls) else calls


def _axes(src: Source, call: ast.Call, rank: int) -> tuple[int, ...] | None:
    """The literal grid axes a read names (all of them for ``num_programs()``/``program_ndim()``); None when not
    literal or out of the grid."""
    leaf = _grid_read(src, call)
    value = (
        call.args[0]
        if call.args
        else next((k.value for k in call.keywords if k.arg in ("axis", "axes")), None)
    )
    if value is None:
        # legacy defaults: program_id(axis=0); num_programs(axes=None) is the whole grid (deprecations.md row
        # "default changes in 0.3.0")
        return (0,) if leaf == "program_id" else tuple(range(rank))
    items = value.elts if isinstance(value, ast.Tuple) and leaf == "num_programs" else [value]
    axes = [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, int)]
    if len(axes) != len(items) or not all(0 <= a < rank for a in axes):
        return None
    return tuple(axes)


def _extents(
    src: Source, function: ast.FunctionDef, subscript: ast.Subscript, call: ast.Call
) -> tuple[str, ...] | None:
    """The launch's grid, each extent written in the kernel's parameters; None when it depends on anything else."""
    if not isinstance(subscript.slice, ast.Tuple) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    names = [a.arg for a in _parameters(function)]
    if function.args.vararg or function.args.kwarg or len(call.args) > len(function.args.args):
        return None
    passed: dict[str, str] = {}  # the launcher's name -> the kernel parameter it is passed as
    for parameter, argument in [
        *zip(names, call.args, strict=False),
        *((k.arg, k.value) for k in call.keywords),
    ]:
        if parameter is None:
            return None
        if isinstance(argument, ast.Name):
            passed.setdefault(argument.id, parameter)
    local = _single_assignments(_enclosing(src.tree, call))
    out = []
    for element in subscript.slice.elts:
        expression = _Substitute(local).visit(ast.parse(ast.unparse(element), mode="eval").body)
        if expression is None:
            return None
        used = {n.id for n in ast.walk(expression) if isinstance(n, ast.Name)}
        if not used <= set(passed) | _BUILTINS:
            return None
        out.append(ast.unparse(_Rename(passed).visit(expression)))
    return tuple(out)


def _enclosing(tree: ast.Module, node: ast.AST) -> ast.AST:
    """The innermost function holding ``node``, else the module."""
    holder: ast.AST = tree
    for f in ast.walk(tree):
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(n is node for n in ast.walk(f)):
            if holder is tree or any(n is f for n in ast.walk(holder)):
                holder = f
    return holder


def _single_assignments(scope: ast.AST) -> dict[str, ast.expr]:
    """Names bound exactly once in ``scope`` (its own nodes), by a plain ``name = value``, with their values."""
    stores: dict[str, int] = {}
    values: dict[str, ast.expr] = {}
    for node in _own_nodes(scope):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, ast.arg):
            stores[node.arg] = stores.get(node.arg, 0) + 1
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = node.value
    return {name: value for name, value in values.items() if stores.get(name) == 1}


class _Substitute(ast.NodeTransformer):
    """Local names replaced by the values they are bound to (a few levels deep)."""

    def __init__(self, values: dict[str, ast.expr], depth: int = 0) -> None:
        self.values = values
        self.depth = depth

    def visit_Name(self, node: ast.Name) -> ast.expr:
        value = self.values.get(node.id)
        if value is None or self.depth > 8:
            return node
        inner = ast.parse(ast.unparse(value), mode="eval").body
        result: ast.expr = _Substitute(self.values, self.depth + 1).visit(inner)
        return result


class _Rename(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.Name(self.names.get(node.id, node.id), node.ctx)


def _other_uses(src: Source, function: ast.FunctionDef, launches: set[int]) -> bool:
    """Whether the file names the kernel other than by its grid launches (a plain call, passed along)."""
    subscripted = {
        id(n.value) for n in ast.walk(src.tree) if isinstance(n, ast.Subscript) and id(n) in launches
    }
    return any(
        isinstance(n, ast.Name) and n.id == function.name and id(n) not in subscripted
        for n in ast.walk(src.tree)
    )


def _reads_in_callees(src: Source, function: ast.FunctionDef) -> bool:
    """Whether a function of the file the kernel calls (transitively) reads the grid: it would lose it."""
    defs = {f.name: f for f in ast.walk(src.tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    seen: set[str] = set()
    todo = [function]
    while todo:
        current = todo.pop()
        for node in ast.walk(current):
            if current is not function and _grid_read(src, node):
                return True
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                callee = defs.get(node.func.id)
                if callee is not None and callee.name not in seen and callee is not function:
                    seen.add(callee.name)
                    todo.append(callee)  # type: ignore[arg-type]
    return False


@dataclass(frozen=True)
class _Layout:
    """Where the kernel's body splits: the statements looped over, the outputs allocated once, the return."""

    moved: list[ast.stmt]
    hoisted: list[ast.Assign]
    returned: ast.Return | None


def _layout(src: Source, function: ast.FunctionDef) -> _Layout | None:
    """The body's split, or None when the rewrite cannot keep its meaning (see the module docstring)."""
    body = list(function.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring stays first
    last = body[-1] if body else None
    returned = last if isinstance(last, ast.Return) else None
    if returned is not None:
        body.pop()
    if not body or any(isinstance(n, ast.Return) for s in body for n in [s, *_own_nodes(s)]):
        return None
    assigned = {
        n.id for s in body for n in ast.walk(s) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
    }
    hoisted = [s for s in body if isinstance(s, ast.Assign) and _shared_output(src, s, assigned)]
    outputs = {t.id for s in hoisted for t in s.targets if isinstance(t, ast.Name)}
    if returned is not None and returned.value is not None:
        value = returned.value
        names = value.elts if isinstance(value, ast.Tuple) else [value]
        if not all(isinstance(n, ast.Name) and n.id in outputs for n in names):
            return None  # a per-program value would be returned from the last program only
    moved = [s for s in body if s not in hoisted]
    multi_line_strings = any(
        isinstance(n, ast.Constant) and isinstance(n.value, str) and n.lineno != n.end_lineno
        for s in moved
        for n in ast.walk(s)
    )
    if not moved or multi_line_strings or not all(_own_lines(src, s) for s in body):
        return None  # re-indenting would change a string's value, or a line holds two statements
    return _Layout(moved, hoisted, returned)


def _shared_output(src: Source, stmt: ast.Assign, assigned: set[str]) -> bool:
    """``out = nl.ndarray(..., buffer=nl.shared_hbm)`` whose operands do not change in the body: one tensor every
    program writes (the legacy simulator's reading of the tutorials)."""
    if not (
        isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
    ):
        return False
    call = stmt.value
    if not isinstance(call, ast.Call):
        return False
    module, _, leaf = (src.canonical(call.func) or "").rpartition(".")
    buffer = next((k.value for k in call.keywords if k.arg == "buffer"), None)
    operands = {n.id for n in ast.walk(call) if isinstance(n, ast.Name)} - {stmt.targets[0].id}
    return (
        module == LANGUAGE
        and leaf in _ALLOCATORS
        and buffer is not None
        and src.canonical(buffer) == f"{LANGUAGE}.shared_hbm"
        and not operands & assigned
        and not any(_grid_read(src, n) for n in ast.walk(call))
    )


def _own_lines(src: Source, stmt: ast.stmt) -> bool:
    """Whether a statement has its lines to itself (nothing before it, at most a comment after it)."""
    first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
    before = src.lines[first - 1][: src.span(stmt).column - 1]
    after = src.lines[last - 1][src.span(stmt).end_column - 1 :]
    return not before.strip() and (not after.strip() or after.strip().startswith("#"))


def _loop_edit(src: Source, grid: GridKernel) -> TextEdit:
    """One edit replacing the kernel's statements (docstring and return aside) with the hoisted outputs and the
    loop nest around the rest, its grid reads replaced."""
    function = grid.function
    layout = _layout(src, function)
    assert layout is not None  # grid_kernels checked it
    statements = [*layout.hoisted, *layout.moved]
    first = min(s.lineno for s in statements)
    # comment and blank lines just above the first statement go with it
    while first > function.body[0].lineno and _blank_or_comment(src.lines[first - 2]):
        first -= 1
    last = max(s.end_lineno or s.lineno for s in statements)
    replaced = _replace_reads(src, grid, first, last)
    indent = src.lines[statements[0].lineno - 1][: src.span(statements[0]).column - 1]
    def_indent = src.lines[function.lineno - 1][: src.span(function).column - 1]
    unit = indent[len(def_indent) :] or "    "
    hoisted_lines: set[int] = set()
    for stmt in layout.hoisted:
        start = stmt.lineno
        while start > first and _blank_or_comment(src.lines[start - 2]) and src.lines[start - 2].strip():
            start -= 1  # its comment comes along
        hoisted_lines.update(range(start, (stmt.end_lineno or stmt.lineno) + 1))
    out = [replaced[line - first] for line in range(first, last + 1) if line in hoisted_lines]
    launch = src.text_of(grid.launches[0])
    for axis, (variable, extent) in enumerate(
        zip(_variables(src, len(grid.extents)), grid.extents, strict=True)
    ):
        comment = f"  # was the launch grid {launch}: one iteration per program" if axis == 0 else ""
        out.append(f"{indent}{unit * axis}for {variable} in range({extent}):{comment}")
    depth = unit * len(grid.extents)
    looped = [
        text for line, text in zip(range(first, last + 1), replaced, strict=True) if line not in hoisted_lines
    ]
    while looped and not looped[0].strip():
        looped.pop(0)
    out += [depth + text if text.strip() else text for text in looped]
    return TextEdit(Span(first, 1, last + 1, 1), "\n".join(out) + "\n")


def _blank_or_comment(line: str) -> bool:
    return not line.strip() or line.strip().startswith("#")


def _variables(src: Source, rank: int) -> list[str]:
    """``pid_0``, ``pid_1`` ... (underscores added until no name of the file is one of them)."""
    taken = {n.id for n in ast.walk(src.tree) if isinstance(n, ast.Name)} | {
        a.arg for a in ast.walk(src.tree) if isinstance(a, ast.arg)
    }
    prefix = "pid"
    while any(f"{prefix}_{k}" in taken for k in range(rank)):
        prefix += "_"
    return [f"{prefix}_{k}" for k in range(rank)]


def _replace_reads(src: Source, grid: GridKernel, first: int, last: int) -> list[str]:
    """Lines ``first``..``last`` with each grid read replaced by its loop variable or extent."""
    variables = _variables(src, len(grid.extents))
    lines = src.lines[first - 1 : last]
    for call in sorted(grid.reads, key=lambda c: (c.lineno, c.col_offset), reverse=True):
        axes = _axes(src, call, len(grid.extents)) or ()
        leaf = _grid_read(src, call)
        if leaf == "program_id":
            new = variables[axes[0]]
        elif leaf == "num_programs":
            new = " * ".join(f"({grid.extents[a]})" for a in axes) or "1"
        else:
            new = str(len(grid.extents))
        span = src.span(call)
        text = lines[call.lineno - first]
        lines[call.lineno - first] = text[: span.column - 1] + new + text[span.end_column - 1 :]
    return lines
