"""Legacy multi-axis SPMD launch grids (``kernel[a, b](...)`` reading ``nl.program_id(1)``) -> a kernel that loops
over its own grid.

NKI 0.7's launch bracket is one LNC degree (1 or 2; nki-0.7.md §2.5, deprecations.md "SPMD grids"), so a legacy
grid of ``a * b`` programs has no bracket form. The choice made here: the migrated kernel runs every program itself,
``for pid_0 in range(E0): for pid_1 in range(E1): <body>`` (0.7's ``range`` is the unrolled static loop that
replaced ``affine_range``; programs share nothing but their HBM outputs, so running them one after another computes
what the grid did, as the legacy simulator does), with ``nl.program_id(k)`` -> ``pid_k``, ``nl.num_programs(k)`` ->
``Ek`` (no axis: the product of all, the legacy default), ``nl.program_ndim()`` -> the rank. What is the same for
every program (the ``shared_hbm`` outputs, shapes, asserts) runs once before the loops (``grid_layout``).

The extents ``Ek``:

* from the file's launch sites when they say them: each grid expression, its local names substituted
  (``grid_x = a.shape[0] // 128``), written in the kernel's own parameters through the arguments the launch passes
  (``a.shape[0] // 128``), every launch of the kernel in the file giving the same ones; the launch
  ``kernel[a, b](x, y)`` becomes ``kernel(x, y)``;
* otherwise (no launch in the file -- a unit test launches it --, or launches whose extents are the caller's own
  values) the kernel takes them as keyword-only parameters ``num_programs_0``, ``num_programs_1`` ... (one per
  axis its reads name, the largest literal axis + 1, when no launch says the rank) and each launch in the file
  passes them: ``kernel[b, h](x)`` -> ``kernel(x, num_programs_0=b, num_programs_1=h)``. A launch in another file
  must make the same change: the change says so (the proof launches the original on the grid the inputs give and
  the migrated kernel with those parameters).

A grid this cannot carry over stays a manual step (manual.py) with the reason: a grid read in a helper function or
with a non-literal axis, a kernel returning something other than the outputs it allocates once, or a kernel the
file uses other than by launching it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from nki_studio.core.findings import Span, TextEdit
from nki_studio.migrate import grid_layout
from nki_studio.migrate.result import PassResult
from nki_studio.migrate.source import LANGUAGE, Source

_READS = frozenset({"program_id", "num_programs", "program_ndim"})
_BUILTINS = frozenset({"len", "int", "min", "max", "abs"})  # allowed in a grid extent besides the arguments
EXTENT_PARAMETER = "num_programs"  # ``num_programs_0`` ...: the grid extents a kernel takes as parameters


@dataclass(frozen=True)
class GridKernel:
    """A kernel of the file launched on a multi-axis grid that the rewrite carries over."""

    function: ast.FunctionDef
    extents: tuple[str, ...]  # per grid axis, an expression of the kernel's parameters
    # the extent parameters the kernel gets (none when its launches give the extents)
    parameters: tuple[str, ...]
    launches: tuple[
        tuple[ast.Subscript, ast.Call], ...
    ]  # each launch ``kernel[a, b](...)``: bracket and call
    reads: tuple[ast.Call, ...]  # its program_id / num_programs / program_ndim calls
    callees: tuple[GridCallee, ...] = ()  # the functions it calls that read the grid


@dataclass(frozen=True)
class GridCallee:
    """A function of the file only the grid kernel calls that reads the grid point: it takes it as parameters."""

    function: ast.FunctionDef
    reads: tuple[ast.Call, ...]  # its program_id / program_ndim calls
    calls: tuple[ast.Call, ...]  # the grid kernel's calls of it
    axes: tuple[int, ...]  # the program ids it reads


def run(src: Source) -> PassResult:
    """Make every carried-over grid kernel loop over its grid, and its launches drop the bracket."""
    out = PassResult()
    for grid in grid_kernels(src):
        function = grid.function
        extents = ", ".join(grid.extents)
        if grid.parameters:
            out.change(
                _signature_edit(src, function, grid.parameters),
                function.lineno,
                "SPMD grid",
                f"{function.name} takes its grid extents as keyword parameters; a launch in another file "
                f"{_external_launch(function.name, grid.parameters)}",
            )
        where = "" if grid.parameters else "; launches in other files must drop the bracket"
        out.change(
            _loop_edit(src, grid),
            function.lineno,
            "SPMD grid",
            f"{function.name} loops over its grid ({extents}){where}",
        )
        variables = _variables(src, len(grid.extents))
        for callee in grid.callees:
            names = tuple(variables[a] for a in callee.axes)
            out.change(
                _signature_edit(src, callee.function, names),
                callee.function.lineno,
                "SPMD grid",
                f"{callee.function.name} takes the grid point of {function.name}'s loops as parameters "
                f"({', '.join(names)}); a caller in another file must pass them",
            )
            for read in callee.reads:
                axes = _axes(src, read, len(grid.extents)) or ()
                new = variables[axes[0]] if _grid_read(src, read) == "program_id" else str(len(grid.extents))
                out.change(src.replace(read, new), read.lineno, "SPMD grid", f"{src.text_of(read)} -> {new}")
        for subscript, call in grid.launches:
            out.change(
                src.replace(subscript, function.name),
                subscript.lineno,
                "SPMD grid",
                f"{src.text_of(subscript)} -> {function.name}",
            )
            if grid.parameters and isinstance(subscript.slice, ast.Tuple):
                passed = ", ".join(
                    f"{p}={src.text_of(e)}"
                    for p, e in zip(grid.parameters, subscript.slice.elts, strict=True)
                )
                out.change(
                    _argument_insertion(src, call, passed), call.lineno, "SPMD grid", f"passes {passed}"
                )
    return out


def _external_launch(name: str, parameters: tuple[str, ...]) -> str:
    """How a launch outside the file changes: ``k[e0, e1](...)`` -> ``k(..., num_programs_0=e0, ...)``."""
    extents = [f"e{k}" for k in range(len(parameters))]
    passed = ", ".join(f"{p}={e}" for p, e in zip(parameters, extents, strict=True))
    return f"`{name}[{', '.join(extents)}](...)` must become `{name}(..., {passed})`"


def rewritten_calls(src: Source) -> set[int]:
    """The grid reads and launch brackets (by ``id``) this pass rewrites (not manual steps)."""
    return {
        id(n)
        for grid in grid_kernels(src)
        for n in (*grid.reads, *(s for s, _ in grid.launches), *(r for c in grid.callees for r in c.reads))
    }


def launch_grids(text: str) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """Kernel name -> (its parameters, its grid extents in them), for the kernels this pass carries over with
    extents from the file's launches: what the proof launches the original with."""
    return {
        g.function.name: (tuple(a.arg for a in _parameters(g.function)), g.extents)
        for g in grid_kernels(Source(text))
        if not g.parameters
    }


def grid_parameters(text: str) -> dict[str, tuple[str, ...]]:
    """Kernel name -> the grid-extent parameters its migrated form takes (``num_programs_0`` ...), per axis: the
    proof launches the original on the grid their values give."""
    return {g.function.name: g.parameters for g in grid_kernels(Source(text)) if g.parameters}


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
    for name, function in kernels.items():
        sites = launches.get(name, [])
        reads = _reads(src, function)
        if reads is None or not (sites or any(_later_axis(call) for call in reads)):
            continue  # not a multi-axis grid kernel
        rank = len(sites[0][0].slice.elts) if sites else _read_rank(reads)  # type: ignore[attr-defined]
        callees = _grid_callees(src, function, rank)
        if (
            any(len(s.slice.elts) != rank for s, _ in sites)  # type: ignore[attr-defined]
            or _other_uses(src, function, {id(s) for s, _ in sites})
            or callees is None
            or grid_layout.layout(src, function, partial_read(src)) is None
            or not all(_axes(src, call, rank) is not None for call in reads)
        ):
            continue
        extents = {_extents(src, function, subscript, call) for subscript, call in sites}
        carried = next(iter(extents)) if len(extents) == 1 else None
        parameters: tuple[str, ...] = ()
        if carried is None:
            named = _extent_parameters(src, rank)
            if named is None or not _can_take_parameters(function):
                continue
            carried = parameters = named
        found.append(GridKernel(function, carried, parameters, tuple(sites), tuple(reads), tuple(callees)))
    return found


def partial_read(src: Source) -> grid_layout.GridRead:
    """``_grid_read`` bound to ``src`` (what ``grid_layout`` asks of a node)."""
    return lambda node: _grid_read(src, node)


def _later_axis(call: ast.Call) -> bool:
    """A read naming a grid axis after the first (``nl.program_id(1)``): the kernel needs a multi-axis grid."""
    return any(a > 0 for a in _literal_axes(call))


def _literal_axes(call: ast.Call) -> list[int]:
    value = (
        call.args[0]
        if call.args
        else next((k.value for k in call.keywords if k.arg in ("axis", "axes")), None)
    )
    items = value.elts if isinstance(value, ast.Tuple) else [value] if value is not None else []
    return [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, int)]


def _read_rank(reads: list[ast.Call]) -> int:
    """The grid rank the reads imply: the largest literal axis they name, plus one (inferred: an axis no read names
    changes nothing a program computes)."""
    return max((a for call in reads for a in _literal_axes(call)), default=0) + 1


def _extent_parameters(src: Source, rank: int) -> tuple[str, ...] | None:
    """``num_programs_0`` ... for ``rank`` axes; None when a name of the file already is one of them."""
    names = tuple(f"{EXTENT_PARAMETER}_{k}" for k in range(rank))
    taken = {n.id for n in ast.walk(src.tree) if isinstance(n, ast.Name)} | {
        a.arg for a in ast.walk(src.tree) if isinstance(a, ast.arg)
    }
    return None if taken & set(names) else names


def _can_take_parameters(function: ast.FunctionDef) -> bool:
    """Keyword-only parameters can be appended (no ``**kwargs`` to come after, some parameter to follow)."""
    args = function.args
    return args.kwarg is None and bool(args.posonlyargs or args.args or args.vararg or args.kwonlyargs)


def _signature_edit(src: Source, function: ast.FunctionDef, parameters: tuple[str, ...]) -> TextEdit:
    """The keyword-only extent parameters appended after the kernel's last parameter (its default included)."""
    args = function.args
    nodes: list[ast.AST] = [
        *args.posonlyargs,
        *args.args,
        *args.defaults,
        *args.kwonlyargs,
        *(d for d in args.kw_defaults if d is not None),
    ]
    if args.vararg is not None:
        nodes.append(args.vararg)
    last = max(nodes, key=lambda n: (n.end_lineno, n.end_col_offset))  # type: ignore[attr-defined]
    star = "" if args.vararg is not None or args.kwonlyargs else "*, "
    span = src.span(last)
    at = Span(span.end_line, span.end_column, span.end_line, span.end_column)
    return TextEdit(at, f", {star}{', '.join(parameters)}")


def _argument_insertion(src: Source, call: ast.Call, text: str) -> TextEdit:
    """``text`` added as the call's last arguments (an insertion)."""
    operands: list[ast.AST] = [*call.args, *call.keywords]
    if not operands:
        span = src.span(call)  # ``kernel[a, b]()``: just before the closing parenthesis
        return TextEdit(Span(span.end_line, span.end_column - 1, span.end_line, span.end_column - 1), text)
    last = max(operands, key=lambda n: (n.end_lineno, n.end_col_offset))  # type: ignore[attr-defined]
    span = src.span(last)
    return TextEdit(Span(span.end_line, span.end_column, span.end_line, span.end_column), f", {text}")


def _parameters(function: ast.FunctionDef) -> list[ast.arg]:
    args = function.args
    return [*args.posonlyargs, *args.args, *args.kwonlyargs]


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
    for node in grid_layout.own_nodes(scope):
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


def _grid_callees(src: Source, function: ast.FunctionDef, rank: int) -> list[GridCallee] | None:
    """The top-level functions the kernel calls that read the grid point (``nl.program_id`` / ``program_ndim``,
    flash attention's backward core): each takes the loops' variables as parameters. None when a grid read
    would be lost: a callee also used elsewhere in the file, reading ``num_programs`` or a non-literal axis, or a
    function further down the calls reading the grid."""
    top = {f.name: f for f in src.tree.body if isinstance(f, ast.FunctionDef)}
    calls: dict[str, list[ast.Call]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id != function.name:
            calls.setdefault(node.func.id, []).append(node)
    found = []
    for name, sites in calls.items():
        callee = top.get(name)
        if callee is None:
            continue
        reads = _reads(src, callee)
        if reads == []:
            if _reads_in_callees(src, callee):
                return None
            continue
        uses = [n for n in ast.walk(src.tree) if isinstance(n, ast.Name) and n.id == name]
        axes = [_axes(src, r, rank) for r in reads or []]
        if (
            reads is None
            or len(uses) != len(sites)
            or any(_grid_read(src, r) == "num_programs" for r in reads)
            or None in axes
            or _reads_in_callees(src, callee)
            or not _can_take_parameters(callee)
        ):
            return None
        read_ids = {
            a[0] for a, r in zip(axes, reads, strict=True) if a and _grid_read(src, r) == "program_id"
        }
        found.append(GridCallee(callee, tuple(reads), tuple(sites), tuple(sorted(read_ids))))
    return found


def _loop_edit(src: Source, grid: GridKernel) -> TextEdit:
    """One edit replacing the kernel's statements (docstring and return aside) with the hoisted outputs and the
    loop nest around the rest, its grid reads replaced."""
    function = grid.function
    layout = grid_layout.layout(src, function, partial_read(src))
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
    if grid.parameters:
        launch = (
            f"[{', '.join(grid.parameters)}] (callers: {_external_launch(function.name, grid.parameters)})"
        )
    else:
        launch = src.text_of(grid.launches[0][0])
    for axis, (variable, extent) in enumerate(
        zip(_variables(src, len(grid.extents)), grid.extents, strict=True)
    ):
        comment = f"  # was the launch grid {launch}: one iteration per program" if axis == 0 else ""
        out.append(f"{indent}{unit * axis}for {variable} in range({extent}):{comment}")
    depth = unit * len(grid.extents)
    looped = [
        text for line, text in zip(range(first, last + 1), replaced, strict=True) if line not in hoisted_lines
    ]
    # the blank lines hoisted statements leave (before the first, and runs of them) go
    looped = [t for i, t in enumerate(looped) if t.strip() or (i and looped[i - 1].strip())]
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
    """Lines ``first``..``last`` with each grid read replaced by its loop variable or extent, and the grid point
    passed to each call of a callee reading it."""
    variables = _variables(src, len(grid.extents))
    lines = src.lines[first - 1 : last]
    cuts: list[tuple[int, int, int, str]] = []  # (line, column, end column, new text)
    for call in grid.reads:
        axes = _axes(src, call, len(grid.extents)) or ()
        leaf = _grid_read(src, call)
        if leaf == "program_id":
            new = variables[axes[0]]
        elif leaf == "num_programs":
            new = (
                " * ".join(e if e.isidentifier() else f"({e})" for e in (grid.extents[a] for a in axes))
                or "1"
            )
        else:
            new = str(len(grid.extents))
        span = src.span(call)
        cuts.append((span.line, span.column, span.end_column, new))
    for callee in grid.callees:
        passed = ", ".join(f"{variables[a]}={variables[a]}" for a in callee.axes)
        for site in callee.calls:
            at = _argument_insertion(src, site, passed)
            cuts.append((at.span.line, at.span.column, at.span.column, at.new_text))
    for line, start, end, new in sorted(cuts, reverse=True):  # right to left: earlier columns hold
        text = lines[line - first]
        lines[line - first] = text[: start - 1] + new + text[end - 1 :]
    return lines
