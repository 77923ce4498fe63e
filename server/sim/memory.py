"""Memory regions and the SBUF/PSUM capacity model: capacity from liveness (first to last access).

Capacity model (documented in docs/simulator.md):

* An on-chip tensor (SBUF or PSUM) occupies ``prod(shape[1:]) * itemsize`` bytes in *every* partition
  (the NKI dtype's size, also in float32 mode). Partitions are not packed: a ``(32, 512)`` tile costs the
  same per-partition bytes as a ``(128, 512)`` one, the conservative reading of the compiler's per-partition
  allocator (inferred).
* It occupies them from its first access to its last one, as the compiler's allocator sees it: an access is
  any read or write of its storage (through any view), stamped with the instruction count; a tensor created
  with contents (``nl.zeros``) is accessed at creation. A tensor Python still references but no instruction
  touches again is free — what the compiler does — and one never accessed occupies nothing. Two tensors
  are live together when their [first, last] intervals share a stamp (an instruction's sources and
  destination coexist). The exact intervals are only known when the kernel has run, so capacity is checked
  and peaks are measured then (:meth:`MemoryTracker.finish`).
* Budgets per partition come from ``nki_studio.model.targets`` (SBUF 192/224/256 KiB, PSUM 16 KiB).
  Two limits, because the toolchain only refuses one of them:

  - **Operands of one instruction** (every tensor an instruction reads or writes, a tensor on its own
    included) must fit together: no schedule or spill can split them. Exceeding that raises
    ``HardwareLimitError`` (``capacity="error"``, the default).
  - **Program-order peak**: the live ranges above follow the kernel's program order, but by default the
    toolchain neither keeps that order nor refuses an allocation that does not fit it. neuronx-cc orders the
    instructions itself after tracing (only their dependencies bind it) and allocates afterwards, spilling SBUF
    to HBM where needed (NKI compile-config deep dive, 2.33 docs: "By default, neuronx-cc makes both
    decisions"; NCC_EOOM001 lists "SBUF spills"); NKI 0.7's own linear-scan allocation falls back to
    neuronx-cc's when it fails unless ``CompileConfig(nki_alloc_fallback=False)`` ("set False to surface
    SBUF/PSUM OOM", nki-0.7.md §2.8). A program-order peak over the capacity is therefore a warning naming
    the line and what was live (the kernel may spill or be reordered: a performance matter), and an error
    only with ``nki_alloc_fallback=False`` (``MemoryTracker.strict_order``). Found on nki-library's MoE
    kernels, which accumulate 12 PSUM banks' worth of matmul tiles before copying any out: they run on
    hardware, so the compiler does not keep that order.

  With ``capacity="warn"`` both only warn. Peak usage and what was live at the peak are reported.
* A legacy block tensor the compiler allocates itself (``nl.ndarray((B, nl.par_dim(P), F), buffer=nl.psum)``)
  is B separate (P, F) tiles: "The compiler analyzes the memory dependency and allocates physical address to
  each tiles. This means that the physical tiles may not be alive in the memory simultaneously" (Block
  Dimension Migration Guide, "What are block dimensions?"). An instruction's operands therefore count the blocks
  it accesses, not the whole tensor (:meth:`MemoryTracker.by_block`); nki-samples' attention tutorial keeps a
  [32, 8, 128, 512] float32 PSUM block tensor (512 KiB per partition) at the 4096-long inputs of its test, which
  later nki-samples runs on a device (``test/unit/test_attention_tutorial_kernels.py``, commit f94fb11:
  ``baremetal(version)`` at seqlen 4096, checked against NumPy). The program-order peak still counts such a tensor whole from its first to its last
  access (conservative: a warning). A modular allocation (``ncc.psum.mod_alloc``) places its physical tiles:
  counted whole.
* Tensors placed explicitly (``nl.ndarray(..., address=(partition, free_offset_bytes))``, as allocator
  libraries such as nki-library's do) occupy their byte range: they must end within the capacity (checked at
  creation), and they count as the union of their live ranges, since such allocators reuse addresses.
* Each logical core has its own tracker; an optional allocation budget (all regions, HBM included,
  shared by the cores) bounds how much host memory a kernel may hold at once: it follows Python references
  (released when the last reference to a storage dies), since that is what holds host memory.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum

import numpy as np
from nki_studio.sim.errors import HardwareLimitError, ResourceLimitError
from nki_studio.sim.userframe import SourceLocation, user_location

_HBM = frozenset({"private_hbm", "shared_hbm"})
_CREATED = -1  # the stamp of a tensor's creation with contents (no instruction)


class MemoryRegion(str, Enum):
    """``nl.sbuf``, ``nl.psum``, ``nl.private_hbm`` (= ``nl.hbm``), ``nl.shared_hbm`` (language.md §1)."""

    sbuf = "sbuf"
    psum = "psum"
    private_hbm = "private_hbm"
    shared_hbm = "shared_hbm"

    # Both are read by every operand check: `_value_` skips Enum's descriptor, a set lookup the tuple scan.
    @property
    def kind(self) -> str:
        """The trace region: "hbm", "sbuf" or "psum"."""
        value: str = self._value_
        return "hbm" if value in _HBM else value

    @property
    def on_chip(self) -> bool:
        """True for SBUF and PSUM."""
        return self._value_ not in _HBM

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

    def take(self, nbytes: int, what: str) -> None:
        """Account ``nbytes``; raise ``ResourceLimitError`` when the bound would be exceeded."""
        if self.limit_bytes is not None and self.used_bytes + nbytes > self.limit_bytes:
            raise ResourceLimitError(
                f"allocation budget exceeded: {what} needs {nbytes} bytes, {self.used_bytes} of "
                f"{self.limit_bytes} already live"
            )
        self.used_bytes += nbytes

    def give(self, nbytes: int) -> None:
        """Return bytes taken by ``take``."""
        self.used_bytes -= nbytes


class LiveRange:
    """The accesses of one on-chip storage: first and last instruction stamp (None until accessed)."""

    __slots__ = (
        "alloc",
        "block_bytes",
        "blocks_now",
        "clock",
        "counted",
        "first",
        "last",
        "location",
        "placed",
        "tracker",
    )

    def __init__(
        self,
        alloc: Allocation,
        location: SourceLocation,
        placed: tuple[int, int] | None,
        clock: Callable[[], int],
        tracker: MemoryTracker | None = None,
    ) -> None:
        self.alloc = alloc
        self.location = location
        self.placed = placed  # byte range of an explicitly addressed tensor
        self.clock = clock
        self.tracker = tracker  # told once per instruction that accesses this storage (operand footprint)
        self.first: int | None = None
        self.last = -1
        self.block_bytes = 0  # a legacy block tensor allocated block by block: one block's bytes (by_block)
        self.blocks_now: set[int] = set()  # the blocks the current instruction accessed
        self.counted = 0  # bytes the current instruction's operands count for this storage

    @property
    def nbytes(self) -> int:
        """Bytes per partition of the whole storage (its placed range when placed)."""
        return self.alloc.bytes_per_partition if self.placed is None else self.placed[1] - self.placed[0]

    def touch(self, blocks: Iterable[int] | None = None) -> None:
        """Record an access now (called by every read and write of the storage); ``blocks``: the blocks of a
        tensor allocated block by block the access reaches (None: all of it)."""
        now = self.clock()
        if self.first is None:
            self.first = now
        if self.last != now:  # first access by this instruction: it is one of its operands
            self.last = now
            self.blocks_now = set()
            self.counted = 0
        if self.tracker is None:
            return
        nbytes = self.nbytes
        if blocks is not None and self.block_bytes:
            self.blocks_now.update(blocks)
            nbytes = min(nbytes, len(self.blocks_now) * self.block_bytes)
        if nbytes > self.counted:
            self.tracker._operand(self, now, nbytes - self.counted)
            self.counted = nbytes

    def created_with_contents(self) -> None:
        """Record the write that creates a tensor with contents (``nl.zeros`` ...). Not an instruction the
        simulator issues (hardware fills each tensor on its own), so it joins no other tensor's footprint."""
        now = self.clock()
        if self.first is None:
            self.first = now
        self.last = max(self.last, now)
        if self.tracker is not None:
            self.tracker._alone(self)


class _Operands:
    """The on-chip tensors one instruction (one clock stamp) accessed, in one region, and their bytes."""

    __slots__ = ("displaced", "members", "nbytes", "stamp")

    def __init__(self, stamp: int) -> None:
        self.stamp = stamp
        self.nbytes = 0
        self.members: list[LiveRange] = []
        self.displaced: _Operands | None = None  # the widest footprint before this one became it


class MemoryTracker:
    """SBUF/PSUM use of one logical core: allocations and their live ranges, capacity checks and peaks."""

    def __init__(
        self,
        capacity: dict[str, int],
        *,
        mode: str = "error",
        budget: AllocationBudget | None = None,
        pmax: int = 128,
        clock: Callable[[], int] = lambda: 0,
    ) -> None:
        self.capacity = capacity  # region kind ("sbuf"/"psum") -> bytes per partition
        self.mode = mode  # "error" | "warn" | "off"
        self.pmax = pmax
        self.budget = budget if budget is not None else AllocationBudget()
        self.clock = clock  # the instruction count: the time unit of live ranges
        self.peaks: dict[str, RegionPeak] = {"sbuf": RegionPeak(), "psum": RegionPeak()}
        self.warnings: list[str] = []
        self._ranges: dict[int, LiveRange] = {}  # every on-chip allocation by id(), in allocation order
        self._held: dict[int, int] = {}  # allocation id -> bytes taken from the budget while referenced
        self._next_id = 0
        self._finished = False
        # The program-order peak is an error only when the kernel pins NKI's allocation
        # (CompileConfig(nki_alloc_fallback=False)); otherwise the toolchain reorders/spills (module doc).
        self.strict_order = False
        self._current: dict[str, _Operands] = {}  # region -> operands of the instruction being accessed
        self._widest: dict[
            str, _Operands
        ] = {}  # region -> the instruction whose operands took the most bytes

    def allocate(
        self,
        owner: object,
        region: MemoryRegion,
        shape: tuple[int, ...],
        dtype_name: str,
        itemsize: int,
        name: str,
        address: tuple[int, int] | None = None,
    ) -> LiveRange | None:
        """Account a new tensor storage ``owner``; returns the live range its accesses must ``touch``
        (None for HBM). Its budget bytes are returned when ``owner`` is collected.

        ``address`` = (partition offset, free-dim byte offset) of an explicitly placed on-chip tensor."""
        total = itemsize
        for d in shape:
            total *= d
        loc = user_location()
        placed: tuple[int, int] | None = None
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
            if address is not None:
                kind, cap = region.kind, self.capacity[region.kind]
                start = int(address[1])
                if start < 0 or start + per_partition > cap or int(address[0]) + shape[0] > self.pmax:
                    raise HardwareLimitError(
                        f"{name or 'tensor'} {list(shape)} placed at address {tuple(address)} needs bytes "
                        f"{start}..{start + per_partition} and partitions {address[0]}..{int(address[0]) + shape[0]}, "
                        f"beyond the {kind.upper()} of {cap} bytes x {self.pmax} partitions",
                        location=loc,
                    )
                placed = (start, start + per_partition)
        else:
            per_partition = total
        self.budget.take(total, f"{region.value} tensor {name or ''} {list(shape)}")
        ident = self._next_id
        self._next_id += 1
        self._held[ident] = total
        weakref.finalize(owner, self._release, ident)
        if not region.on_chip:
            return None
        alloc = Allocation(name, region.value, shape, dtype_name, per_partition, loc.file, loc.line)
        live = LiveRange(alloc, loc, placed, self.clock, self)
        self._ranges[id(live)] = live
        return live

    def by_block(self, r: LiveRange, block_bytes: int) -> None:
        """``r`` is a legacy block tensor the compiler allocates block by block (module doc): its accesses count
        the blocks they reach, ``block_bytes`` each. A tensor created with contents was counted whole when it was
        created (before its blocks were known): each block is filled on its own, so that count becomes one
        block's."""
        r.block_bytes = block_bytes
        widest = self._widest.get(r.alloc.region)
        if widest is not None and widest.stamp == _CREATED and widest.members == [r]:
            if widest.displaced is None:
                del self._widest[r.alloc.region]
            else:
                self._widest[r.alloc.region] = widest.displaced
            self._alone(r)

    def _operand(self, r: LiveRange, now: int, nbytes: int) -> None:
        """``r`` is an operand of the instruction at stamp ``now`` (``nbytes`` more of it): add it to that
        instruction's footprint."""
        kind = r.alloc.region
        cur = self._current.get(kind)
        if cur is None or cur.stamp != now:
            cur = self._current[kind] = _Operands(now)
        if r not in cur.members:
            cur.members.append(r)
        cur.nbytes += nbytes
        widest = self._widest.get(kind)
        if widest is None or cur.nbytes > widest.nbytes:
            if widest is not cur:
                cur.displaced = widest
            self._widest[kind] = cur

    def elide(self, r: LiveRange) -> None:
        """Drop ``r`` from the accounting: its storage was never separate memory (a legacy result tile the
        instruction that produced it wrote straight into the tensor it was assigned to). Only the instruction
        being accessed may be undone: ``r`` must have been accessed by it alone."""
        kind = r.alloc.region
        cur = self._current.get(kind)
        if cur is None or cur.stamp != r.last or r.first != r.last or r not in cur.members:
            raise ValueError("only a range the current instruction alone accessed can be elided")
        cur.members.remove(r)
        cur.nbytes -= r.counted
        if self._widest.get(kind) is cur and cur.displaced is not None and cur.displaced.nbytes > cur.nbytes:
            self._widest[kind] = cur.displaced
        del self._ranges[id(r)]
        r.tracker = None

    def _alone(self, r: LiveRange) -> None:
        """``r`` was written on its own (no instruction): its own bytes are an operand footprint."""
        kind = r.alloc.region
        single = _Operands(_CREATED)
        single.members.append(r)
        single.nbytes = r.block_bytes or r.nbytes
        widest = self._widest.get(kind)
        if widest is None or single.nbytes > widest.nbytes:
            single.displaced = widest
            self._widest[kind] = single

    def _release(self, ident: int) -> None:
        total = self._held.pop(ident, None)
        if total is not None:
            self.budget.give(total)

    def release_all(self) -> None:
        """Return every budget byte still held (the kernel returned)."""
        for ident in list(self._held):
            self._release(ident)

    def finish(self) -> None:
        """Measure each region's peak from the live ranges and check it against the capacity (the kernel has
        run, so every range is complete). Raises ``HardwareLimitError`` in "error" mode when one instruction's
        operands do not fit (or, with ``strict_order``, when the program-order peak does not); idempotent."""
        if self._finished:
            return
        self._finished = True
        for kind, cap in self.capacity.items():
            error = self._operands_fit(kind, cap) or self._sweep(kind, cap)
            if error is not None:
                raise error

    def _operands_fit(self, kind: str, cap: int) -> HardwareLimitError | None:
        """The schedule-independent limit: the widest instruction's operands against the capacity."""
        widest = self._widest.get(kind)
        if widest is None or widest.nbytes <= cap or self.mode != "error":
            return None  # "warn": the sweep warns about the (at least as high) program-order peak
        last = widest.members[-1]
        return HardwareLimitError(
            f"{kind.upper()} capacity exceeded: the operands of one instruction need {widest.nbytes} of {cap} "
            "bytes per partition together (no schedule or spill separates them): "
            + "; ".join(x.alloc.describe() for x in widest.members),
            location=last.location,
        )

    def _sweep(self, kind: str, cap: int) -> HardwareLimitError | None:
        """Walk the ranges of one region in time order: at each stamp the tensors first accessed then join
        (in allocation order), usage is measured after each, then the tensors last accessed then leave."""
        starts: dict[int, list[LiveRange]] = {}
        ends: dict[int, list[LiveRange]] = {}
        for r in self._ranges.values():
            if r.alloc.region == kind and r.first is not None:
                starts.setdefault(r.first, []).append(r)
                ends.setdefault(r.last, []).append(r)
        cover = np.zeros(cap, np.int32)  # per byte of a partition: how many live placed tensors use it
        covered = loose = 0
        warned = False  # one warning per region: the first time the program-order peak goes over
        live: dict[int, LiveRange] = {}
        peak = RegionPeak()
        for now in sorted(starts.keys() | ends.keys()):
            for r in starts.get(now, ()):
                live[id(r)] = r
                if r.placed is None:
                    loose += r.alloc.bytes_per_partition
                else:
                    window = cover[r.placed[0] : r.placed[1]]
                    covered += int(np.count_nonzero(window == 0))
                    window += 1
                used = loose + covered
                if used > cap and self.mode != "off" and not warned:
                    msg = (
                        f"{kind.upper()} capacity exceeded: {used} of {cap} bytes per partition live when "
                        f"{r.alloc.name or 'a tensor'} {list(r.alloc.shape)} {r.alloc.dtype} is first used; "
                        "live: " + "; ".join(x.alloc.describe() for x in live.values())
                    )
                    if self.mode == "error" and self.strict_order:
                        self.peaks[kind] = RegionPeak(used, tuple(x.alloc for x in live.values()))
                        return HardwareLimitError(
                            msg + " (CompileConfig(nki_alloc_fallback=False): NKI allocation follows program "
                            "order and surfaces this)",
                            location=r.location,
                        )
                    if self.mode == "error":  # the default toolchain reorders and spills instead (module doc)
                        msg += (
                            " (in program order; neuronx-cc reorders instructions and spills SBUF, so this "
                            "costs performance rather than failing; nki_alloc_fallback=False makes it an error)"
                        )
                    self.warnings.append(f"{r.location.file}:{r.location.line}: {msg}")
                    warned = True
                if used > peak.bytes_per_partition:
                    peak = RegionPeak(used, tuple(x.alloc for x in live.values()))
            for r in ends.get(now, ()):
                del live[id(r)]
                if r.placed is None:
                    loose -= r.alloc.bytes_per_partition
                else:
                    window = cover[r.placed[0] : r.placed[1]]
                    window -= 1
                    covered -= int(np.count_nonzero(window == 0))
        self.peaks[kind] = peak
        return None
