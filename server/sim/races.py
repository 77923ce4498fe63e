"""Write-write races between the logical cores of an LNC=2 launch on shared HBM.

Both cores see the same ``shared_hbm`` tensors. When they write different values to the same elements with
no cross-core synchronisation (``nisa.core_barrier``, ``nisa.sendrecv``) between the two writes, which value
survives depends on hardware timing: the simulator's fixed interleaving of the cores picks one silently, hardware may
pick the other. Each such pair is reported as a warning on both writing lines. Accumulating writes
(DMA accumulate) commute and are not tracked.

Model: each core counts the synchronisations it has passed (its *epoch*); both cores pass the n-th one
together, so two writes are unordered exactly when they come from different cores in the same epoch.
Per shared storage, every element remembers its last write (core, epoch, line). Elements of reinterpreted
views (``.view(dtype)``) are mapped to the storage elements containing them.
"""

from __future__ import annotations

import numpy as np
from nki_studio.sim import context
from nki_studio.sim.tensor_base import TensorBase
from nki_studio.sim.userframe import SourceLocation, user_location

_EPOCH = "lnc.epoch"  # CoreState.registers key: synchronisations this core has passed


class _StorageWrites:
    """The last write of every element of one shared storage, as an index into ``records``."""

    def __init__(self, size: int) -> None:
        self.last = np.full(size, -1, np.int32)
        self.records: list[tuple[int, int, SourceLocation]] = []  # (core, epoch, location)


def synchronised() -> None:
    """Mark that this core passed a cross-core synchronisation (its later writes are ordered after the
    other core's earlier ones)."""
    core = context.current_core()
    core.registers[_EPOCH] = core.registers.get(_EPOCH, 0) + 1


def record_write(dst: TensorBase, positions: np.ndarray, values: np.ndarray) -> None:
    """Note a write of ``values`` at ``positions`` (flat elements of ``dst``'s data, both of ``dst``'s shape)
    by this core, before it lands; warn on both lines when the other core wrote different values to any of
    those elements in the same epoch (equal values, e.g. both cores zero-filling, cannot disagree)."""
    ctx = context.current()
    core = context.current_core()
    st = dst._st
    flat = positions.reshape(-1)
    tracked = flat  # storage elements: a reinterpreted view maps to the elements containing its own
    if dst._data is not st.data:
        tracked = flat * dst._data.dtype.itemsize // st.data.dtype.itemsize
    table: dict[int, _StorageWrites] = ctx.shared.setdefault("lnc.writes", {})
    writes = table.get(id(st))
    if writes is None:
        writes = table[id(st)] = _StorageWrites(st.data.size)
        ctx.shared.setdefault("lnc.write_storages", []).append(st)  # keeps id(st) unique while tracked
    epoch = core.registers.get(_EPOCH, 0)
    here = user_location()
    previous = writes.last[tracked]
    for rec in np.unique(previous[previous >= 0]):
        other_core, other_epoch, there = writes.records[int(rec)]
        if other_core == core.core_id or other_epoch != epoch:
            continue
        mask = previous == rec
        new = np.ascontiguousarray(np.broadcast_to(values, dst.shape).reshape(-1)[mask])
        if new.tobytes() == np.ascontiguousarray(dst._data[flat[mask]]).tobytes():
            continue
        message = (
            "LNC race: cores 0 and 1 write different values to the same elements of "
            f"{dst.name or 'a shared_hbm tensor'} with no nisa.core_barrier between the writes; "
            "which one survives depends on hardware timing"
        )
        ctx.warn(message, location=there)
        ctx.warn(message, location=here)
    writes.records.append((core.core_id, epoch, here))
    writes.last[tracked] = len(writes.records) - 1
