"""Memory regions and the run-time SBUF/PSUM capacity model.

Capacity model (documented in docs/simulator.md):

* An on-chip tensor (SBUF or PSUM) occupies ``prod(shape[1:]) * itemsize`` bytes in *every* partition
  from the moment ``nl.ndarray``/``zeros``/... creates it (the NKI dtype's size, also in float32 mode).
  Partitions are not packed: a ``(32, 512)`` tile costs the same per-partition bytes as a ``(128, 512)``
  one, the conservative reading of the compiler's per-partition allocator (inferred).
* It is released when it can no longer be used: when the last Python reference to its storage (the
  tensor or any view of it) dies — ``weakref.finalize`` on the storage — or when the kernel returns.
  In a loop ``for i in range(n): t = nl.ndarray(...)`` the previous ``t`` dies when rebound, i.e. just
  *after* the new one was allocated, so two live copies are counted (what the compiler's double buffering
  needs as well).
* Budgets per partition come from ``nki_studio.model.targets`` (SBUF 192/224/256 KiB, PSUM 16 KiB).
  Exceeding one raises ``HardwareLimitError`` naming the line and listing what was live (or only warns
  with ``capacity="warn"``). Peak usage and what was live at the peak are reported.
* Tensors placed explicitly (``nl.ndarray(..., address=(partition, free_offset_bytes))``, as allocator
  libraries such as nki-library's do) occupy their byte range: they must end within the capacity, and they
  count as the union of their live ranges, since such allocators deliberately reuse addresses.
* Each logical core has its own tracker; an optional allocation budget (all regions, HBM included,
  shared by the cores) bounds how much memory a kernel may allocate in total.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field
from enum import Enum

import numpy as np
from nki_studio.sim.errors import HardwareLimitError, ResourceLimitError
from nki_studio.sim.userframe import user_location


class MemoryRegion(str, Enum):
    """``nl.sbuf``, ``nl.psum``, ``nl.private_hbm`` (= ``nl.hbm``), ``nl.shared_hbm`` (language.md §1)."""

    sbuf = "sbuf"
    psum = "psum"
    private_hbm = "private_hbm"
    shared_hbm = "shared_hbm"

    @property
    def kind(self) -> str:
        """The trace region: "hbm", "sbuf" or "psum"."""
        return "hbm" if self in (MemoryRegion.private_hbm, MemoryRegion.shared_hbm) else self.value

    @property
    def on_chip(self) -> bool:
        """True for SBUF and PSUM."""
        return self in (MemoryRegion.sbuf, MemoryRegion.psum)

    def __repr__(self) -> str:
        return f"nl.{self.value}"


@dataclass(frozen=True)
class Allocation:
    """One live allocation, as reported in peak usage."""

    name: str
    region: str
    shape: tuple[int, ...]
    dtype: str
    bytes_per_partition: int  # on-chip; for HBM the total bytes
    file: str
    line: int

    def describe(self) -> str:
        """``name shape dtype: N B/partition (file:line)``."""
        where = f" ({self.file}:{self.line})" if self.file else ""
        return f"{self.name or '<unnamed>'} {list(self.shape)} {self.dtype}: {self.bytes_per_partition} B/partition{where}"


@dataclass
class RegionPeak:
    """Peak per-partition bytes of one on-chip region and the allocations live at that moment."""

    bytes_per_partition: int = 0
    live: tuple[Allocation, ...] = ()


@dataclass
class AllocationBudget:
    """Caller bound on live bytes over all regions (HBM included), shared by the logical cores."""

    limit_bytes: int | None = None
    used_bytes: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, nbytes: int, what: str) -> None:
        """Account ``nbytes``; raise ``ResourceLimitError`` when the bound would be exceeded."""
        with self.lock:
            if self.limit_bytes is not None and self.used_bytes + nbytes > self.limit_bytes:
                raise ResourceLimitError(
                    f"allocation budget exceeded: {what} needs {nbytes} bytes, {self.used_bytes} of "
                    f"{self.limit_bytes} already live"
                )
            self.used_bytes += nbytes

    def give(self, nbytes: int) -> None:
        """Return bytes taken by ``take``."""
        with self.lock:
            self.used_bytes -= nbytes


class MemoryTracker:
    """SBUF/PSUM usage of one logical core, with capacity checks and peak bookkeeping."""

    def __init__(
        self,
        capacity: dict[str, int],
        *,
        mode: str = "error",
        budget: AllocationBudget | None = None,
        pmax: int = 128,
    ) -> None:
        self.capacity = capacity  # region kind ("sbuf"/"psum") -> bytes per partition
        self.mode = mode  # "error" | "warn" | "off"
        self.pmax = pmax
        self.budget = budget if budget is not None else AllocationBudget()
        self.used: dict[str, int] = {"sbuf": 0, "psum": 0}
        self.peaks: dict[str, RegionPeak] = {"sbuf": RegionPeak(), "psum": RegionPeak()}
        self.warnings: list[str] = []
        self._live: dict[int, Allocation] = {}
        self._placed: dict[int, tuple[int, int]] = {}  # explicitly addressed on-chip tensors: byte range
        self._loose = {"sbuf": 0, "psum": 0}  # bytes per partition of live tensors without an address
        self._cover: dict[
            str, np.ndarray
        ] = {}  # per byte of a partition: how many live placed tensors use it
        self._covered = {"sbuf": 0, "psum": 0}  # bytes with a non-zero count
        self._next_id = 0
        self._finalizers: list[weakref.finalize] = []

    def allocate(
        self,
        owner: object,
        region: MemoryRegion,
        shape: tuple[int, ...],
        dtype_name: str,
        itemsize: int,
        name: str,
        address: tuple[int, int] | None = None,
    ) -> None:
        """Account a new tensor storage ``owner``; released automatically when ``owner`` is collected.

        ``address`` = (partition offset, free-dim byte offset) of an explicitly placed on-chip tensor."""
        total = itemsize
        for d in shape:
            total *= d
        loc = user_location()
        if region.on_chip:
            if len(shape) < 2:
                raise HardwareLimitError(
                    f"on-chip tensor {name or ''} {list(shape)} must be at least 2-D (partition dim first)",
                    location=loc,
                )
            if shape[0] > self.pmax:
                raise HardwareLimitError(
                    f"{region.value} tensor {name or ''} {list(shape)}: partition dimension {shape[0]} exceeds "
                    f"maximum {self.pmax}",
                    location=loc,
                )
            per_partition = total // shape[0] if shape[0] else 0
        else:
            per_partition = total
        self.budget.take(total, f"{region.value} tensor {name or ''} {list(shape)}")
        alloc = Allocation(name, region.value, shape, dtype_name, per_partition, loc.file, loc.line)
        ident = self._next_id
        self._next_id += 1
        self._live[ident] = alloc
        if region.on_chip:
            kind = region.kind
            cap = self.capacity[kind]
            if address is not None:
                start = int(address[1])
                if start < 0 or start + per_partition > cap or int(address[0]) + shape[0] > self.pmax:
                    del self._live[ident]  # not yet accounted in the region
                    self.budget.give(total)
                    raise HardwareLimitError(
                        f"{name or 'tensor'} {list(shape)} placed at address {tuple(address)} needs bytes "
                        f"{start}..{start + per_partition} and partitions {address[0]}..{int(address[0]) + shape[0]}, "
                        f"beyond the {kind.upper()} of {cap} bytes x {self.pmax} partitions",
                        location=loc,
                    )
                self._placed[ident] = (start, start + per_partition)
                self._cover_add(kind, start, start + per_partition, 1)
            else:
                self._loose[kind] += per_partition
            self.used[kind] = self._loose[kind] + self._covered[kind]
            if self.used[kind] > cap and self.mode != "off":
                live = [a for a in self._live.values() if a.region == kind]
                msg = (
                    f"{kind.upper()} capacity exceeded: {self.used[kind]} of {cap} bytes per partition live after "
                    f"allocating {name or 'a tensor'} {list(shape)} {dtype_name}; live: "
                    + "; ".join(a.describe() for a in live)
                )
                if self.mode == "error":
                    self._release(ident, total)
                    raise HardwareLimitError(msg, location=loc)
                self.warnings.append(f"{loc.file}:{loc.line}: {msg}")
            if self.used[kind] > self.peaks[kind].bytes_per_partition:
                self.peaks[kind] = RegionPeak(
                    self.used[kind], tuple(a for a in self._live.values() if a.region == kind)
                )
        weakref.finalize(owner, self._release, ident, total)

    def _cover_add(self, kind: str, lo: int, hi: int, delta: int) -> None:
        """Add ``delta`` to the use count of bytes ``lo..hi``, keeping the count of used bytes (the union)."""
        cover = self._cover.get(kind)
        if cover is None:
            cover = self._cover[kind] = np.zeros(self.capacity[kind], np.int32)
        window = cover[lo:hi]
        if delta > 0:
            self._covered[kind] += int(np.count_nonzero(window == 0))
            window += delta
        else:
            window += delta
            self._covered[kind] -= int(np.count_nonzero(window == 0))

    def _release(self, ident: int, total: int) -> None:
        alloc = self._live.pop(ident, None)
        if alloc is None:
            return
        placed = self._placed.pop(ident, None)
        self.budget.give(total)
        kind = alloc.region
        if kind in self.used:
            if placed is not None:
                self._cover_add(kind, placed[0], placed[1], -1)
            else:
                self._loose[kind] -= alloc.bytes_per_partition
            self.used[kind] = self._loose[kind] + self._covered[kind]

    def release_all(self) -> None:
        """Forget every live allocation (the kernel returned)."""
        for ident in list(self._live):
            alloc = self._live[ident]
            per = alloc.bytes_per_partition
            total = per * alloc.shape[0] if alloc.region in self.used and alloc.shape else per
            self._release(ident, total)

    def live(self) -> list[Allocation]:
        """Allocations currently live, in allocation order."""
        return list(self._live.values())
