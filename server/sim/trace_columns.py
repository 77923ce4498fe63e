"""The simulator trace in columns: one NumPy array per ``TraceEvent`` / ``Operand`` field instead of one Python
object per instruction, strings (opcodes, engines, files, roles, dtypes, names) and tuples (stacks, shapes)
interned into tables. A 1M-instruction trace takes ~0.3 GB this way against ~1.2 GB as objects, and the
scheduler and the estimated-profile builder read whole columns.

``CompactTrace`` is still a ``Sequence[TraceEvent]``: indexing or iterating materialises the records, so code
written against the record type keeps working. The columns follow the record types' fields
(``dataclasses.fields``), so a field added to ``TraceEvent`` or ``Operand`` is carried without change here:
``int`` and ``str`` fields become columns, any other type is kept as a list of values.
"""

from __future__ import annotations

import dataclasses
import itertools
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, overload

import numpy as np
import numpy.typing as npt
from nki_studio.model.targets import NkiVersion, parse_nki_version
from nki_studio.sim.trace import REGIONS, Operand, TraceEvent

I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]

# Field name -> kind: "int" (int64 column), "str" (interned, int32 codes), "tuple" (interned tuples),
# "operands", "regions" (dict region -> bytes: one int64 column per region, -1 = absent), "object" (a list).
_KIND_OF_ANNOTATION = {"int": "int", "str": "str", "tuple[str, ...]": "tuple", "tuple[int, ...]": "tuple"}


def _kinds(cls: type, special: dict[str, str]) -> dict[str, str]:
    return {
        f.name: special.get(f.name) or _KIND_OF_ANNOTATION.get(str(f.type), "object")
        for f in dataclasses.fields(cls)
    }


EVENT_KINDS = _kinds(
    TraceEvent, {"operands": "operands", "bytes_read": "regions", "bytes_written": "regions"}
)
OPERAND_KINDS = _kinds(Operand, {})
_OPERANDS_AT = list(EVENT_KINDS).index("operands")  # TraceEvent's positional argument ``operands``
_ABSENT = -1  # a region with no bytes entry (0 is a real entry: a zero-size operand)


class _Interner:
    """Value -> code, first come first numbered."""

    __slots__ = ("codes", "values")

    def __init__(self) -> None:
        self.codes: dict[Any, int] = {}
        self.values: list[Any] = []

    def code(self, value: Any) -> int:
        got = self.codes.get(value)
        if got is None:
            got = self.codes[value] = len(self.values)
            self.values.append(value)
        return got


class _Columns:
    """Append-only columns of one record type."""

    def __init__(self, kinds: dict[str, str]) -> None:
        self.kinds = kinds
        self.ints: dict[str, array[int]] = {}
        self.interners: dict[str, _Interner] = {}
        self.objects: dict[str, Any] = {}
        self.extras: dict[str, dict[int, dict[str, int]]] = {}
        for name, kind in kinds.items():
            if kind == "int":
                self.ints[name] = array("q")
            elif kind in ("str", "tuple"):
                self.ints[name] = array("i")
                self.interners[name] = _Interner()
            elif kind == "regions":
                for r in REGIONS:
                    self.ints[f"{name}.{r}"] = array("q")
                pass  # plus, in ``extras``, any region outside REGIONS: row -> dict
            elif kind == "object":
                self.objects[name] = []

    def append(self, record: Any) -> None:
        for name, kind in self.kinds.items():
            value = getattr(record, name)
            if kind == "int":
                self.ints[name].append(value)
            elif kind in ("str", "tuple"):
                self.ints[name].append(self.interners[name].code(value))
            elif kind == "regions":
                for r in REGIONS:
                    self.ints[f"{name}.{r}"].append(value.get(r, _ABSENT))
                if len(value) > sum(1 for r in REGIONS if r in value):  # a region outside REGIONS: kept aside
                    self.extras.setdefault(name, {})[len(self.ints[f"{name}.{REGIONS[0]}"]) - 1] = {
                        k: v for k, v in value.items() if k not in REGIONS
                    }
            elif kind == "object":
                self.objects[name].append(value)

    def set(self, row: int, record: Any) -> None:
        """Overwrite row ``row`` with ``record`` (int, interned and object fields only)."""
        for name, kind in self.kinds.items():
            value = getattr(record, name)
            if kind == "int":
                self.ints[name][row] = value
            elif kind in ("str", "tuple"):
                self.ints[name][row] = self.interners[name].code(value)
            elif kind == "object":
                self.objects[name][row] = value
            else:
                raise ValueError(f"field {name} ({kind}) cannot be overwritten")

    def freeze(self) -> tuple[dict[str, npt.NDArray[Any]], dict[str, tuple[Any, ...]], dict[str, Any]]:
        cols = {
            k: _narrow(np.frombuffer(v, np.int64 if v.typecode == "q" else np.int32))
            for k, v in self.ints.items()
        }
        tables = {k: tuple(t.values) for k, t in self.interners.items()}
        objects: dict[str, Any] = {k: list(v) for k, v in self.objects.items()}
        for name, kind in self.kinds.items():
            if kind == "regions":
                objects[name] = dict(self.extras.get(name, {}))
        return cols, tables, objects


def _narrow(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """A copy as int32 when every value fits (most fields: lines, partitions, storage numbers), else int64."""
    if values.dtype == np.int32 or not values.size:
        return values.astype(np.int32)
    lo, hi = int(values.min()), int(values.max())
    return values.astype(np.int32 if -(2**31) <= lo and hi < 2**31 else np.int64)


class TraceBuilder:
    """Collects trace records into columns; ``build`` returns the ``CompactTrace``. ``nki_version``: the NKI
    version the kernel was simulated with, written into every record's ``nki_version`` field (None: the records'
    own)."""

    def __init__(self, nki_version: NkiVersion | None = None) -> None:
        self.nki_version = nki_version
        self._events = _Columns(EVENT_KINDS)
        self._operands = _Columns(OPERAND_KINDS)
        self._offsets = array("q", [0])

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def append(self, event: TraceEvent) -> None:
        """Add one record (its operands go to the operand table)."""
        self._events.append(event)
        for o in event.operands:
            self._operands.append(o)
        self._offsets.append(self._offsets[-1] + len(event.operands))

    def redirect_last(self, storage: int, operand: Callable[[str], Operand]) -> None:
        """Replace the last record's operands on storage ``storage`` by ``operand(role)``."""
        for row in range(self._offsets[-2], self._offsets[-1]) if len(self) else ():
            if self._operands.ints["storage"][row] == storage:
                role = self._operands.interners["role"].values[self._operands.ints["role"][row]]
                self._operands.set(row, operand(role))

    def extend(self, events: Iterable[TraceEvent]) -> None:
        """Add records in order."""
        for e in events:
            self.append(e)

    def build(self) -> CompactTrace:
        """The trace so far, as columns (the builder may go on collecting)."""
        ev, ev_tables, ev_objects = self._events.freeze()
        op, op_tables, op_objects = self._operands.freeze()
        if self.nki_version is not None:  # one column value: cheaper than a version per appended record
            ev["nki_version"] = np.zeros(len(self), np.int32)
            ev_tables["nki_version"] = (str(self.nki_version),)
        return CompactTrace(
            ev,
            ev_tables,
            ev_objects,
            op,
            op_tables,
            op_objects,
            np.frombuffer(self._offsets, np.int64).copy(),
        )


class CompactTrace(Sequence[TraceEvent]):
    """A trace as columns (see the module docstring). ``event(name)`` / ``operand(name)`` give a field's column
    (codes for interned fields, whose values are ``event_table(name)`` / ``operand_table(name)``);
    ``offsets[i]:offsets[i + 1]`` are event i's rows of the operand table, in operand order."""

    def __init__(
        self,
        events: dict[str, npt.NDArray[Any]],
        event_tables: dict[str, tuple[Any, ...]],
        event_objects: dict[str, Any],
        operands: dict[str, npt.NDArray[Any]],
        operand_tables: dict[str, tuple[Any, ...]],
        operand_objects: dict[str, Any],
        offsets: I64,
    ) -> None:
        self._ev, self._ev_tables, self._ev_objects = events, event_tables, event_objects
        self._op, self._op_tables, self._op_objects = operands, operand_tables, operand_objects
        self.offsets = offsets
        self.n = len(offsets) - 1
        self._owner: I64 | None = None
        self._sums: dict[str, I64] = {}

    @staticmethod
    def of(events: Iterable[TraceEvent]) -> CompactTrace:
        """``events`` as a compact trace (itself when it already is one)."""
        if isinstance(events, CompactTrace):
            return events
        builder = TraceBuilder()
        builder.extend(events)
        return builder.build()

    @property
    def nki_version(self) -> NkiVersion | None:
        """The NKI version the simulator ran the kernel as (its API generation: the estimate models the legacy
        compiler's transformations for ``LEGACY``), from the records' ``nki_version`` field; None when none
        records one (events made by the estimate itself, such as spill transfers, record none)."""
        named = {v for v in self._ev_tables["nki_version"] if v}
        return parse_nki_version(named.pop()) if len(named) == 1 else None

    # -- columns --------------------------------------------------------------------------------------------
    def event(self, name: str) -> npt.NDArray[Any]:
        """An event field's column (int32 or int64 values, or int32 codes of an interned field)."""
        return self._ev[name]

    def event_table(self, name: str) -> tuple[Any, ...]:
        """The values of an interned event field, by code."""
        return self._ev_tables[name]

    def regions(self, name: str) -> I64:
        """``bytes_read`` / ``bytes_written`` summed over regions, per event (absent regions count 0; computed
        once)."""
        got = self._sums.get(name)
        if got is None:
            got = self._sums[name] = self._region_sum(name)
        return got

    def _region_sum(self, name: str) -> I64:
        total = np.zeros(self.n, np.int64)
        for r in REGIONS:
            total += np.maximum(self._ev[f"{name}.{r}"], 0)
        for i, d in self._ev_objects[name].items():
            total[i] += sum(d.values())
        return total

    def operand(self, name: str) -> npt.NDArray[Any]:
        """An operand field's column over the operand table."""
        return self._op[name]

    def operand_table(self, name: str) -> tuple[Any, ...]:
        """The values of an interned operand field, by code."""
        return self._op_tables[name]

    def operand_event(self) -> I64:
        """The event of each operand-table row (computed once)."""
        if self._owner is None:
            self._owner = np.repeat(np.arange(self.n, dtype=np.int64), np.diff(self.offsets))
        return self._owner

    def nbytes(self) -> int:
        """Bytes held by the columns (not the small tables)."""
        return sum(a.nbytes for a in (*self._ev.values(), *self._op.values(), self.offsets))

    # -- records --------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return self.n

    @overload
    def __getitem__(self, i: int) -> TraceEvent: ...

    @overload
    def __getitem__(self, i: slice) -> list[TraceEvent]: ...

    def __getitem__(self, i: int | slice) -> TraceEvent | list[TraceEvent]:
        if isinstance(i, slice):
            rows = range(*i.indices(self.n))
            if rows.step == 1:
                return list(self._records(rows.start, rows.stop))
            return [self[k] for k in rows]
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError(i)
        return next(self._records(i, i + 1))

    def __iter__(self) -> Iterator[TraceEvent]:
        step = 65536  # materialise a chunk of columns at a time: tolist() beats per-element indexing
        for a in range(0, self.n, step):
            yield from self._records(a, min(a + step, self.n))

    def records(self, rows: npt.NDArray[np.integer[Any]]) -> list[TraceEvent]:
        """Events ``rows`` (indices, any order) as records, their columns gathered at once: a few records of a
        long trace cost what they are, not a pass over the trace."""
        rows = np.asarray(rows, np.int64)
        lo, hi = self.offsets[rows], self.offsets[rows + 1]
        offs = np.zeros(rows.size + 1, np.int64)
        np.cumsum(hi - lo, out=offs[1:])
        op_rows = np.arange(int(offs[-1]), dtype=np.int64) - np.repeat(offs[:-1] - lo, hi - lo)
        return list(self._build(rows, op_rows, offs.tolist(), rows.tolist()))

    def _records(self, a: int, b: int) -> Iterator[TraceEvent]:
        """Events a..b-1 as records."""
        if b <= a:
            return
        o0, o1 = int(self.offsets[a]), int(self.offsets[b])
        offs = (self.offsets[a : b + 1] - o0).tolist()
        yield from self._build(slice(a, b), slice(o0, o1), offs, range(a, b))

    def _build(self, sel: Any, op_sel: Any, offs: list[int], index: Sequence[int]) -> Iterator[TraceEvent]:
        """Records of the events ``sel`` (a slice or an index array; ``index``: their event numbers) whose
        operands are rows ``op_sel`` of the operand table, event k's at ``offs[k]:offs[k + 1]`` of those."""
        operands = list(_values(self._op, self._op_tables, self._op_objects, OPERAND_KINDS, op_sel, Operand))
        fields = _event_fields(self._ev, self._ev_tables, self._ev_objects, sel, index)
        # positional arguments in field order (the columns follow ``dataclasses.fields``, ``operands`` left out):
        # a keyword dict per record cost about as much as the record
        i = _OPERANDS_AT
        for k, row in enumerate(zip(*fields.values(), strict=True)):
            args: tuple[Any, ...] = (*row[:i], tuple(operands[offs[k] : offs[k + 1]]), *row[i:])
            yield TraceEvent(*args)


def _take(values: list[Any], sel: Any) -> list[Any]:
    """``values[sel]`` of a list, ``sel`` a slice or an index array."""
    return values[sel] if isinstance(sel, slice) else [values[k] for k in sel.tolist()]


def _values(
    cols: dict[str, npt.NDArray[Any]],
    tables: dict[str, tuple[Any, ...]],
    objects: dict[str, Any],
    kinds: dict[str, str],
    sel: Any,
    cls: type,
) -> Iterator[Any]:
    lists: dict[str, Any] = {}
    for name, kind in kinds.items():
        if kind == "int":
            lists[name] = cols[name][sel].tolist()
        elif kind in ("str", "tuple"):
            table = tables[name]
            lists[name] = [table[c] for c in cols[name][sel].tolist()]
        elif kind == "object":
            lists[name] = _take(objects[name], sel)
    # every field has a list, in field order (``_kinds``): positional arguments, no keyword dict per record
    yield from itertools.starmap(cls, zip(*lists.values(), strict=True))


def _event_fields(
    cols: dict[str, npt.NDArray[Any]],
    tables: dict[str, tuple[Any, ...]],
    objects: dict[str, Any],
    sel: Any,
    index: Sequence[int],
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, kind in EVENT_KINDS.items():
        if kind == "int":
            out[name] = cols[name][sel].tolist()
        elif kind in ("str", "tuple"):
            table = tables[name]
            out[name] = [table[c] for c in cols[name][sel].tolist()]
        elif kind == "object":
            out[name] = _take(objects[name], sel)
        elif kind == "regions":
            per = [cols[f"{name}.{r}"][sel].tolist() for r in REGIONS]
            extra: dict[int, dict[str, int]] = objects[name]
            out[name] = [
                {r: v for r, v in zip(REGIONS, row, strict=True) if v != _ABSENT} | extra.get(e, {})
                for e, row in zip(index, zip(*per, strict=True), strict=True)
            ]
    return out


def as_compact(trace: Sequence[TraceEvent]) -> CompactTrace:
    """The trace in columns (no copy when it already is)."""
    return CompactTrace.of(trace)


def call_sites(trace: Sequence[TraceEvent]) -> list[str]:
    """The user frames around the instructions' own lines, each ``"path:line"`` once, sorted: the calls into the
    user's functions that issued instructions (a function that only calls others has no line of its own in the
    per-line table)."""
    stacks = as_compact(trace).event_table("stack")
    return sorted({frame.rsplit(":", 1)[0] for stack in stacks for frame in stack})
