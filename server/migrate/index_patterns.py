"""Legacy index tiles of three or more dims -> ``.ap()`` access patterns (deprecations.md §E: ``nl.arange`` index
vectors -> "integer slicing ... or ``.ap()``"; language.md §5.4: element ``[i0, i1, ...]`` of ``t.ap(pattern,
offset)`` is ``t.flat[offset + sum_k i_k * step_k]``, ``pattern = [[step_0, num_0], ...]``).

``i_p = nl.arange(P)[:, None, None]``, ``i_a = nl.arange(A)[None, :, None]``, ``i_b = nl.arange(B)[None, None, :]``
index a tile along the axes of a (P, A, B) grid; ``t[i_p, i_a * B + i_b]`` (the nki-samples transpose tutorial)
reads element ``t[p, a * B + b]`` at grid point (p, a, b). Each index position is affine in the grid indices, so
the flat offset is too: with ``stride_j`` the elements one step of position ``j`` spans (the product of ``t``'s
later dims), grid axis ``k`` steps ``sum_j coefficient_jk * stride_j`` and the constant terms give the offset. The
subscript becomes ``t.ap(pattern=[[step_k, size_k] ...], offset=...)`` (``[...]`` appended where it is written).
The key must name every dim of ``t`` (a shorter key is taken as a full one; the proof checks) and use every grid
axis; for an on-chip tile the first pair must step whole partitions (the 0.7 simulator checks). Two-dim tiles are
``index_tiles``' (slices) unless the subscript transposes them (``out[k + if_out, ip_out]``: the first index
follows the free axis), which no slice gives; definitions are deleted once no use is left, else the use is listed
there.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from nki_studio.migrate.result import PassResult
from nki_studio.migrate.source import LANGUAGE, Source, functions


@dataclass(frozen=True)
class Linear:
    """An affine expression of grid indices: per axis the coefficient terms, the constant terms (source text)."""

    coefficients: dict[int, tuple[str, ...]] = field(default_factory=dict)
    constants: tuple[str, ...] = ()

    def plus(self, other: Linear, sign: str = "") -> Linear:
        merged = dict(self.coefficients)
        for axis, terms in other.coefficients.items():
            merged[axis] = (*merged.get(axis, ()), *(f"{sign}{_wrapped(t)}" if sign else t for t in terms))
        constants = (*self.constants, *(f"{sign}{_wrapped(t)}" if sign else t for t in other.constants))
        return Linear(merged, constants)

    def times(self, factor: str) -> Linear:
        return Linear(
            {a: tuple(_product(t, factor) for t in ts) for a, ts in self.coefficients.items()},
            tuple(_product(t, factor) for t in self.constants),
        )


@dataclass(frozen=True)
class GridTile:
    """A named grid index: its affine form, the grid's rank, and the size along its axis."""

    linear: Linear
    rank: int
    axis: int
    size: str


def _wrapped(text: str) -> str:
    """``text`` as a factor or a negated term: parenthesized when it is a sum (or already negated)."""
    return f"({text})" if " + " in text or " - " in text or text.startswith("-") else text


def _product(term: str, factor: str) -> str:
    if term == "1":
        return factor
    sums = (" + ", " - ")
    left, right = (f"({t})" if any(s in t for s in sums) else t for t in (term, factor))
    return term if factor == "1" else f"{left} * {right}"


def sum_of(terms: list[str]) -> str:
    text = " + ".join(terms) if terms else "0"
    return text.replace("+ -", "- ")


_FIELDS = "pxyz"  # an nl.mgrid object's fields: .p the partition axis, then the free axes in order


class Grid:
    """The grid index tiles (``nl.arange(n)[None, :, None]`` and offsets of them, of ``min_rank`` dims or more) one
    function defines."""

    def __init__(self, src: Source, func: ast.AST, min_rank: int = 3) -> None:
        self.src = src
        self.min_rank = min_rank
        self.tiles: dict[str, GridTile] = {}
        self.definitions: dict[str, list[ast.Assign]] = {}
        assigned: dict[str, int] = {}
        for node in ast.walk(func):
            for target in _targets(node):
                assigned[target] = assigned.get(target, 0) + 1
        self.grids: dict[str, list[GridTile]] = {}  # g = nl.mgrid[...]: g.p, g.x, g.y, g.z
        self.derived: dict[str, ast.expr] = {}  # index = 3 * g.y + g.z: names bound once to affine forms
        for node in ast.walk(func):
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
                continue
            bound, grid = node.targets[0], self._mgrid(node.value)
            if isinstance(bound, ast.Name) and assigned.get(bound.id) == 1:
                tile = self._definition(node.value)
                if tile is not None:
                    self.tiles[bound.id], self.definitions[bound.id] = tile, [node]
                elif grid is not None and len(grid) <= len(_FIELDS):
                    self.grids[bound.id], self.definitions[bound.id] = grid, [node]
        self._unpacked(func, assigned)

        changed = True
        while changed:
            changed = False
            for node in ast.walk(func):
                if (
                    isinstance(node, ast.Assign)
                    and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)
                    and assigned.get(name := node.targets[0].id) == 1
                    and name not in self.tiles
                    and name not in self.grids
                    and name not in self.derived
                    and self.uses(node.value)
                    and self.linear(node.value, {}) is not None
                ):
                    self.derived[name], self.definitions[name] = node.value, [node]
                    changed = True

    def _unpacked(self, func: ast.AST, assigned: dict[str, int]) -> None:
        """``i0, i1, i2 = nl.mgrid[...]``: each name a tile. A name bound by several such statements is one when
        every binding gives the same tile (nki-samples' double_row_matmul rebinds ``i_k`` to the same grid axis in
        one loop body), so whichever reaches a use, it reads the same indices."""
        bindings: dict[str, list[tuple[GridTile, ast.Assign]]] = {}
        statements = []
        for node in ast.walk(func):
            grid = (
                self._mgrid(node.value) if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
            )
            target = node.targets[0] if isinstance(node, ast.Assign) else None
            if not (isinstance(target, ast.Tuple) and grid is not None and len(grid) == len(target.elts)):
                continue
            if all(isinstance(e, ast.Name) for e in target.elts):
                assert isinstance(node, ast.Assign)
                statements.append([e.id for e in target.elts if isinstance(e, ast.Name)])
                for e, tile in zip(target.elts, grid, strict=True):
                    assert isinstance(e, ast.Name)
                    bindings.setdefault(e.id, []).append((tile, node))
        same = {
            name
            for name, found in bindings.items()
            if len(found) == assigned.get(name) and all(t == found[0][0] for t, _ in found)
        }
        for names in statements:
            if set(names) <= same:
                for name in names:
                    self.tiles[name] = bindings[name][0][0]
                    self.definitions[name] = [d for _, d in bindings[name]]

    def _mgrid(self, node: ast.expr) -> list[GridTile] | None:
        """``nl.mgrid[a:b, ...]`` of ``min_rank`` dims or more: one tile per axis (the open grid, as the legacy
        simulator reads it)."""
        if not (isinstance(node, ast.Subscript) and self.src.canonical(node.value) == f"{LANGUAGE}.mgrid"):
            return None
        dims = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(dims) < self.min_rank or not all(
            isinstance(d, ast.Slice) and d.upper is not None and d.step is None for d in dims
        ):
            return None
        tiles = []
        for axis, d in enumerate(dims):
            assert isinstance(d, ast.Slice) and d.upper is not None
            start = self.src.text_of(d.lower) if d.lower is not None else "0"
            upper = self.src.text_of(d.upper)
            size = upper if start == "0" else f"{_wrapped(upper)} - {_wrapped(start)}"
            tiles.append(
                GridTile(Linear({axis: ("1",)}, (start,) if start != "0" else ()), len(dims), axis, size)
            )
        return tiles

    def _named(self, node: ast.AST) -> GridTile | None:
        """The grid tile a name (``i_p``) or a grid's field (``g.x``) is."""
        if isinstance(node, ast.Name):
            return self.tiles.get(node.id)
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in self.grids
        ):
            index = _FIELDS.find(node.attr)
            grid = self.grids[node.value.id]
            return grid[index] if 0 <= index < len(grid) else None
        return None

    def _arange(self, node: ast.expr) -> GridTile | None:
        """``nl.arange(n)[None, :, None]`` / ``nl.arange(a, b)[...]`` with one ``:`` among three or more dims."""
        if not (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Call)
            and self.src.canonical(node.value.func) == f"{LANGUAGE}.arange"
            and not node.value.keywords
            and isinstance(node.slice, ast.Tuple)
            and len(node.slice.elts) >= self.min_rank
        ):
            return None
        elts = node.slice.elts
        full = [
            i for i, e in enumerate(elts) if isinstance(e, ast.Slice) and not (e.lower or e.upper or e.step)
        ]
        nones = [i for i, e in enumerate(elts) if isinstance(e, ast.Constant) and e.value is None]
        args = [self.src.text_of(a) for a in node.value.args]
        if len(full) != 1 or len(nones) != len(elts) - 1 or len(args) not in (1, 2):
            return None
        start, size = (
            ("0", args[0]) if len(args) == 1 else (args[0], f"{_wrapped(args[1])} - {_wrapped(args[0])}")
        )
        linear = Linear({full[0]: ("1",)}, (start,) if start != "0" else ())
        return GridTile(linear, len(elts), full[0], size)

    def _definition(self, node: ast.expr) -> GridTile | None:
        """A grid tile, or one (or a grid tile's name) plus a constant (``nl.arange(n)[:, None, None] + start``)."""
        tile = self._arange(node)
        if tile is not None:
            return tile
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            for one, other in ((node.left, node.right), (node.right, node.left)):
                tile = self._named(one) or self._arange(one)
                if tile is not None and not self.uses(other):
                    constant = Linear({}, (self.src.text_of(other),))
                    return GridTile(tile.linear.plus(constant), tile.rank, tile.axis, tile.size)
        return None

    def uses(self, node: ast.AST) -> bool:
        """Whether a grid tile (by name or inline) appears in ``node``."""
        return any(
            (isinstance(n, ast.Name) and (n.id in self.tiles or n.id in self.grids or n.id in self.derived))
            or (isinstance(n, ast.expr) and self._arange(n))
            for n in ast.walk(node)
        )

    def linear(self, node: ast.expr, found: dict[str, GridTile]) -> Linear | None:
        """``node`` as an affine form of the grid indices (the tiles met go to ``found``); None when it is not."""
        if not self.uses(node):
            return Linear({}, (self.src.text_of(node),))
        if isinstance(node, ast.Name) and node.id in self.derived:
            return self.linear(self.derived[node.id], found)
        tile = self._named(node) or self._arange(node)
        if tile is not None:
            found[self.src.text_of(node)] = tile
            return tile.linear
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            left, right = self.linear(node.left, found), self.linear(node.right, found)
            if left is None or right is None:
                return None
            return left.plus(right, "-" if isinstance(node.op, ast.Sub) else "")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for one, other in ((node.left, node.right), (node.right, node.left)):
                if not self.uses(other):
                    form = self.linear(one, found)
                    return form.times(self.src.text_of(other)) if form is not None else None
        return None


def _targets(node: ast.AST) -> list[str]:
    """The names a statement binds."""
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.NamedExpr)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [
            n.id
            for t in targets
            for n in ast.walk(t)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        ]
    return []


def _pattern(src: Source, grid: Grid, node: ast.Subscript) -> str | None:
    """The ``.ap()`` form of ``node`` (a subscript of a name by grid tiles), or None."""
    if not isinstance(node.value, ast.Name):
        return None
    key = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    found: dict[str, GridTile] = {}
    forms = [grid.linear(e, found) for e in key]
    ranks = {t.rank for t in found.values()}
    sizes: dict[int, set[str]] = {}
    for t in found.values():
        sizes.setdefault(t.axis, set()).add(t.size)
    if any(f is None for f in forms) or len(ranks) != 1 or any(len(s) != 1 for s in sizes.values()):
        return None
    rank = ranks.pop()
    if set(sizes) != set(range(rank)):
        return None  # a grid axis no index uses: the legacy result keeps a size-1 dim there
    base = node.value.id
    strides = [_product_of([f"{base}.shape[{k}]" for k in range(j + 1, len(key))]) for j in range(len(key))]
    steps: list[list[str]] = [[] for _ in range(rank)]
    constants: list[str] = []
    for form, stride in zip(forms, strides, strict=True):
        assert form is not None
        for axis, terms in form.coefficients.items():
            steps[axis] += [_product(t, stride) for t in terms]
        constants += [_product(t, stride) for t in form.constants]
    pairs = ", ".join(f"[{sum_of(steps[k])}, {sizes[k].pop()}]" for k in range(rank))
    offset = f", offset={sum_of(constants)}" if constants else ""
    view = f"{base}.ap(pattern=[{pairs}]{offset})"
    return f"{view}[...]" if isinstance(node.ctx, ast.Store) else view


def _product_of(factors: list[str]) -> str:
    return " * ".join(factors) if factors else "1"


def _rewrites(src: Source) -> tuple[list[tuple[ast.Subscript, str]], list[ast.Assign]]:
    """Each subscript by grid tiles with its ``.ap()`` form, and the definitions no other use is left of."""
    subscripts: list[tuple[ast.Subscript, str]] = []
    deleted: list[ast.Assign] = []
    for func in functions(src.tree):
        grid, flat = Grid(src, func), Grid(src, func, min_rank=2)
        if not (flat.tiles or flat.grids):
            continue
        rewritten: set[int] = set()
        transposed: set[str] = set()  # the two-dim tiles of the transposed subscripts rewritten
        for node in ast.walk(func):
            if not isinstance(node, ast.Subscript) or flat._arange(node) is not None:
                continue
            new = _pattern(src, grid, node) if grid.uses(node.slice) else None
            if new is None and flat.uses(node.slice) and _transposed(flat, node):
                new = _pattern(src, flat, node)
                transposed |= (
                    {n.id for n in ast.walk(node.slice) if isinstance(n, ast.Name)} if new else set()
                )
            if new is not None:
                subscripts.append((node, new))
                rewritten.update(id(n) for n in ast.walk(node.slice))
        definitions = {
            **grid.definitions,
            **{n: flat.definitions[n] for n in transposed & set(flat.definitions)},
        }
        # a statement defining several tiles (i0, i1 = nl.mgrid[...]) goes once none of them is used; a use in a
        # definition that goes (index = 3 * g.y + g.z) is none
        statements = {id(d): d for ds in definitions.values() for d in ds}
        unused: set[int] = set()
        while True:
            inside = {id(n) for key in unused for n in ast.walk(statements[key])}
            left = {
                n.id
                for n in ast.walk(func)
                if isinstance(n, ast.Name)
                and isinstance(n.ctx, ast.Load)
                and id(n) not in rewritten
                and id(n) not in inside
            }
            now = {id(d) for name, ds in definitions.items() if name not in left for d in ds}
            now -= {id(d) for name, ds in definitions.items() if name in left for d in ds}
            if now == unused:
                break
            unused = now
        deleted += [d for key, d in statements.items() if key in unused and src.delete_lines(d)]
    return subscripts, deleted


def _transposed(grid: Grid, node: ast.Subscript) -> bool:
    """A subscript by two-dim tiles whose first tiled index follows the free axis and the second the partition
    axis (``out[b, k + if_out, ip_out]``, nki-samples' SD attention): no slice gives it, an access pattern does (the
    others are ``index_tiles``' slices)."""
    key = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    found: dict[str, GridTile] = {}
    forms = [grid.linear(e, found) for e in key]
    return (
        {t.rank for t in found.values()} == {2}
        and all(f is not None for f in forms)
        and [sorted(f.coefficients) for f in forms if f is not None and f.coefficients] == [[1], [0]]
    )


def run(src: Source) -> PassResult:
    """Rewrite the subscripts by grid tiles into ``.ap()`` views; delete the definitions left unused."""
    out = PassResult()
    subscripts, deleted = _rewrites(src)
    for node, new in subscripts:
        out.change(src.replace(node, new), node.lineno, "index tiles", ".ap() access pattern")
    for stmt in deleted:
        edit = src.delete_lines(stmt)
        assert edit is not None
        out.change(edit, stmt.lineno, "index tile definition", "deleted (every use is an access pattern now)")
    return out


def rewritten_subscripts(src: Source) -> set[int]:
    """The nodes (by ``id``) of the subscripts this pass rewrites (``index_tiles`` leaves them and their tiles)."""
    return {id(n) for node, _ in _rewrites(src)[0] for n in ast.walk(node)}


def rewritten_definitions(src: Source) -> set[int]:
    """The nodes (by ``id``) of the grid tile definitions this pass deletes (``index_tiles`` does not list them)."""
    return {id(n) for stmt in _rewrites(src)[1] for n in ast.walk(stmt)}


def pattern_ranks(src: Source) -> dict[int, int]:
    """The rank of the ``.ap()`` view (its grid's) each subscript this pass rewrites becomes, by the subscript's
    ``id``."""
    ranks = {}
    for node, new in _rewrites(src)[0]:
        view = ast.parse(new.removesuffix("[...]"), mode="eval").body
        assert isinstance(view, ast.Call)
        pattern = next(k.value for k in view.keywords if k.arg == "pattern")
        assert isinstance(pattern, ast.List)
        ranks[id(node)] = len(pattern.elts)
    return ranks
