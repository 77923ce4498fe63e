"""``nki.collectives`` across simulated ranks (collectives.md).

Rank model *(implementation choice; the official simulator does not implement collectives)*: the
simulation runs one kernel instance per collective rank (``simulate(..., ranks=N)``) and logical core,
in lockstep on one thread (``sim.schedule``); ``CoreState.rank`` is the rank id. A ``ReplicaGroup`` naming a rank that does not
exist is an error. Under LNC=2 each logical core exchanges with the same core of the other ranks. Ranks
exchange data through the simulation's mailbox (``isa.multicore``): each collective is a rendezvous of
the caller's group, matched by the order in which each instance issues its collectives.

Reductions are computed in FP32 in rank order and cast to the destination dtype; gathers and permutes copy
stored values bit-exactly. Variable-length collectives work on flat element buffers with the metadata rows of
collectives.md; the 0.7 prepare/trigger pairs run the collective at the trigger.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from nki_studio.sim import context, untaken
from nki_studio.sim.access import read
from nki_studio.sim.errors import HardwareLimitError
from nki_studio.sim.isa import _common as c
from nki_studio.sim.isa.enums import NkiInstruction
from nki_studio.sim.isa.multicore import mailbox
from nki_studio.sim.scalars import VirtualRegister, index_value
from nki_studio.sim.tensor import NkiTensor
from nki_studio.sim.unimplemented import module_getattr

_REDUCE_OPS = ("add", "minimum", "maximum")


@dataclass(init=False)
class ReplicaGroup:
    """Non-overlapping groups of ranks, e.g. ``ReplicaGroup([[0, 1, 2, 3]])`` (field name *inferred*; only
    positional construction is documented)."""

    replica_groups: list[list[int]]

    def __init__(self, replica_groups: Sequence[Sequence[int]]) -> None:
        groups = [[index_value(r) for r in g] for g in replica_groups]
        seen: set[int] = set()
        for g in groups:
            if not g or len(set(g)) != len(g) or seen & set(g):
                raise HardwareLimitError(
                    f"ReplicaGroup: groups must be non-empty and must not overlap: {groups}"
                )
            seen |= set(g)
        self.replica_groups = groups


def _rank() -> int:
    return context.current_core().rank


def _my_group(op: str, group: object) -> list[int]:
    """The caller's group, checked against the ranks that exist in this simulation."""
    if not isinstance(group, ReplicaGroup):
        raise HardwareLimitError(
            f"{op}: replica_group must be an ncc.ReplicaGroup, not {type(group).__name__}"
        )
    ranks = context.current_core().num_ranks
    me = _rank()
    for g in group.replica_groups:
        missing = [r for r in g if not 0 <= r < ranks]
        if missing:
            raise HardwareLimitError(
                f"{op}: ranks {missing} do not exist; this simulation runs {ranks} rank(s) "
                f"(simulate(..., ranks=N) runs N)"
            )
        if me in g:
            return g
    raise HardwareLimitError(f"{op}: rank {me} is in no group of {group.replica_groups}")


def _tensors(
    op: str, srcs: object, dsts: object, *, hbm_only: bool = False
) -> tuple[list[NkiTensor], list[NkiTensor]]:
    """``srcs``/``dsts`` lists of equal length, all HBM or all SBUF; several tensors only in HBM."""
    if (
        not isinstance(srcs, (list, tuple))
        or not isinstance(dsts, (list, tuple))
        or len(srcs) != len(dsts)
        or not srcs
    ):
        raise HardwareLimitError(f"{op}: srcs and dsts must be non-empty lists of the same length")
    allowed = ("hbm",) if hbm_only else ("hbm", "sbuf")
    s = [c.tensor(op, f"srcs[{i}]", t, allowed) for i, t in enumerate(srcs)]
    d = [c.tensor(op, f"dsts[{i}]", t, allowed) for i, t in enumerate(dsts)]
    kinds = {t.buffer.kind for t in s + d}
    if len(kinds) > 1:
        raise HardwareLimitError(f"{op}: tensors must be all in HBM or all in SBUF, not mixed")
    if len(s) > 1 and kinds != {"hbm"}:
        raise HardwareLimitError(f"{op}: coalescing several tensors is supported only in HBM")
    return s, d


def _issue(op: str, srcs: list[NkiTensor], dsts: list[NkiTensor], flops: int = 0) -> None:
    reads = {f"srcs[{i}]": t for i, t in enumerate(srcs)}
    writes = {f"dsts[{i}]": t for i, t in enumerate(dsts)}
    context.issue(op, "dma", reads=reads, writes=writes, flops=flops)


def _exchange(op: str, members: list[int], value: Any) -> dict[int, Any]:
    box = mailbox()
    core = context.current_core().core_id
    seq = box.next_seq(("cc", _rank(), core))
    return box.gather(("cc", core, seq, tuple(members)), members, _rank(), value, op)


def _reduce(op: str, opr: object, arrays: list[np.ndarray]) -> np.ndarray:
    fn = c.alu_op(op, "op", opr, allowed=_REDUCE_OPS)
    out = np.array(arrays[0], np.float32)
    for a in arrays[1:]:
        out = fn.fn(out, a)
    return out


def _check_dim(op: str, dim: object, t: NkiTensor) -> int:
    d = index_value(dim)
    allowed = (0,) if t.buffer.kind == "hbm" else (0, 1)
    if d not in allowed:
        raise HardwareLimitError(
            f"{op}: collective_dim={d} is not supported for {t.buffer.kind.upper()} tensors"
        )
    return d


@untaken.instruction
def all_reduce(
    srcs: object,
    dsts: object,
    replica_group: object,
    op: object,
    priority: object = None,
    name: str | None = None,
) -> NkiInstruction:
    """Every rank's ``dsts[i]`` = ``op``-reduction of ``srcs[i]`` over its group."""
    opname = "ncc.all_reduce"
    group = _my_group(opname, replica_group)
    s, d = _tensors(opname, srcs, dsts)
    c.alu_op(opname, "op", op, allowed=_REDUCE_OPS)
    for i, (a, b) in enumerate(zip(s, d, strict=True)):
        if a.size != b.size:
            raise HardwareLimitError(
                f"{opname}: srcs[{i}] and dsts[{i}] differ in size ({a.size} vs {b.size})"
            )
    _issue(opname, s, d, flops=sum(t.size for t in s) * (len(group) - 1))
    posted = _exchange(opname, group, [np.array(read(t)) for t in s])
    for i, t in enumerate(d):
        c.store(t, _reduce(opname, op, [posted[r][i] for r in group]).reshape(t.shape))
    return c.handle(opname, name)


@untaken.instruction
def all_gather(
    srcs: object,
    dsts: object,
    replica_group: object,
    collective_dim: object,
    priority: object = None,
    name: str | None = None,
) -> NkiInstruction:
    """``dsts[i]`` = all ranks' ``srcs[i]`` concatenated in group order along ``collective_dim`` (HBM: dim 0;
    SBUF: 0 or 1 of 2-D tiles)."""
    opname = "ncc.all_gather"
    group = _my_group(opname, replica_group)
    s, d = _tensors(opname, srcs, dsts)
    dim = _check_dim(opname, collective_dim, s[0])
    _issue(opname, s, d)
    posted = _exchange(opname, group, [np.array(read(t, raw=True)) for t in s])
    for i, t in enumerate(d):
        out = np.concatenate([posted[r][i] for r in group], axis=dim)
        if out.shape != t.shape:
            raise HardwareLimitError(
                f"{opname}: dsts[{i}] {list(t.shape)} must be the gathered shape {list(out.shape)}"
            )
        c.store(t, out)
    return c.handle(opname, name)


@untaken.instruction
def reduce_scatter(
    srcs: object,
    dsts: object,
    replica_group: object,
    collective_dim: object,
    op: object,
    priority: object = None,
    name: str | None = None,
) -> NkiInstruction:
    """Reduce over the group, then the rank at position ``k`` of its group keeps split ``k`` along dim 0."""
    opname = "ncc.reduce_scatter"
    group = _my_group(opname, replica_group)
    s, d = _tensors(opname, srcs, dsts)
    if index_value(collective_dim) != 0:
        raise HardwareLimitError(f"{opname}: only collective_dim=0 is supported")
    c.alu_op(opname, "op", op, allowed=_REDUCE_OPS)
    _issue(opname, s, d, flops=sum(t.size for t in s) * (len(group) - 1))
    posted = _exchange(opname, group, [np.array(read(t)) for t in s])
    k = group.index(_rank())
    for i, t in enumerate(d):
        total = _reduce(opname, op, [posted[r][i] for r in group])
        if total.shape[0] % len(group):
            raise HardwareLimitError(
                f"{opname}: srcs[{i}] dim 0 ({total.shape[0]}) does not split into {len(group)} equal parts"
            )
        c.store(t, np.split(total, len(group), axis=0)[k])
    return c.handle(opname, name)


@untaken.instruction
def all_to_all(
    srcs: object,
    dsts: object,
    replica_group: object,
    collective_dim: object,
    priority: object = None,
    name: str | None = None,
) -> NkiInstruction:
    """Split ``srcs[i]`` along dim 0 into group-size chunks; chunk ``j`` goes to the ``j``-th rank of the
    group; received chunks are concatenated in sender order (HBM only)."""
    opname = "ncc.all_to_all"
    group = _my_group(opname, replica_group)
    s, d = _tensors(opname, srcs, dsts, hbm_only=True)
    if index_value(collective_dim) != 0:
        raise HardwareLimitError(f"{opname}: only collective_dim=0 is supported")
    for i, t in enumerate(s):
        if t.shape[0] % len(group):
            raise HardwareLimitError(
                f"{opname}: srcs[{i}] dim 0 ({t.shape[0]}) does not split into {len(group)} equal parts"
            )
    _issue(opname, s, d)
    posted = _exchange(opname, group, [np.split(np.array(read(t, raw=True)), len(group), axis=0) for t in s])
    k = group.index(_rank())
    for i, t in enumerate(d):
        c.store(t, np.concatenate([posted[r][i][k] for r in group], axis=0))
    return c.handle(opname, name)


@untaken.instruction
def collective_permute(
    srcs: object, dsts: object, source_target_pairs: object, priority: object = None, name: str | None = None
) -> NkiInstruction:
    """Explicit ``(source, target)`` pairs: the source's ``srcs[0]`` lands in the target's ``dsts[0]``; a
    rank that is no target keeps its ``dsts`` (HBM only, one tensor per list)."""
    opname = "ncc.collective_permute"
    s, d = _tensors(opname, srcs, dsts, hbm_only=True)
    if len(s) != 1:
        raise HardwareLimitError(f"{opname}: exactly one tensor per list")
    try:
        pairs = [(index_value(a), index_value(b)) for a, b in source_target_pairs]  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        raise HardwareLimitError(f"{opname}: source_target_pairs must be (source, target) pairs") from None
    members = sorted({r for p in pairs for r in p})
    ranks = context.current_core().num_ranks
    if any(not 0 <= r < ranks for r in members):
        raise HardwareLimitError(f"{opname}: pairs {pairs} name ranks beyond the {ranks} simulated rank(s)")
    me = _rank()
    if me not in members:
        return c.handle(opname, name)
    _issue(opname, s, d)
    posted = _exchange(opname, members, np.array(read(s[0], raw=True)))
    sources = [a for a, b in pairs if b == me]
    if len(sources) > 1:
        raise HardwareLimitError(f"{opname}: rank {me} is the target of several sources {sources}")
    if sources:
        c.store(d[0], posted[sources[0]].reshape(d[0].shape))
    return c.handle(opname, name)


def _ring(
    op: str, srcs_by_channel: object, dsts_by_channel: object, replica_group: object, channel_ids: object
) -> tuple[list[int], list[NkiTensor], list[NkiTensor]]:
    group = _my_group(op, replica_group)
    if not isinstance(srcs_by_channel, (list, tuple)) or not isinstance(dsts_by_channel, (list, tuple)):
        raise HardwareLimitError(f"{op}: srcs/dsts must be lists (one inner list per channel)")
    ids = list(channel_ids) if isinstance(channel_ids, (list, tuple)) else [channel_ids]
    if ids != list(range(len(ids))) or len(ids) != len(srcs_by_channel) or len(ids) > 4:
        raise HardwareLimitError(f"{op}: channel_ids must be consecutive from 0, one per channel (at most 4)")
    s: list[NkiTensor] = []
    d: list[NkiTensor] = []
    for ch, (ss, dd) in enumerate(zip(srcs_by_channel, dsts_by_channel, strict=True)):
        a, b = _tensors(f"{op} channel {ch}", ss, dd)
        if len(a) != 1:
            raise HardwareLimitError(f"{op}: each channel carries exactly one tensor")
        s.append(a[0])
        d.append(b[0])
    return group, s, d


@untaken.instruction
def collective_permute_implicit(
    srcs_by_channel: object,
    dsts_by_channel: object,
    replica_group: object,
    channel_ids: object = (0,),
    priority: object = None,
    name: str | None = None,
) -> NkiInstruction:
    """Ring step: each rank sends to its successor in the group and receives from its predecessor."""
    opname = "ncc.collective_permute_implicit"
    group, s, d = _ring(opname, srcs_by_channel, dsts_by_channel, replica_group, channel_ids)
    _issue(opname, s, d)
    posted = _exchange(opname, group, [np.array(read(t, raw=True)) for t in s])
    pred = group[(group.index(_rank()) - 1) % len(group)]
    for ch, t in enumerate(d):
        c.store(t, posted[pred][ch].reshape(t.shape))
    return c.handle(opname, name)


@untaken.instruction
def collective_permute_implicit_reduce(
    srcs0_by_channel: object,
    srcs1_by_channel: object,
    dsts_by_channel: object,
    replica_group: object,
    op: object,
    channel_ids: object = (0,),
    priority: object = None,
    name: str | None = None,
) -> NkiInstruction:
    """Ring step with a local reduction: send ``op(srcs0[i], srcs1[i])`` to the successor and receive the
    predecessor's reduced value into ``dsts[i]``."""
    opname = "ncc.collective_permute_implicit_reduce"
    group, s0, d = _ring(opname, srcs0_by_channel, dsts_by_channel, replica_group, channel_ids)
    _, s1, _ = _ring(opname, srcs1_by_channel, dsts_by_channel, replica_group, channel_ids)
    c.alu_op(opname, "op", op, allowed=_REDUCE_OPS)
    _issue(opname, s0 + s1, d, flops=sum(t.size for t in s0))
    mine = [
        _reduce(opname, op, [np.array(read(a)), np.array(read(b)).reshape(a.shape)])
        for a, b in zip(s0, s1, strict=True)
    ]
    posted = _exchange(opname, group, mine)
    pred = group[(group.index(_rank()) - 1) % len(group)]
    for ch, t in enumerate(d):
        c.store(t, posted[pred][ch].reshape(t.shape))
    return c.handle(opname, name)


def collective_permute_implicit_current_processing_rank_id(
    iteration_id: object, replica_group: object, channel_id: object = 0, name: str | None = None
) -> VirtualRegister:
    """Whose data a ring step ``iteration_id`` is processing: the own rank at step 0, then predecessors."""
    group = _my_group("ncc.collective_permute_implicit_current_processing_rank_id", replica_group)
    step = index_value(iteration_id)
    return VirtualRegister(group[(group.index(_rank()) - step) % len(group)])


def rank_id(name: str | None = None) -> VirtualRegister:
    """This instance's collective rank."""
    return VirtualRegister(_rank())


def _metadata(
    op: str, metadata_tensor: object, group: list[int], has_rdispls: bool
) -> tuple[NkiTensor, np.ndarray]:
    """The ``(rows, G)`` uint32 metadata (HBM) or ``(1, rows, G)`` (SBUF) of a variable-length collective."""
    rows = 4 if has_rdispls else 3
    meta = c.tensor(op, "metadata_tensor", metadata_tensor, ("hbm", "sbuf"))
    c.dtype_in(op, "metadata_tensor", meta, ("uint32",))
    if meta.size != rows * len(group) or meta.shape[-1] != len(group) or not meta.is_contiguous():
        raise HardwareLimitError(
            f"{op}: metadata_tensor must be a contiguous ({rows}, {len(group)}) uint32 tensor "
            f"((1, {rows}, {len(group)}) in SBUF), got {list(meta.shape)}"
        )
    return meta, np.array(read(meta, raw=True)).reshape(rows, len(group)).astype(np.int64)


def _flat_pair(op: str, srcs: object, dsts: object) -> tuple[NkiTensor, NkiTensor]:
    s, d = _tensors(op, srcs, dsts, hbm_only=True)
    if len(s) != 1:
        raise HardwareLimitError(f"{op}: exactly one tensor per list")
    return s[0], d[0]


def _chunk(op: str, flat: np.ndarray, start: int, count: int, what: str) -> np.ndarray:
    if start < 0 or count < 0 or start + count > flat.size:
        raise HardwareLimitError(
            f"{op}: {what} [{start}, {start + count}) is outside the {flat.size}-element buffer"
        )
    return flat[start : start + count]


def _write_recv_counts(meta: NkiTensor, table: np.ndarray, counts: list[int]) -> None:
    table = table.copy()
    table[2] = counts
    c.store(meta, table.astype(np.uint32).reshape(meta.shape))


@untaken.instruction
def all_gather_v(
    srcs: object,
    dsts: object,
    replica_group: object,
    metadata_tensor: object,
    recv_counts_known: bool = False,
    has_rdispls: bool = False,
    priority: object = None,
    name: str | None = None,
) -> NkiInstruction:
    """Variable-length all-gather on flat buffers (0.6.0): each rank broadcasts
    ``src[send_displ : send_displ + send_count]``; sender ``s``'s chunk lands at ``dst[s*slot ...]`` with
    ``slot = dst.size / G``. Metadata rows: send_count, send_displ (first column), recv_counts (written
    unless ``recv_counts_known``). Limits (collectives.md): LNC=2, groups of exactly 4 ranks, no rdispls."""
    opname = "ncc.all_gather_v"
    group = _my_group(opname, replica_group)
    if has_rdispls:
        raise HardwareLimitError(f"{opname}: has_rdispls=True is not supported")
    if context.current_core().num_cores != 2 or len(group) != 4:
        raise HardwareLimitError(f"{opname} needs LNC=2 and replica groups of exactly 4 ranks")
    s, d = _flat_pair(opname, srcs, dsts)
    meta, table = _metadata(opname, metadata_tensor, group, False)
    _issue(opname, [s], [d])
    chunk = _chunk(
        opname, np.array(read(s, raw=True)).reshape(-1), int(table[1, 0]), int(table[0, 0]), "send range"
    )
    posted = _exchange(opname, group, chunk)
    out = np.array(read(d, raw=True)).reshape(-1)
    slot = d.size // len(group)
    for k, r in enumerate(group):
        if posted[r].size > slot:
            raise HardwareLimitError(
                f"{opname}: rank {r} sends {posted[r].size} elements, more than the slot of {slot}"
            )
        out[k * slot : k * slot + posted[r].size] = posted[r]
    c.store(d, out.reshape(d.shape))
    if not recv_counts_known:
        _write_recv_counts(meta, table, [posted[r].size for r in group])
    return c.handle(opname, name)


@untaken.instruction
def all_to_all_v(
    srcs: object,
    dsts: object,
    replica_group: object,
    metadata_tensor: object,
    recv_counts_known: bool = False,
    has_rdispls: bool = False,
    priority: object = None,
    name: str | None = None,
) -> NkiInstruction:
    """Variable-length all-to-all on flat buffers (0.3.0): rank ``r`` sends ``src[send_displs[j] :
    send_displs[j] + send_counts[j]]`` to the ``j``-th rank of the group; the chunk from the ``k``-th rank
    lands at ``recv_displs[k]`` (with ``has_rdispls``) or at ``(dst.size / G) * k``. Metadata rows:
    send_counts, send_displs, recv_counts (written unless ``recv_counts_known``), recv_displs. The
    platform restrictions of collectives.md (NeuronSwitch, inter-node groups) are not modelled."""
    opname = "ncc.all_to_all_v"
    group = _my_group(opname, replica_group)
    s, d = _flat_pair(opname, srcs, dsts)
    meta, table = _metadata(opname, metadata_tensor, group, has_rdispls)
    _issue(opname, [s], [d])
    flat = np.array(read(s, raw=True)).reshape(-1)
    chunks = [
        _chunk(opname, flat, int(table[1, j]), int(table[0, j]), f"send range for rank {r}")
        for j, r in enumerate(group)
    ]
    posted = _exchange(opname, group, chunks)
    me = group.index(_rank())
    out = np.array(read(d, raw=True)).reshape(-1)
    slot = d.size // len(group)
    received = [posted[r][me] for r in group]
    for k, part in enumerate(received):
        start = int(table[3, k]) if has_rdispls else k * slot
        if start < 0 or start + part.size > out.size:
            raise HardwareLimitError(
                f"{opname}: the chunk from rank {group[k]} does not fit at element {start}"
            )
        out[start : start + part.size] = part
    c.store(d, out.reshape(d.shape))
    if not recv_counts_known:
        _write_recv_counts(meta, table, [p.size for p in received])
    return c.handle(opname, name)


class _Prepared(NkiInstruction):
    """A 0.7 ``*_v_prepare`` handle: the arguments its trigger runs the collective with."""

    __slots__ = ("args", "kwargs", "run")

    def __init__(
        self, op: str, run: Any, args: tuple[Any, ...], kwargs: dict[str, Any], name: str | None
    ) -> None:
        super().__init__(op, name)
        self.run, self.args, self.kwargs = run, args, kwargs


def _prepare(api: str, run: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Prepared:
    """Record a prepare; prepares share one slot, so a second prepare before the trigger is an error
    (nki-0.7.md §2.7)."""
    regs = context.current_core().registers
    if regs.get("ncc.prepared") is not None:
        raise HardwareLimitError(
            f"ncc.{api}: the previous prepare has not been triggered yet (one prepare slot)"
        )
    handle = _Prepared(f"ncc.{api}", run, args, kwargs, kwargs.pop("name", None))
    regs["ncc.prepared"] = handle
    return handle


def _trigger(api: str, prepare_instr: object, kind: str) -> NkiInstruction:
    regs = context.current_core().registers
    pending: object = regs.get("ncc.prepared")  # typed object: an identity test must not narrow the handle
    if (
        not isinstance(prepare_instr, _Prepared)
        or pending is not prepare_instr
        or not prepare_instr.op.startswith(f"ncc.{kind}")
    ):
        raise HardwareLimitError(f"ncc.{api}: prepare_instr must be the pending ncc.{kind}_prepare handle")
    regs["ncc.prepared"] = None
    return prepare_instr.run(*prepare_instr.args, **prepare_instr.kwargs)


def all_to_all_v_prepare(*args: Any, **kwargs: Any) -> NkiInstruction:
    """0.7: first half of ``all_to_all_v`` (the simulator runs the whole collective at the trigger)."""
    return _prepare("all_to_all_v_prepare", all_to_all_v, args, kwargs)


def all_to_all_v_trigger(prepare_instr: object, name: str | None = None) -> NkiInstruction:
    """0.7: second half of ``all_to_all_v``."""
    return _trigger("all_to_all_v_trigger", prepare_instr, "all_to_all_v")


def all_gather_v_prepare(*args: Any, **kwargs: Any) -> NkiInstruction:
    """0.7: first half of ``all_gather_v``."""
    return _prepare("all_gather_v_prepare", all_gather_v, args, kwargs)


# The prepares take exactly their collective's parameters (the API pages): introspection shows those.
all_to_all_v_prepare.__signature__ = inspect.signature(all_to_all_v)  # type: ignore[attr-defined]
all_gather_v_prepare.__signature__ = inspect.signature(all_gather_v)  # type: ignore[attr-defined]


def all_gather_v_trigger(prepare_instr: object, name: str | None = None) -> NkiInstruction:
    """0.7: second half of ``all_gather_v`` (signature assumed identical to the all-to-all trigger)."""
    return _trigger("all_gather_v_trigger", prepare_instr, "all_gather_v")


__getattr__ = module_getattr("ncc", {}, "not a documented nki.collectives name")

__all__ = [
    "ReplicaGroup",
    "all_gather",
    "all_gather_v",
    "all_gather_v_prepare",
    "all_gather_v_trigger",
    "all_reduce",
    "all_to_all",
    "all_to_all_v",
    "all_to_all_v_prepare",
    "all_to_all_v_trigger",
    "collective_permute",
    "collective_permute_implicit",
    "collective_permute_implicit_current_processing_rank_id",
    "collective_permute_implicit_reduce",
    "rank_id",
    "reduce_scatter",
]
