"""Legacy block dimensions -> folded free dims (deprecations.md §C: "``nl.ndarray((B, nl.par_dim(128), F))`` ->
fold B into the free dims ``(128, B, F)``"; 0.7 has no ``nl.par_dim``, the partition dim is always dim 0).

``t = nl.ndarray((B, nl.par_dim(P), F), ...)`` (any ``nl`` allocator, or the legacy ``nisa.memset``, whose shape
tuple marks one dim with ``nl.par_dim``) becomes ``nl.ndarray((P, B, F), ...)``; every subscript of ``t`` moves its partition index to the
front (``t[b, i_p, i_f]`` -> ``t[i_p, b, i_f]``) and a subscript naming only block indices selects all partitions
(``t[b]`` -> ``t[:, b]``). The element ``t[b, p, f]`` of the legacy tile is then ``t[p, b, f]`` of the folded one,
so every access reads and writes the same elements (the proof checks the kernel's outputs). A tile used other than
by subscripts (passed on, ``.shape``, ``t[...]``) keeps its block dims and is listed with the recipe (a function
nested where the tile is allocated uses the same tile: its subscripts move too, unless it has its own variable of
that name; the nki-samples attention tutorials' ``qk_max(i_tile_q)`` closures); without a
block dim (``(nl.par_dim(P), F)``) the layout is unchanged and only the marker goes.

A PSUM tile the compiler allocates itself (``buffer=nl.psum``) becomes a list of tiles instead, the recipe's
other form: ``[[nl.ndarray((P, F), ...) for _ in range(B1)] for _ in range(B0)]``, each subscript ``t[b0, b1,
...]`` -> ``t[b0][b1][...]``. The legacy compiler allocated each block apart ("the physical tiles may not be alive
in the memory simultaneously", MIG "What are block dimensions?"), which separate 0.7 tensors keep, while the folded
tensor is one allocation: nki-samples' attention tutorial (v3, v8a, v11) keeps [32, 8, 128, 512] float32 of q @ k
tiles in PSUM, 512 KiB per partition folded, of 16 KiB. Only where every subscript names each block by an index
(no slice: a list is not sliced) and the tile is not passed to a function; otherwise it folds.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from nki_studio.migrate.result import ManualStep, PassResult
from nki_studio.migrate.source import ISA, LANGUAGE, Source, functions

_Function = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
RECIPE = (
    "block dimensions are gone: fold the block into the free dims ((128, B, F)) and index t[p, b, f], keep a "
    "list of tiles, or allocate the tile inside the loop"
)


def run(src: Source) -> PassResult:
    """Fold the block dims of every tile whose uses are all subscripts; list the others."""
    return _fold(src)[0]


def rewritten_markers(src: Source) -> set[int]:
    """The ``nl.par_dim`` calls (by ``id``) this pass rewrites (folded or dropped)."""
    return _fold(src)[1]


def _fold(src: Source) -> tuple[PassResult, set[int]]:
    out = PassResult()
    understood: set[int] = set()
    for node in ast.walk(src.tree):
        shape = _shape(src, node) if isinstance(node, ast.Call) else None
        if shape is not None and _par_dim(src, shape) == 0:
            # no block dim (``(nl.par_dim(P), F)``): the layout is unchanged, so is every use; the marker goes
            par = shape.elts[0]
            assert isinstance(par, ast.Call)
            out.change(src.replace(par, src.text_of(par.args[0])), par.lineno, "nl.par_dim", "plain dim")
            understood.add(id(par))
    tiles = _Folding(src)
    listed = {id(tile) for tile in tiles.folded() if _psum_list(src, tile)}
    for tile in tiles.folded():
        for allocation in tile.allocations:
            shape = _shape(src, allocation.value)
            assert shape is not None
            dims = [src.text_of(e) for e in shape.elts]
            par = shape.elts[tile.blocks]
            assert isinstance(par, ast.Call)
            dims[tile.blocks] = src.text_of(par.args[0])
            understood.add(id(par))
            if id(tile) in listed:
                out.change(
                    src.replace(
                        allocation.value, _tile_list(src, allocation.value, shape, dims, tile.blocks)
                    ),
                    shape.lineno,
                    "nl.par_dim",
                    "list of PSUM tiles",
                )
                continue
            folded = [dims[tile.blocks], *dims[: tile.blocks], *dims[tile.blocks + 1 :]]
            out.change(
                src.replace(shape, f"({', '.join(folded)})"), shape.lineno, "nl.par_dim", "folded free dims"
            )
    for tile in tiles.folded():
        if id(tile) in listed:
            for access in tile.subscripts:
                out.change(
                    src.replace(access, _list_access(src, access, tile.blocks)),
                    access.lineno,
                    "nl.par_dim",
                    "tile of the list",
                )
    for access, new in tiles.accesses(skip=listed):
        out.change(src.replace(access, new), access.lineno, "nl.par_dim", "partition index first")
    for call, name in src.calls_to(LANGUAGE):
        if name == "par_dim" and id(call) not in understood:
            out.manual.append(ManualStep(call.lineno, "nl.par_dim", RECIPE))
    return out, understood


@dataclass
class _Tile:
    """A block-dim tile: its allocations (or none: a helper's parameter) and the subscripts reading it."""

    blocks: int
    allocations: list[ast.Assign]
    subscripts: list[ast.Subscript]
    passed: list[tuple[str, str]]  # (helper, parameter) it is passed to
    ok: bool = True


class _Folding:
    """Which block-dim tiles fold: every use a subscript, ``.dtype``, or an argument to a function of this file whose
    parameter folds in turn (every call passing it a tile with the same block count). ``.shape`` and other uses
    see the layout, so they keep the tile as it is."""

    def __init__(self, src: Source) -> None:
        self.src = src
        self.helpers = {
            f.name: f for f in src.tree.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        self.tiles: list[_Tile] = []
        self.params: dict[tuple[str, str], _Tile] = {}
        # per (helper, parameter): each call's tile and the block dims its argument keeps (None: not a tile)
        self.callers: dict[tuple[str, str], list[tuple[_Tile, int] | None]] = {}
        self.arguments: set[int] = set()  # the uses of tiles passed to a helper
        for func in functions(src.tree):
            for name, (allocations, blocks) in _allocations(src, func).items():
                tile = _Tile(blocks, allocations, [], [])
                self._uses(func, name, tile, {id(t) for a in allocations for t in a.targets})
                self.tiles.append(tile)
        for call in (n for n in ast.walk(src.tree) if isinstance(n, ast.Call)):
            callee = call.func.id if isinstance(call.func, ast.Name) else None
            for key in [k for k in self.callers if k[0] == callee]:
                if id(_argument(call, self.helpers[key[0]], key[1])) not in self.arguments:
                    self.callers[key].append(None)  # a call passing it something else (or nothing)
        for helper, param in list(self.callers):
            func = self.helpers[helper]
            counts = {t[1] if t is not None else -1 for t in self.callers[(helper, param)]}
            tile = _Tile(counts.pop() if len(counts) == 1 else -1, [], [], [])
            tile.ok = tile.blocks >= 0 and _parameter(func, param)
            if tile.ok:
                self._uses(func, param, tile, set())
            self.params[(helper, param)] = tile
        changed = True
        while (
            changed
        ):  # a tile folds when all the parameters it is passed to fold, and they when all their tiles do
            changed = False
            for tile in [*self.tiles, *self.params.values()]:
                if tile.ok and not all(self.params.get(p, _FAILED).ok for p in tile.passed):
                    tile.ok, changed = False, True
            for key, tile in self.params.items():
                if tile.ok and not all(t is not None and t[0].ok for t in self.callers[key]):
                    tile.ok, changed = False, True

    def _uses(self, func: ast.AST, name: str, tile: _Tile, targets: set[int]) -> None:
        parents = {id(c): n for n in _own_nodes(func) for c in ast.iter_child_nodes(n)}
        for use in _own_nodes(func):
            if not isinstance(use, ast.Name) or use.id != name or id(use) in targets:
                continue
            parent = parents.get(id(use))
            if (
                isinstance(parent, ast.Subscript)
                and parent.value is use
                and _access(self.src, parent, tile.blocks)
            ):
                tile.subscripts.append(parent)
                self._view_passed(parent, parents, tile)
            elif isinstance(parent, ast.Attribute) and parent.attr == "dtype":
                pass  # the same dtype either way
            elif (passed := self._passed(parent, parents.get(id(parent)), use)) is not None:
                self.arguments.add(id(use))
                tile.passed.append(passed)
                self.callers.setdefault(passed, []).append((tile, tile.blocks))
            else:
                tile.ok = False
        for nested in _nested(func):
            self._closure_uses(nested, name, tile)

    def _view_passed(self, access: ast.Subscript, parents: dict[int, ast.AST], tile: _Tile) -> None:
        """A view keeping block dims passed to a function of this file (``compute_rowsum(dy_o_sum=t[h])`` of a
        ``(H, N, par_dim(P), 1)`` tile): the callee's parameter has the blocks left (here ``N``), and its
        subscripts must move too (``dy_o_sum[i, :, 0]`` -> ``dy_o_sum[:, i, 0]``, as the caller's view is now
        ``t[:, h]``). A view with no block left has the legacy layout already; nothing to follow."""
        blocks = _blocks_left(access, tile.blocks)
        parent = parents.get(id(access))
        passed = self._passed(parent, parents.get(id(parent)), access) if blocks else None
        if passed is not None:
            self.arguments.add(id(access))
            tile.passed.append(passed)
            self.callers.setdefault(passed, []).append((tile, blocks))

    def _closure_uses(self, nested: _Function, name: str, tile: _Tile) -> None:
        """The uses of the tile in a function nested where it is allocated (a closure: the same tile, so the
        same rules); a function that binds the name itself has its own variable. Its defaults and decorators run
        in the enclosing scope, and a ``nonlocal``/``global`` rebinding is not followed: either keeps the tile."""
        outer = [
            *([] if isinstance(nested, ast.Lambda) else nested.decorator_list),
            *nested.args.defaults,
            *(d for d in nested.args.kw_defaults if d is not None),
        ]
        own = _own_nodes(nested)
        if any(isinstance(n, ast.Name) and n.id == name for e in outer for n in ast.walk(e)) or any(
            isinstance(n, (ast.Nonlocal, ast.Global)) and name in n.names for n in own
        ):
            tile.ok = False
        elif not _binds(nested, name, own):
            self._uses(nested, name, tile, set())

    def _passed(
        self, parent: ast.AST | None, grandparent: ast.AST | None, use: ast.expr
    ) -> tuple[str, str] | None:
        """(helper, parameter) when ``use`` is an argument of a call to a function of this file."""
        call = grandparent if isinstance(parent, ast.keyword) else parent
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
            return None
        helper = self.helpers.get(call.func.id)
        if helper is None:
            return None
        if isinstance(parent, ast.keyword):
            return (helper.name, parent.arg) if parent.arg is not None else None
        positional = [a.arg for a in [*helper.args.posonlyargs, *helper.args.args]]
        index = next(i for i, a in enumerate(call.args) if a is use) if use in call.args else len(positional)
        return (helper.name, positional[index]) if index < len(positional) else None

    def folded(self) -> list[_Tile]:
        """The allocated tiles that fold."""
        return [t for t in self.tiles if t.ok]

    def accesses(self, skip: set[int]) -> list[tuple[ast.Subscript, str]]:
        """Every subscript of a folding tile (allocated or a parameter; not those in ``skip``, by ``id``) with its
        partition-first form."""
        found = {}
        for tile in [*self.tiles, *self.params.values()]:
            if tile.ok and id(tile) not in skip:
                for s in tile.subscripts:
                    new = _access(self.src, s, tile.blocks)
                    assert new is not None
                    found[id(s)] = (s, new)
        return list(found.values())


_FAILED = _Tile(-1, [], [], [], ok=False)


def _argument(call: ast.Call, func: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> ast.expr | None:
    """What ``call`` passes for parameter ``name`` of ``func`` (None: the default)."""
    for k in call.keywords:
        if k.arg == name:
            return k.value
    positional = [a.arg for a in [*func.args.posonlyargs, *func.args.args]]
    index = positional.index(name) if name in positional else len(call.args)
    return call.args[index] if index < len(call.args) else None


def _parameter(func: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    """``name`` is a plain parameter of ``func`` that the function never rebinds."""
    args = func.args
    if name not in [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]:
        return False
    return not any(
        isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load) for n in ast.walk(func)
    )


def _binds(func: _Function, name: str, own: list[ast.AST]) -> bool:
    """``func`` has its own variable ``name``: a parameter, or a name it assigns (``own``: its own nodes)."""
    args = func.args
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return any(a is not None and a.arg == name for a in params) or any(
        (isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load))
        or (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == name)
        or (isinstance(n, ast.alias) and (n.asname or n.name.partition(".")[0]) == name)
        for n in own
    )


def _nested(func: ast.AST) -> list[_Function]:
    """The functions defined inside ``func`` (outermost ones)."""
    found: list[_Function] = []
    for child in ast.iter_child_nodes(func):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            found.append(child)
        else:
            found.extend(_nested(child))
    return found


def _own_nodes(func: ast.AST) -> list[ast.AST]:
    """The nodes of ``func`` outside the functions nested in it."""
    found: list[ast.AST] = []
    for child in ast.iter_child_nodes(func):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            found.append(child)
            found.extend(_own_nodes(child))
    return found


def _shape(src: Source, value: ast.expr) -> ast.Tuple | None:
    """The shape tuple of an ``nl`` allocator call or a legacy ``nisa.memset`` (which allocates its result; first
    argument or ``shape=``)."""
    name = src.canonical(value.func) if isinstance(value, ast.Call) else None
    if not isinstance(value, ast.Call) or (
        (name or "").rpartition(".")[0] != LANGUAGE and name != f"{ISA}.memset"
    ):
        return None
    shape = value.args[0] if value.args else next((k.value for k in value.keywords if k.arg == "shape"), None)
    if isinstance(shape, ast.Tuple) or shape is None:
        return shape
    elts = _literal(shape)
    # a list, or lists and tuples joined with + (``[2] + [nl.par_dim(p), f]``): one tuple at the same place
    return ast.copy_location(ast.Tuple(elts=elts, ctx=ast.Load()), shape) if elts is not None else None


def _literal(node: ast.expr) -> list[ast.expr] | None:
    """The dims of a list/tuple display or a ``+`` of them."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return list(node.elts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left), _literal(node.right)
        return left + right if left is not None and right is not None else None
    return None


def _par_dim(src: Source, shape: ast.Tuple) -> int | None:
    """The position of the one ``nl.par_dim(P)`` dim of a shape."""
    found = [
        i
        for i, e in enumerate(shape.elts)
        if isinstance(e, ast.Call) and src.canonical(e.func) == f"{LANGUAGE}.par_dim"
    ]
    if len(found) != 1:
        return None
    par = shape.elts[found[0]]
    assert isinstance(par, ast.Call)
    return found[0] if len(par.args) == 1 and not par.keywords else None


def _allocations(src: Source, func: ast.AST) -> dict[str, tuple[list[ast.Assign], int]]:
    """Each name every assignment of which is an allocation with a block-dim shape, the same block count in all."""
    found: dict[str, tuple[list[ast.Assign], int]] = {}
    other: set[str] = set()
    for node in _own_nodes(func):
        names: list[str] = []
        if isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr, ast.comprehension)):
            names = [n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)]
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            names = [n.id for n in ast.walk(node.optional_vars) if isinstance(n, ast.Name)]
        shape = _shape(src, node.value) if isinstance(node, ast.Assign) else None
        blocks = _par_dim(src, shape) if shape is not None else None
        if blocks == 0:
            continue  # no block dim: rewritten wherever it is
        for name in names:
            if blocks is None or len(node.targets) != 1:  # type: ignore[attr-defined]
                other.add(name)
            elif name in found and found[name][1] != blocks:
                other.add(name)
            else:
                assert isinstance(node, ast.Assign)
                found.setdefault(name, ([], blocks))[0].append(node)
    return {name: v for name, v in found.items() if name not in other}


def _psum_list(src: Source, tile: _Tile) -> bool:
    """Whether a folding tile becomes a list of PSUM tiles (module doc): allocated in PSUM by the compiler, not
    passed on, every subscript naming each block by an index."""
    if not tile.allocations or tile.passed:
        return False
    for allocation in tile.allocations:
        assert isinstance(allocation.value, ast.Call)
        buffer = next((k.value for k in allocation.value.keywords if k.arg == "buffer"), None)
        if buffer is None or src.canonical(buffer) != f"{LANGUAGE}.psum":
            return False
    for access in tile.subscripts:
        elts = access.slice.elts if isinstance(access.slice, ast.Tuple) else [access.slice]
        if len(elts) < tile.blocks or any(
            isinstance(e, (ast.Slice, ast.Starred)) for e in elts[: tile.blocks]
        ):
            return False
    return True


def _tile_list(src: Source, call: ast.expr, shape: ast.Tuple, dims: list[str], blocks: int) -> str:
    """The allocation ``call`` of one block's tile (``dims`` past the block dims), in a list per block dim."""
    start, end = src.bounds(call)
    first, last = src.bounds(shape)
    text = src.text[start:first] + f"({', '.join(dims[blocks:])})" + src.text[last:end]
    for count in reversed(dims[:blocks]):
        text = f"[{text} for _ in range({count})]"
    return text


def _list_access(src: Source, node: ast.Subscript, blocks: int) -> str:
    """``t[b0, b1, p, f]`` -> ``t[b0][b1][p, f]`` (``t[b0, b1]`` -> ``t[b0][b1]``)."""
    elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    parts = [src.text_of(e) for e in elts]
    rest = f"[{', '.join(parts[blocks:])}]" if parts[blocks:] else ""
    return src.text_of(node.value) + "".join(f"[{p}]" for p in parts[:blocks]) + rest


def _blocks_left(node: ast.Subscript, blocks: int) -> int:
    """The block dims the view ``node`` of a tile with ``blocks`` of them keeps: those it slices or does not name
    (an index drops its dim); 0, not followed, for one naming the partition dim by an index."""
    elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if len(elts) > blocks and not isinstance(elts[blocks], ast.Slice):
        return 0
    return sum(isinstance(e, ast.Slice) for e in elts[:blocks]) + max(0, blocks - len(elts))


def _access(src: Source, node: ast.Subscript, blocks: int) -> str | None:
    """``t[b.., p, f..]`` -> ``t[p, b.., f..]``; ``t[b..]`` -> ``t[:, b..]``; None for other keys."""
    elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if any(isinstance(e, ast.Constant) and e.value is Ellipsis for e in elts):
        return None
    parts = [src.text_of(e) for e in elts]
    if len(parts) <= blocks:
        return f"{src.text_of(node.value)}[{', '.join([':', *parts])}]"
    return f"{src.text_of(node.value)}[{', '.join([parts[blocks], *parts[:blocks], *parts[blocks + 1 :]])}]"
