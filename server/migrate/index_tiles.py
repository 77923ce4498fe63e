"""Legacy index tiles -> slices (deprecations.md §E: ``nl.arange`` index vectors and ``nl.mgrid`` -> integer
slicing): ``i_p = base + nl.arange(128)[:, None]`` and ``i_f = nl.arange(512)[None, :]`` make ``t[i_p, i_f]``
``t[base:base + 128, 0:512]``; ``i_p, i_f = nl.mgrid[0:128, 0:512]`` and ``ix = nl.mgrid[...]`` (``ix.p``,
``ix.x``) likewise, and N-dimensional tiles (``nl.arange(4)[None, :, None]``). An index position may add an offset
to a tile (``t[k * 128 + i_p, i_f]``). A name bound once to something else computed from tiles (a mask
``valid = i_p < n``, a flat offset) is *derived*: masks are read through it, subscripts using it are no slices.

A subscript is rewritten when every tile in it is a plain offset of one index tile and the tiles' axes are in
order (partition tile before free tile; the result's layout then matches the legacy one, which the proof checks).
A definition is deleted once no use of its name is left; a use that is not a plain slice (an index tile scaled,
transposed, or in a ``mask=``) keeps it, and is listed with the recipe.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from nki_studio.core.findings import Span, TextEdit
from nki_studio.migrate import index_patterns
from nki_studio.migrate.operators import Tiles
from nki_studio.migrate.result import ManualStep, PassResult
from nki_studio.migrate.scalar_masks import Scalars, conjuncts_of
from nki_studio.migrate.source import LANGUAGE, Source, functions

_SIMPLE = (ast.Name, ast.Attribute, ast.Constant, ast.Call, ast.Subscript)


@dataclass(frozen=True)
class _Tile:
    """``offset + start + arange(size)`` along ``axis`` (0: partition, 1: free); texts are source text."""

    axis: int
    start: str
    size: str
    offset: tuple[str, ...] = ()

    def shifted(self, text: str) -> _Tile:
        return _Tile(self.axis, self.start, self.size, (*self.offset, text))

    @property
    def low(self) -> str:
        """The first index (source text; ``"0"`` when there is no offset)."""
        return " + ".join([*self.offset, *([self.start] if self.start != "0" else [])]) or "0"

    def as_slice(self, bound: str | None = None) -> str:
        """``low:high``; ``bound``: a mask's exclusive upper bound on the index (``low:min(high, bound)``)."""
        low = self.low
        high = f"{low} + {self.size}" if low != "0" else self.size
        return f"{low}:{high}" if bound is None else f"{low}:min({high}, {bound})"

    def extent(self, bound: str) -> str:
        """How many of the tile's indices are below ``bound`` (the length of ``as_slice(bound)``)."""
        low = self.low
        if low == "0":
            return f"min({self.size}, {bound})"
        return f"min({low} + {self.size}, {bound}) - {_atom(low)}"


def _atom(text: str) -> str:
    """``text`` parenthesised unless it is a name or a number."""
    return text if text.isidentifier() or text.isdigit() else f"({text})"


def _term(src: Source, node: ast.expr) -> str:
    text = src.text_of(node)
    simple = isinstance(node, _SIMPLE) or (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod))
    )
    return text if simple else f"({text})"


def _range(src: Source, lower: ast.expr | None, upper: ast.expr | None) -> tuple[str, str] | None:
    if upper is None:
        return None
    if lower is None or (isinstance(lower, ast.Constant) and lower.value == 0):
        return "0", src.text_of(upper)
    lo = src.text_of(lower)
    if isinstance(lower, ast.Constant) and isinstance(upper, ast.Constant):
        if isinstance(lower.value, int) and isinstance(upper.value, int):
            return lo, str(upper.value - lower.value)
    return lo, f"{_term(src, upper)} - {_term(src, lower)}"


class _IndexTiles:
    """The index tiles defined in one function: names, mgrid objects, and their defining statements."""

    def __init__(self, src: Source, func: ast.AST) -> None:
        self.src = src
        self.names: dict[str, _Tile] = {}
        self.grids: dict[str, tuple[_Tile, _Tile]] = {}
        self.definitions: dict[str, list[ast.stmt]] = {}
        self.derived: dict[str, ast.Assign] = {}
        for node in ast.walk(func):
            if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                continue
            target = node.targets[0]
            if isinstance(target, ast.Name):
                tile = self.tile(node.value)
                grid = self._mgrid(node.value)
                if tile is not None:
                    self.names[target.id] = tile
                elif grid is not None and len(grid) == 2:
                    self.grids[target.id] = (grid[0], grid[1])
                else:
                    continue
                self.definitions.setdefault(target.id, []).append(node)
            elif isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
                grid = self._mgrid(node.value)
                if grid is not None and len(grid) == len(target.elts):
                    for e, t in zip(target.elts, grid, strict=True):
                        assert isinstance(e, ast.Name)
                        self.names[e.id] = t
                        self.definitions.setdefault(e.id, []).append(node)
        self._derive(func)
        # tiles of values (computed, loaded) rather than of indices: one in a subscript's key is a gather
        self.data = Tiles(src, func).names - {*self.names, *self.grids, *self.derived}

    def _derive(self, func: ast.AST) -> None:
        """Names bound once to a value computed from index tiles that is not one (``valid = i_p < n``, ``offset =
        512 * ix + iy``, ``m = helper(i_p)``): a ``mask=`` naming one is read through it, and a subscript using
        one is not a plain slice."""
        stores: dict[str, int] = {}
        for n in ast.walk(func):
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                stores[n.id] = stores.get(n.id, 0) + 1
            elif isinstance(n, ast.arg):
                stores[n.arg] = 2  # a parameter: bound by every call
        single = [
            node
            for node in ast.walk(func)
            if isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and stores.get(node.targets[0].id) == 1
            and node.targets[0].id not in self.names
        ]
        changed = True
        while changed:
            changed = False
            for node in single:
                name = node.targets[0]
                assert isinstance(name, ast.Name)
                if name.id not in self.derived and self.uses_tiles(node.value):
                    self.derived[name.id] = node
                    changed = True

    def conditions(self, mask: ast.expr) -> list[ast.expr]:
        """The ``&``-joined conditions of a mask, mask names replaced by the conditions they are bound to."""
        return [
            c
            for part in conjuncts_of(mask)
            for c in (
                self.conditions(self.derived[part.id].value)
                if isinstance(part, ast.Name) and part.id in self.derived
                else [part]
            )
        ]

    def _is(self, node: ast.expr, name: str) -> bool:
        return self.src.canonical(node) == f"{LANGUAGE}.{name}"

    def _mgrid(self, node: ast.expr) -> list[_Tile] | None:
        if not isinstance(node, ast.Subscript) or not self._is(node.value, "mgrid"):
            return None
        dims = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        out = []
        for axis, d in enumerate(dims):
            r = _range(self.src, d.lower, d.upper) if isinstance(d, ast.Slice) and d.step is None else None
            if r is None:
                return None
            out.append(_Tile(axis, *r))
        return out

    def tile(self, node: ast.expr) -> _Tile | None:
        """The index tile ``node`` evaluates to (None: not a plain offset of one index tile)."""
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in self.grids
        ):
            return {"p": self.grids[node.value.id][0], "x": self.grids[node.value.id][1]}.get(node.attr)
        if isinstance(node, ast.Call) and self._is(node.func, "arange") and not node.keywords:
            return self._arange(node, 0)
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Call)
            and self._is(node.value.func, "arange")
        ):
            axis = _expand_axis(node.slice)
            return self._arange(node.value, axis) if axis is not None else None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.tile(node.left), self.tile(node.right)
            if left is not None and right is None and not self.uses_tiles(node.right):
                return left.shifted(_term(self.src, node.right))
            if right is not None and left is None and not self.uses_tiles(node.left):
                return right.shifted(_term(self.src, node.left))
        return None

    def _arange(self, call: ast.Call, axis: int) -> _Tile | None:
        args = call.args
        if len(args) == 1:
            r = _range(self.src, None, args[0])
        elif len(args) == 2:
            r = _range(self.src, args[0], args[1])
        else:
            return None
        return _Tile(axis, *r) if r is not None else None

    def uses_tiles(self, node: ast.AST) -> bool:
        """Whether an index tile appears anywhere in ``node``."""
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and (n.id in self.names or n.id in self.grids or n.id in self.derived):
                return True
            if isinstance(n, ast.Call) and (self._is(n.func, "arange") or self._is(n.func, "mgrid")):
                return True
        return False


def index_tile_names(src: Source, func: ast.AST) -> set[str]:
    """The names one function binds to index tiles (plain offsets of one, mgrid objects, and names derived from
    them)."""
    tiles = _IndexTiles(src, func)
    return {*tiles.names, *tiles.grids, *tiles.derived}


def _expand_axis(key: ast.expr) -> int | None:
    """The axis of one ``:`` among ``None``s: ``[:, None]`` -> 0, ``[None, :]`` -> 1, ``[None, None, :]`` -> 2
    (an N-dimensional index tile varies along that axis only)."""
    if not isinstance(key, ast.Tuple) or len(key.elts) < 2:
        return None
    full = [
        i for i, e in enumerate(key.elts) if isinstance(e, ast.Slice) and not (e.lower or e.upper or e.step)
    ]
    nones = [e for e in key.elts if isinstance(e, ast.Constant) and e.value is None]
    return full[0] if len(full) == 1 and len(nones) == len(key.elts) - 1 else None


def run(src: Source) -> PassResult:
    """Rewrite the subscripts with index tiles into slices; delete definitions left unused."""
    out = PassResult()
    understood: set[int] = set()  # nodes of recognised definitions and of rewritten subscripts
    patterned = index_patterns.rewritten_subscripts(src)  # what no slice gives, that later pass rewrites
    for func in functions(src.tree):
        tiles = _IndexTiles(src, func)
        understood.update(id(n) for stmts in tiles.definitions.values() for s in stmts for n in ast.walk(s))
        rewritten: set[int] = set()
        operands = _MaskOperands(src, func, tiles)
        targets = {  # t[i_p, i_f] = op(..., mask=m) writes only where m holds: its target is bounded too
            id(n.value): n.targets[0]
            for n in ast.walk(func)
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Subscript)
        }
        for node in ast.walk(func):
            if isinstance(node, ast.Call):
                _mask(src, tiles, operands, node, out, rewritten, targets.get(id(node)))
            elif isinstance(node, ast.Subscript) and id(node) not in rewritten:
                _operand_mask(src, tiles, node, out, rewritten)
        _delete_mask_names(src, tiles, func, rewritten, out)
        if not tiles.names and not tiles.grids:
            continue
        for node in ast.walk(func):
            if id(node) in rewritten:
                continue
            if isinstance(node, ast.Subscript) and tiles.uses_tiles(node.slice) and not _defines(tiles, node):
                new = _rewrite(src, tiles, node)
                if new is None:
                    continue
                out.change(src.replace(node, new), node.lineno, "index tiles", "slices")
                rewritten.update(id(n) for n in ast.walk(node.slice))
        understood.update(rewritten)
        _delete_unused(src, tiles, func, rewritten, patterned, out)
    _unrecognised(src, understood | index_patterns.rewritten_definitions(src), out)
    return out


def _operand_mask(
    src: Source, tiles: _IndexTiles, node: ast.Subscript, out: PassResult, rewritten: set[int]
) -> None:
    """``t[i_p, k + i_f][mask]``, an operand view subscripted by a mask of its own (nki-samples' rmsnorm_quant bounds
    a matmul's moving operand so, ``mask`` bound to ``k + i_f < n``) -> the view's slices bounded by the mask,
    ``t[0:1, k:min(k + F, n)]``: the elements it excludes are not read, as a ``mask=`` reads none of them (inferred
    for the subscript form, which no page documents; the legacy simulator runs only masks holding on the whole
    view, so the proof covers that case). Other masks are left (their index tiles listed)."""
    inner = node.value
    if not (
        isinstance(inner, ast.Subscript) and tiles.uses_tiles(node.slice) and tiles.uses_tiles(inner.slice)
    ):
        return
    bounds = _bounds(src, tiles, tiles.conditions(node.slice))
    new = None if isinstance(bounds, str) else _rewrite(src, tiles, inner, bounds)
    if new is None:
        return
    out.change(src.replace(node, new), node.lineno, "operand mask", "slices bounded by the mask")
    rewritten.update(id(n) for n in ast.walk(node))


def _delete_mask_names(
    src: Source, tiles: _IndexTiles, func: ast.AST, rewritten: set[int], out: PassResult
) -> None:
    """Delete a mask name's definition once every mask naming it is a bound (its index tiles may go then); the
    same for any derived name whose uses all went with rewritten masks."""
    left = dict(tiles.derived)
    while True:  # a name used only by another one deleted goes next
        gone = [
            (name, stmt)
            for name, stmt in left.items()
            if all(
                id(n) in rewritten
                for n in ast.walk(func)
                if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
            )
            and any(isinstance(n, ast.Name) and n.id == name and id(n) in rewritten for n in ast.walk(func))
        ]
        edits = [(name, stmt, src.delete_lines(stmt)) for name, stmt in gone]
        if not any(edit is not None for _, _, edit in edits):
            return
        for name, stmt, edit in edits:
            del left[name]
            if edit is not None:
                out.change(edit, stmt.lineno, "mask definition", "deleted (its masks are bounded slices now)")
                rewritten.update(id(n) for n in ast.walk(stmt))


def _unrecognised(src: Source, understood: set[int], out: PassResult) -> None:
    """Index tiles of a form this pass does not know (three-dimensional ``[:, None, None]``, ``nl.arange`` used
    as a value): listed, since 0.7 has no ``nl.arange``/``nl.mgrid``."""
    for node in ast.walk(src.tree):
        func = (
            node.func
            if isinstance(node, ast.Call)
            else node.value
            if isinstance(node, ast.Subscript)
            else None
        )
        name = src.canonical(func) if func is not None else None
        if name in (f"{LANGUAGE}.arange", f"{LANGUAGE}.mgrid") and id(node) not in understood:
            if isinstance(node, ast.Subscript) and name.endswith("arange"):
                continue  # nl.arange(n)[...]: its call is the node reported
            out.manual.append(
                ManualStep(
                    node.lineno,  # type: ignore[attr-defined]
                    f"nl.{name.rsplit('.', 1)[1]}",
                    "an index tile of a form the rewrite does not handle: write the access as slices / "
                    "nl.ds(start, size), or .ap(pattern) for strided and transposed access",
                )
            )


def _defines(tiles: _IndexTiles, node: ast.Subscript) -> bool:
    """``nl.arange(n)[:, None]`` / ``nl.mgrid[...]`` themselves (definitions, not uses)."""
    return tiles.src.canonical(node.value) == f"{LANGUAGE}.mgrid" or (
        isinstance(node.value, ast.Call) and tiles.src.canonical(node.value.func) == f"{LANGUAGE}.arange"
    )


_RECIPE = "bound the slices instead (t[p0:min(p0 + 128, n)]) and slice the other operands to the same extent"


def _bounds(src: Source, tiles: _IndexTiles, conditions: list[ast.expr]) -> dict[_Tile, str] | str:
    """``T < B`` / ``T <= B`` conditions: each index tile's exclusive upper bound; for another condition, why it
    cannot become a slice (the manual step's recipe)."""
    found: dict[_Tile, str] = {}
    for mask in conditions:
        if not (isinstance(mask, ast.Compare) and len(mask.ops) == 1):
            return _why_not(src, tiles, mask)
        tile, bound = tiles.tile(mask.left), mask.comparators[0]
        if not isinstance(mask.ops[0], (ast.Lt, ast.LtE)) or tile is None or tiles.uses_tiles(bound):
            return _why_not(src, tiles, mask)
        if tile in found:
            return f"two bounds on one index tile: keep the smaller and {_RECIPE}"
        text = _term(src, bound)
        found[tile] = text if isinstance(mask.ops[0], ast.Lt) else f"{text} + 1"
    return found


def _why_not(src: Source, tiles: _IndexTiles, condition: ast.expr) -> str:
    """The recipe for a mask condition that is not ``index tile < bound``."""
    text = " ".join(src.text_of(condition).split())
    calls = [n for n in ast.walk(condition) if isinstance(n, ast.Call) and tiles.tile(n) is None]
    if calls:
        return (
            f"the mask comes from a call (`{' '.join(src.text_of(calls[0]).split())}`): which index it bounds is not "
            "visible here; "
            f"write it as `index tile < bound` (then migrate again) or {_RECIPE}"
        )
    compare = condition if isinstance(condition, ast.Compare) and len(condition.ops) == 1 else None
    sides = [compare.left, compare.comparators[0]] if compare is not None else []
    if sum(1 for side in sides if tiles.uses_tiles(side)) == 2:
        return (
            f"`{text}` compares index tiles with each other (a triangular region, e.g. causal attention): no "
            "slice expresses it; compute it with nisa.affine_select(dst=..., pattern=..., channel_multiplier=..., "
            "on_true_tile=..., on_false_value=...) by hand"
        )
    if any(tiles.uses_tiles(side) and tiles.tile(side) is None for side in sides):
        return (
            f"`{text}` bounds a combination of index tiles (a flat offset such as `512 * ix + iy < n`): it cuts "
            "whole rows plus part of one, and 0.7 tiles are rectangular with static sizes: write the whole rows as "
            "one bounded slice (t[0:min(128, (n - base) // 512)]) and the partial row as a second one-row "
            "instruction (t[r:r + 1, 0:(n - base) % 512]), or pad the tensors"
        )
    return f"only `index tile < bound` (or <=) masks are rewritten (`{text}` is not one): {_RECIPE}"


class _MaskOperands:
    """Which names of one function hold full tiles that a masked instruction must slice to its bound.

    A name assigned from a masked call, or computed from such a name, already has the bounded extent once the
    masks are slices (``x = nl.load(a[i_p], mask=...)`` loads the short tile); any other tile name (a
    broadcast weight, a constant tile) still has the full extent and is sliced where a mask meets it. Inferred,
    not derived from the docs: an over-approximation here leaves an operand unsliced, which the proof reports.
    """

    def __init__(self, src: Source, func: ast.AST, index_tiles: _IndexTiles) -> None:
        self.scalars = Scalars(src, func)
        self.tiles = self.scalars.tiles
        self.views = _views(func, index_tiles)
        self.bounded: set[str] = set()
        changed = True
        while changed:
            changed = False
            for node in ast.walk(func):
                if not isinstance(node, ast.Assign) or not self._bounded(node.value):
                    continue
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id not in self.bounded:
                        self.bounded.add(target.id)
                        changed = True

    def _bounded(self, value: ast.expr) -> bool:
        return any(
            (isinstance(n, ast.Name) and n.id in self.bounded)
            or (isinstance(n, ast.Call) and any(k.arg == "mask" for k in n.keywords))
            for n in ast.walk(value)
        )

    def full(self, node: ast.expr) -> bool:
        """Whether ``node`` is a name of a tile of the full (unmasked) extent."""
        return (
            isinstance(node, ast.Name)
            and node.id not in self.bounded | set(self.views)
            and self.tiles.is_tile(node)
        )


def _views(func: ast.AST, tiles: _IndexTiles) -> dict[str, ast.Subscript]:
    """Names bound once to a subscript by index tiles and read once (``addr = x[b, rows, i_f]`` then
    ``nl.load(addr, mask=m)``): a mask on the call reading the name bounds the subscript where it is written."""
    stores: dict[str, list[ast.AST]] = {}
    loads: dict[str, int] = {}
    for n in ast.walk(func):
        if isinstance(n, ast.Name):
            if isinstance(n.ctx, ast.Load):
                loads[n.id] = loads.get(n.id, 0) + 1
            else:
                stores.setdefault(n.id, []).append(n)
    return {
        node.targets[0].id: node.value
        for node in ast.walk(func)
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Subscript)
        and (tiles.uses_tiles(node.value.slice) or _gathered(tiles, node.value) is not None)
        and len(stores.get(node.targets[0].id, [])) == 1
        and loads.get(node.targets[0].id) == 1
    }


def _full_slice(node: ast.Name, bounds: dict[_Tile, str]) -> str:
    """``name[0:extent]`` (partition bound) / ``name[:, 0:extent]`` (free bound) / both."""
    extents = {tile.axis: tile.extent(bound) for tile, bound in bounds.items()}
    parts = [f"0:{extents[axis]}" if axis in extents else ":" for axis in range(max(extents) + 1)]
    return f"{node.id}[{', '.join(parts)}]"


def _mask(
    src: Source,
    tiles: _IndexTiles,
    operand_tiles: _MaskOperands,
    call: ast.Call,
    out: PassResult,
    rewritten: set[int],
    target: ast.expr | None = None,
) -> None:
    """``mask=`` -> bounded slices (deprecations.md §E: "compute in-bounds slices with ``min()``"): each subscript
    of the call indexed by a masked tile stops at the bound, each explicit slice of an operand on a masked axis is
    cut to the same extent (its slice positions in order are the mask's axes: ``t[b, :, 0:k]`` has axes 0 and 1),
    every other operand that is a full-extent tile is sliced to the same extent, and the mask goes. In the legacy
    API the masked-off elements were neither read nor written; here the tiles are that much shorter (a partial
    last tile is a smaller tile whose size 0.7 still knows at trace time: the bounds are Python values there), so
    what the call computes on the elements kept is unchanged (the proof checks the kernel's outputs). A mask named
    (``valid = i_p < n``) is read through its name. Conditions that do not depend on the element (``&``-joined
    with the bounds, or alone) stay in the mask for ``scalar_masks``."""
    keyword = next((k for k in call.keywords if k.arg == "mask"), None)
    if keyword is None:
        return
    conjuncts = tiles.conditions(keyword.value)
    kept = [c for c in conjuncts if operand_tiles.scalars.scalar(c)]
    if len(kept) == len(conjuncts):
        return  # no index tile in it: scalar_masks' to rewrite
    bounds = _bounds(src, tiles, [c for c in conjuncts if not any(c is k for k in kept)])
    operands = [*call.args, *(k.value for k in call.keywords if k is not keyword)]
    held = [
        operand_tiles.views[o.id] for o in operands if isinstance(o, ast.Name) and o.id in operand_tiles.views
    ]
    subscripts = [
        n
        for o in [*operands, *held, *([target] if target is not None else [])]
        for n in ast.walk(o)
        if isinstance(n, ast.Subscript) and (tiles.uses_tiles(n.slice) or _gathered(tiles, n) is not None)
    ]
    sliced = [
        n for o in operands for n in ast.walk(o) if isinstance(n, ast.Subscript) and _explicit(tiles, n)
    ]
    reason = bounds if isinstance(bounds, str) else None
    if isinstance(bounds, dict):
        news = [_rewrite(src, tiles, n, bounds) for n in subscripts]
        cuts = [_cut(src, n, bounds) for n in sliced]
        applied = {
            t.axis for n in subscripts for e in _elements(n) if (t := tiles.tile(e)) and _bound_of(t, bounds)
        }
        applied.update(0 for n in subscripts if _gathered(tiles, n) is not None)
        applied.update(axis for cut in cuts if cut is not None for axis in cut[1])
        if any(operand_tiles.full(o) or _short(operand_tiles, o) for o in operands):
            applied.update(t.axis for t in bounds)
        if any(new is None for new in news) or any(cut is None for cut in cuts):
            reason = f"an operand is accessed other than by plain slices or offset index tiles: {_RECIPE}"
        elif not {t.axis for t in bounds} <= applied:
            reason = (
                f"the mask's index tiles index none of the call's operands on the axis they bound: {_RECIPE}"
            )
    cut = src.keyword_cut(call, keyword)
    if reason is not None or cut is None or not isinstance(bounds, dict):
        out.manual.append(ManualStep(call.lineno, "mask=", f"masks are gone: {reason or _RECIPE}"))
        return
    for node, new in zip(subscripts, news, strict=True):
        assert new is not None
        out.change(src.replace(node, new), node.lineno, "mask", "bounded slice")
        rewritten.update(id(n) for n in ast.walk(node))
    for node, sliced_cut in zip(sliced, cuts, strict=True):
        assert sliced_cut is not None
        if sliced_cut[1]:
            out.change(src.replace(node, sliced_cut[0]), node.lineno, "mask", "bounded slice")
    for operand in operands:
        if bounds and operand_tiles.full(operand):
            assert isinstance(operand, ast.Name)
            out.change(
                src.replace(operand, _full_slice(operand, bounds)), operand.lineno, "mask", "operand sliced"
            )
    if kept:
        scalar = " & ".join(_term(src, c) for c in kept)
        out.change(src.replace(keyword.value, scalar), keyword.lineno, "mask", "bounds out of the mask")
    else:
        out.change(_edit(src, *cut), keyword.lineno, "mask", "removed")
    rewritten.update(id(n) for n in ast.walk(keyword))


def _bound_of(tile: _Tile, bounds: dict[_Tile, str]) -> str | None:
    """The bound on ``tile``: its own, or one on the same index tile at another offset moved by the difference
    (``n * 128 + i_p < N`` bounds ``t[i_p]`` at ``N - (n * 128)``: the SBUF side of a load whose HBM side is
    offset)."""
    if tile in bounds:
        return bounds[tile]
    for other, bound in bounds.items():
        if (other.axis, other.start, other.size) == (tile.axis, tile.start, tile.size):
            simple = all(part.isidentifier() for part in bound.split("."))
            moved = (
                f"{bound if simple else f'({bound})'} - ({' + '.join(other.offset)})"
                if other.offset
                else bound
            )
            return f"{moved} + {' + '.join(tile.offset)}" if tile.offset else moved
    return None


def _elements(node: ast.Subscript) -> list[ast.expr]:
    """The positions of a subscript's key."""
    return node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]


def _short(operand_tiles: _MaskOperands, operand: ast.expr) -> bool:
    """Whether an operand computes on a tile that a masked call made (already of the bounded extent)."""
    return any(isinstance(n, ast.Name) and n.id in operand_tiles.bounded for n in ast.walk(operand))


def _explicit(tiles: _IndexTiles, node: ast.Subscript) -> bool:
    """A subscript with explicit slices and no index tile (``t[b, :, 0:k]``)."""
    return not tiles.uses_tiles(node.slice) and any(isinstance(e, ast.Slice) for e in _elements(node))


def _cut(src: Source, node: ast.Subscript, bounds: dict[_Tile, str]) -> tuple[str, set[int]] | None:
    """``node`` with the slice on each bounded axis cut to the bound's extent, and the axes cut (None: a stepped
    slice, or a bounded axis the subscript has no slice for)."""
    elements = _elements(node)
    positions = [i for i, e in enumerate(elements) if isinstance(e, ast.Slice)]
    parts = [src.text_of(e) for e in elements]
    for tile, bound in bounds.items():
        if tile.axis >= len(positions):
            return None
        element = elements[positions[tile.axis]]
        assert isinstance(element, ast.Slice)
        if element.step is not None:
            return None
        low = src.text_of(element.lower) if element.lower is not None else "0"
        if low == "0":
            parts[positions[tile.axis]] = f"0:{tile.extent(bound)}"
        elif low == tile.low and element.upper is not None:
            parts[positions[tile.axis]] = f"{low}:min({src.text_of(element.upper)}, {bound})"
        else:
            parts[positions[tile.axis]] = f"{low}:{low} + {tile.extent(bound)}"
    return f"{src.text_of(node.value)}[{', '.join(parts)}]", {t.axis for t in bounds}


def _edit(src: Source, start: int, end: int) -> TextEdit:
    """An edit deleting the absolute range ``start:end``."""
    return TextEdit(Span(*src.position(start), *src.position(end)), "")


def _gathered(tiles: _IndexTiles, node: ast.Subscript) -> int | None:
    """The position of a subscript's key holding a tile of values (``x[b, rows, i_f]``, rows a ``(P, 1)`` tile of
    row numbers), when there is exactly one."""
    found = [i for i, e in enumerate(_elements(node)) if isinstance(e, ast.Name) and e.id in tiles.data]
    return found[0] if len(found) == 1 else None


def _rewrite(
    src: Source, tiles: _IndexTiles, node: ast.Subscript, bounds: dict[_Tile, str] | None = None
) -> str | None:
    """A subscript by index tiles as slices (bounded by a mask's ``bounds``). A tile of row numbers at one position
    (a legacy gather: partition ``p`` reads row ``rows[p]`` of that dim) becomes ``x[..., :, ...].vector_select(0,
    rows)`` (language.md: per-partition row gather on an HBM tensor; the integer indices before it leave that dim
    first), its rows cut to a mask's bound on the partition axis."""
    parts, axes = [], []
    gather = _gathered(tiles, node)
    for i, e in enumerate(_elements(node)):
        tile = tiles.tile(e)
        if i == gather:
            parts.append(":")
            axes.append(0)
        elif tile is not None:
            parts.append(tile.as_slice(_bound_of(tile, bounds or {})))
            axes.append(tile.axis)
        elif tiles.uses_tiles(e) or (gather is not None and (i > gather or isinstance(e, ast.Slice))):
            return None  # after a gather only index tiles; before it only integers (they drop their dims)
        else:
            parts.append(src.text_of(e))
    if axes != sorted(set(axes)):
        return None  # a transposed or repeated axis: no slice gives the legacy layout
    view = f"{src.text_of(node.value)}[{', '.join(parts)}]"
    if gather is None:
        return view
    rows = src.text_of(_elements(node)[gather])
    extent = next((t.extent(b) for t, b in (bounds or {}).items() if t.axis == 0), None)
    return f"{view}.vector_select(0, {rows if extent is None else f'{rows}[0:{extent}]'})"


def _delete_unused(
    src: Source, tiles: _IndexTiles, func: ast.AST, rewritten: set[int], patterned: set[int], out: PassResult
) -> None:
    """Delete the definitions of tiles no longer used; list the uses left (those ``index_patterns`` rewrites keep
    their definitions and are not listed)."""
    definitions = {id(n) for stmts in tiles.definitions.values() for s in stmts for n in ast.walk(s)}
    left: dict[str, list[ast.AST]] = {}
    kept: set[str] = set()
    for n in ast.walk(func):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in tiles.definitions:
            if id(n) in rewritten or id(n) in definitions:
                continue
            if id(n) in patterned:
                kept.add(n.id)
            else:
                left.setdefault(n.id, []).append(n)
    # A statement defining several names (mgrid unpacking) goes only when all of them are unused.
    stmts = {id(s): s for stmts in tiles.definitions.values() for s in stmts}
    for stmt in stmts.values():
        names = [name for name, defs in tiles.definitions.items() if stmt in defs]
        if any(name in left or name in kept for name in names):
            continue
        edit = src.delete_lines(stmt)
        if edit is not None:
            out.change(edit, stmt.lineno, "index tile definition", "deleted (every use is a slice now)")
    for name, uses in left.items():
        for line in sorted({use.lineno for use in uses}):  # type: ignore[attr-defined]
            out.manual.append(
                ManualStep(
                    line,
                    f"index tile `{name}`",
                    "not a plain offset in a subscript (scaled, transposed, a mask or an argument): write the "
                    "access as slices / nl.ds(start, size) / .ap(pattern), masks as bounds of the slice "
                    "(t[p0:min(P, p0 + 128)])",
                )
            )
