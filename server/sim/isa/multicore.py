"""Cross-core instructions (isa.md §6): ``core_barrier`` and ``sendrecv`` between the two cores of an LNC=2
launch, plus the mailbox they (and ``nki.collectives``) exchange data through.

Each kernel instance is logical core ``core_id`` of collective rank ``rank``; the instances of a launch run in
lockstep on one thread (``sim.schedule``). ``core_barrier`` and ``sendrecv`` pair the cores of one rank;
collectives pair the same core of different ranks. An instance waiting for a value lets the others run until
it arrives; when no instance can continue (a rendezvous the others never reach) the wait raises at once.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
from nki_studio.sim import checks, context, races, untaken
from nki_studio.sim.access import read
from nki_studio.sim.errors import HardwareLimitError, SimulationError
from nki_studio.sim.isa import _common as c
from nki_studio.sim.isa.enums import NkiInstruction, dma_engine, engine
from nki_studio.sim.schedule import Baton
from nki_studio.sim.tensor import NkiTensor


class Mailbox:
    """Values posted by ranks under keys, taken by other ranks; one per simulation (``ctx.shared``). No lock:
    only the running instance touches it."""

    def __init__(self) -> None:
        self.slots: dict[Hashable, Any] = {}
        self.counters: dict[Hashable, int] = {}

    def next_seq(self, key: Hashable) -> int:
        """A per-key sequence number (e.g. the n-th send of core 0 on pipe 3)."""
        n = self.counters.get(key, 0)
        self.counters[key] = n + 1
        return n

    def post(self, key: Hashable, value: Any) -> None:
        """Publish ``value`` under ``key``."""
        self.slots[key] = value

    def wait_for(self, keys: Sequence[Hashable], what: str) -> list[Any]:
        """Wait until every key is present (the other instances run meanwhile: ``sim.schedule``); returns
        their values (left in place). Raises ``SimulationError`` when no instance can post them."""

        def ready() -> bool:
            return all(k in self.slots for k in keys)

        if not ready():
            ctx = context.current()
            baton: Baton | None = ctx.shared.get("baton")
            if baton is None:
                raise SimulationError(
                    f"deadlock: {what} waits for another kernel instance, and this launch has one"
                )
            baton.block(ctx.cores.index(context.current_core()), ready, what)
        return [self.slots[k] for k in keys]

    def take(self, key: Hashable, what: str) -> Any:
        """Wait for ``key`` and remove it (single consumer)."""
        value = self.wait_for([key], what)[0]
        del self.slots[key]
        return value

    def gather(
        self, prefix: Hashable, members: Sequence[int], rank: int, value: Any, what: str
    ) -> dict[int, Any]:
        """All-to-all rendezvous: post ``value`` as ``rank`` and return every member's value. The last member
        to read removes the slots."""
        self.post((prefix, rank), value)
        keys = [(prefix, m) for m in members]
        values = self.wait_for(keys, what)
        done = self.counters.get((prefix, "read"), 0) + 1
        self.counters[(prefix, "read")] = done
        if done == len(members):
            for k in keys:
                del self.slots[k]
            del self.counters[(prefix, "read")]
        return dict(zip(members, values, strict=True))


def mailbox() -> Mailbox:
    """The current simulation's mailbox."""
    ctx = context.current()
    box = ctx.shared.get("mailbox")
    if box is None:
        box = Mailbox()
        ctx.shared["mailbox"] = box
    return box


@untaken.instruction
def core_barrier(
    data: NkiTensor, cores: object, engine: object = engine.gpsimd, name: str | None = None
) -> NkiInstruction:
    """Both cores of an LNC=2 launch wait for each other around the shared-HBM tensor ``data`` (v3+,
    isa.md §6.1). Under LNC=1 there is no other core: a warning, then a no-op."""
    op = "nisa.core_barrier"
    c.require_version(op, 3)
    t = checks.tensor_arg(op, "data", data)
    if not isinstance(cores, (tuple, list)) or tuple(cores) != (0, 1):
        raise HardwareLimitError(f"{op}: cores must be (0, 1), got {cores!r}")
    eng = c.engine_name(op, engine, "gpsimd", ("gpsimd", "vector", "scalar", "tensor", "sync"))
    context.issue(op, eng, reads={"data": t})
    core = context.current_core()
    if core.num_cores < 2:
        context.warn(f"{op} in a kernel launched with LNC=1 has no other core to wait for")
        return c.handle(op, name)
    box = mailbox()
    seq = box.next_seq(("barrier", core.rank, core.core_id))
    box.gather(("barrier", core.rank, seq), range(core.num_cores), core.core_id, None, op)
    races.synchronised()
    return c.handle(op, name)


_GPSIMD_DMA_BYTES = {4: 1024, 2: 512, 1: 256}  # per partition with dma_engine.gpsimd_dma (isa.md §6.2)


@untaken.instruction
def sendrecv(
    src: NkiTensor,
    dst: NkiTensor,
    send_to_rank: int,
    recv_from_rank: int,
    pipe_id: int,
    dma_engine: object = dma_engine.dma,
    name: str | None = None,
) -> NkiInstruction:
    """Send this core's ``src`` tile to ``send_to_rank`` and receive ``dst`` from ``recv_from_rank``
    (v3+, LNC=2, isa.md §6.2); calls with the same ``pipe_id`` pair up in program order."""
    op = "nisa.sendrecv"
    c.require_version(op, 3)
    s = c.tensor(op, "src", src, c.SBUF)
    d = c.tensor(op, "dst", dst, c.SBUF)
    if s.dtype_name != d.dtype_name or s.shape != d.shape:
        raise HardwareLimitError(
            f"{op}: src {list(s.shape)} {s.dtype_name} and dst {list(d.shape)} "
            f"{d.dtype_name} must have the same shape and dtype"
        )
    core = context.current_core()
    for role, rank in (("send_to_rank", send_to_rank), ("recv_from_rank", recv_from_rank)):
        if rank not in range(core.num_cores) or rank not in (0, 1):
            raise HardwareLimitError(
                f"{op}: {role}={rank!r} is not a core of this launch (LNC={core.num_cores})"
            )
    if dma_engine == 2:  # gpsimd_dma
        cap = _GPSIMD_DMA_BYTES.get(s.dtype.itemsize, 1024)
        if checks.free_size(s) * s.dtype.itemsize > cap:
            raise HardwareLimitError(
                f"{op} with dma_engine.gpsimd_dma carries at most {cap} bytes per partition"
            )
    context.issue(op, "dma", reads={"src": s}, writes={"dst": d})
    box = mailbox()
    me, rank = core.core_id, core.rank
    send_seq = box.next_seq(("send", rank, pipe_id, me, send_to_rank))
    recv_seq = box.next_seq(("recv", rank, pipe_id, recv_from_rank, me))
    box.post(("sr", rank, pipe_id, me, send_to_rank, send_seq), np.array(read(s, raw=True)))
    c.store(d, box.take(("sr", rank, pipe_id, recv_from_rank, me, recv_seq), op))
    races.synchronised()  # each core waited for the other's send
    return c.handle(op, name)
