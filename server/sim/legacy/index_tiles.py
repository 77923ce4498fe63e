"""Legacy index tiles: ``nl.arange``, ``nl.mgrid``, arithmetic on them and the predicates ``mask=`` takes.

An index tile is an integer NumPy array with the broadcastable shape the legacy docs give it:
``nl.arange(n)`` is 1-D, ``nl.arange(n)[:, None]`` a column (partition axis), ``nl.arange(n)[None, :]`` a row
(free axis); ``nl.mgrid[0:P, 0:F]`` is the open grid (``.p`` the column, ``.x`` the row) [v2.26.1
nki.language.arange, nki.language.mgrid]. Arithmetic (``+ - * // %``) with ints and other index tiles gives index
tiles; comparisons give predicates, combined with ``& | ~`` (the pages' ``mask=`` examples). That ``mgrid`` is the
NumPy *open* grid (``np.ogrid``) is inferred from the examples; that the free axes of a 3-D/4-D grid are ``.x``,
``.y``, ``.z`` in order is inferred from nki-samples' select-and-scatter kernel (a 4-D window grid).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any, cast

import numpy as np
from nki_studio.sim.errors import SimulationError


def _values(x: object) -> Any:
    if isinstance(x, (IndexTile, Predicate)):
        return x.values
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return int(x)
    if hasattr(x, "sim_value"):  # a loop register or 1-element tile used as an offset (inferred)
        return int(x.sim_value())
    raise SimulationError(
        f"legacy index arithmetic: cannot combine an index tile with {type(x).__name__} "
        "(index tiles take ints and other nl.arange/nl.mgrid tiles)"
    )


class IndexTile:
    """An ``nl.arange``/``nl.mgrid`` index tile (or arithmetic on them): integer values of a broadcastable shape."""

    __slots__ = ("values",)

    def __init__(self, values: np.ndarray) -> None:
        self.values = np.asarray(values, dtype=np.int64)

    @property
    def shape(self) -> tuple[int, ...]:
        """The tile's (broadcastable) shape."""
        return tuple(self.values.shape)

    def __getitem__(self, key: object) -> IndexTile:
        return IndexTile(self.values[cast(Any, key)])

    def __repr__(self) -> str:
        return f"IndexTile(shape={list(self.shape)})"

    def _op(self, other: object, fn: Any, reverse: bool = False) -> IndexTile:
        a, b = self.values, _values(other)
        return IndexTile(fn(b, a) if reverse else fn(a, b))

    def _cmp(self, o: object, fn: Any) -> Predicate:
        return Predicate(fn(self.values, _values(o)))

    def __neg__(self) -> IndexTile:
        return IndexTile(-self.values)

    __add__ = functools.partialmethod(_op, fn=np.add)
    __radd__ = functools.partialmethod(_op, fn=np.add, reverse=True)
    __sub__ = functools.partialmethod(_op, fn=np.subtract)
    __rsub__ = functools.partialmethod(_op, fn=np.subtract, reverse=True)
    __mul__ = functools.partialmethod(_op, fn=np.multiply)
    __rmul__ = functools.partialmethod(_op, fn=np.multiply, reverse=True)
    __floordiv__ = functools.partialmethod(_op, fn=np.floor_divide)
    __rfloordiv__ = functools.partialmethod(_op, fn=np.floor_divide, reverse=True)
    __mod__ = functools.partialmethod(_op, fn=np.mod)
    __lt__ = functools.partialmethod(_cmp, fn=np.less)
    __le__ = functools.partialmethod(_cmp, fn=np.less_equal)
    __gt__ = functools.partialmethod(_cmp, fn=np.greater)
    __ge__ = functools.partialmethod(_cmp, fn=np.greater_equal)
    __eq__ = functools.partialmethod(_cmp, fn=np.equal)
    __ne__ = functools.partialmethod(_cmp, fn=np.not_equal)
    __hash__ = None  # type: ignore[assignment]


class Predicate:
    """A compile-time predicate over index tiles (a ``mask=`` or ``affine_select`` condition)."""

    __slots__ = ("values",)

    def __init__(self, values: np.ndarray) -> None:
        self.values = np.asarray(values, dtype=np.bool_)

    def __and__(self, o: object) -> Predicate:
        return Predicate(self.values & predicate_values(o))

    __rand__ = __and__

    def __or__(self, o: object) -> Predicate:
        return Predicate(self.values | predicate_values(o))

    __ror__ = __or__

    def __invert__(self) -> Predicate:
        return Predicate(~self.values)

    def __bool__(self) -> bool:
        raise SimulationError(
            "a legacy index-tile comparison is a compile-time mask, not a Python bool: pass it as mask= "
            "(combine masks with & and |, not `and`/`or`)"
        )


def predicate_values(mask: object) -> np.ndarray:
    """Boolean values of a ``mask=`` argument: a predicate over index tiles, or a plain bool."""
    if isinstance(mask, Predicate):
        return mask.values
    if isinstance(mask, (bool, np.bool_)):
        return np.asarray(bool(mask))
    raise SimulationError(
        f"mask= must compare nl.arange/nl.mgrid index tiles (e.g. i_p < n), not {type(mask).__name__}"
    )


def arange(start: int, stop: int | None = None, step: int = 1) -> IndexTile:
    """``nl.arange(stop)`` / ``nl.arange(start, stop)``: a 1-D index tile [v2.26.1 nki.language.arange]."""
    lo, hi = (0, start) if stop is None else (start, stop)
    return IndexTile(np.arange(int(lo), int(hi), int(step)))


class OpenGrid:
    """What ``nl.mgrid[...]`` returns: one index tile per axis, unpackable, with ``.p``, ``.x`` (``.y``, ``.z``)."""

    def __init__(self, tiles: tuple[IndexTile, ...]) -> None:
        self.tiles = tiles

    def __iter__(self) -> Iterator[IndexTile]:
        return iter(self.tiles)

    def __len__(self) -> int:
        return len(self.tiles)

    def __getitem__(self, i: int) -> IndexTile:
        return self.tiles[i]

    def __getattr__(self, name: str) -> IndexTile:
        axis = _FIELDS.find(name) if len(name) == 1 else -1
        if axis < 0:
            raise AttributeError(name)
        if axis >= len(self.tiles):
            raise SimulationError(
                f"nl.mgrid: .{name} names axis {axis}; this grid has {len(self.tiles)} axes"
            )
        return self.tiles[axis]


_FIELDS = "pxyz"  # .p the partition axis, then .x, .y, .z the free axes in order


class _MGrid:
    """``nl.mgrid``: indexed with slices, ``nl.mgrid[0:128, 0:512]``."""

    def __getitem__(self, key: object) -> OpenGrid:
        keys = key if isinstance(key, tuple) else (key,)
        if not all(isinstance(k, slice) for k in keys):
            raise SimulationError("nl.mgrid takes slices, e.g. nl.mgrid[0:128, 0:512]")
        return OpenGrid(tuple(IndexTile(g) for g in np.ogrid[keys]))


mgrid = _MGrid()
