"""``nki.collectives`` (``ncc``): communication between ranks (NKI 0.6.0; 0.7 additions marked).

Tensor arguments are lists (several tensors = one coalesced operation, HBM only); all HBM or all SBUF in one call.
Reductions take ``nl.add``, ``nl.minimum`` or ``nl.maximum``; ``priority`` (0-3, lower first) needs trn3.
Not implemented by the official CPU simulator. Stubs written by nki-studio from its reference notes.
"""

from collections.abc import Sequence
from typing import Any

from nki.isa import NkiInstruction, VirtualRegister
from nki.language import NKIObject, NkiTensor

Op = Any

class ReplicaGroup(NKIObject):
    """Groups of ranks taking part in a collective, e.g. ``ReplicaGroup([[0, 1, 2, 3]])``; groups must not overlap."""

    def __init__(self, groups: Sequence[Sequence[int]]) -> None: ...

def all_reduce(
    srcs: Sequence[NkiTensor],
    dsts: Sequence[NkiTensor],
    replica_group: ReplicaGroup,
    op: Op,
    priority: int | None = None,
    name: str | None = None,
) -> None:
    """Each rank's ``dsts[i]`` = ``op``-reduction of ``srcs[i]`` over the ranks of its group."""

def all_gather(
    srcs: Sequence[NkiTensor],
    dsts: Sequence[NkiTensor],
    replica_group: ReplicaGroup,
    collective_dim: int,
    priority: int | None = None,
    name: str | None = None,
) -> None:
    """Concatenate every rank's ``srcs[i]`` along ``collective_dim`` (HBM: 0 only; SBUF: 0 or 1, 2-D)."""

def all_gather_v(
    srcs: Sequence[NkiTensor],
    dsts: Sequence[NkiTensor],
    replica_group: ReplicaGroup,
    metadata_tensor: NkiTensor,
    recv_counts_known: bool = False,
    has_rdispls: bool = False,
    priority: int | None = None,
    name: str | None = None,
) -> None:
    """Variable-length all-gather on flat buffers driven by a uint32 metadata tensor. New in 0.6.0; LNC=2 only."""

def reduce_scatter(
    srcs: Sequence[NkiTensor],
    dsts: Sequence[NkiTensor],
    replica_group: ReplicaGroup,
    collective_dim: int,
    op: Op,
    priority: int | None = None,
    name: str | None = None,
) -> None:
    """Reduce across ranks, then rank ``r`` keeps the ``r``-th split along ``collective_dim`` (0 only)."""

def all_to_all(
    srcs: Sequence[NkiTensor],
    dsts: Sequence[NkiTensor],
    replica_group: ReplicaGroup,
    collective_dim: int,
    priority: int | None = None,
    name: str | None = None,
) -> None:
    """Split ``srcs[i]`` into group-size chunks, chunk ``j`` to rank ``j`` (HBM only, ``collective_dim=0``)."""

def all_to_all_v(
    srcs: Sequence[NkiTensor],
    dsts: Sequence[NkiTensor],
    replica_group: ReplicaGroup,
    metadata_tensor: NkiTensor,
    recv_counts_known: bool = False,
    has_rdispls: bool = False,
    priority: int | None = None,
    name: str | None = None,
) -> None:
    """All-to-all with per-destination counts from a metadata tensor (since 0.3.0)."""

def collective_permute(
    srcs: Sequence[NkiTensor],
    dsts: Sequence[NkiTensor],
    source_target_pairs: Sequence[tuple[int, int]],
    priority: int | None = None,
    name: str | None = None,
) -> None:
    """Send data along explicit ``(source, target)`` rank pairs (HBM only, one tensor per list)."""

def collective_permute_implicit(
    srcs_by_channel: Sequence[Sequence[NkiTensor]],
    dsts_by_channel: Sequence[Sequence[NkiTensor]],
    replica_group: ReplicaGroup,
    channel_ids: Sequence[int] = ...,
    priority: int | None = None,
    name: str | None = None,
) -> None:
    """Ring step: send to the successor, receive from the predecessor (up to 4 channels)."""

def collective_permute_implicit_reduce(
    srcs0_by_channel: Sequence[Sequence[NkiTensor]],
    srcs1_by_channel: Sequence[Sequence[NkiTensor]],
    dsts_by_channel: Sequence[Sequence[NkiTensor]],
    replica_group: ReplicaGroup,
    op: Op,
    channel_ids: Sequence[int] = ...,
    priority: int | None = None,
    name: str | None = None,
) -> None:
    """Ring step sending ``op(srcs0[i], srcs1[i])`` and receiving the predecessor's reduced value."""

def collective_permute_implicit_current_processing_rank_id(
    iteration_id: Any, replica_group: ReplicaGroup, channel_id: int = 0, name: str | None = None
) -> VirtualRegister:
    """Rank whose data is processed at ring step ``iteration_id`` (a register)."""

def rank_id(name: str | None = None) -> VirtualRegister:
    """This rank's id within the collective group (a register)."""

def all_to_all_v_prepare(
    srcs: Sequence[NkiTensor],
    dsts: Sequence[NkiTensor],
    replica_group: ReplicaGroup,
    metadata_tensor: NkiTensor,
    recv_counts_known: bool = False,
    has_rdispls: bool = False,
    priority: int | None = None,
    name: str | None = None,
) -> NkiInstruction:
    """0.7 only: metadata half of ``all_to_all_v``; follow with exactly one ``all_to_all_v_trigger``. Not on Trn3 UltraServer."""

def all_to_all_v_trigger(prepare_instr: NkiInstruction, name: str | None = None) -> NkiInstruction:
    """0.7 only: data half of ``all_to_all_v`` (reuses the prepare's arguments)."""

def all_gather_v_prepare(
    srcs: Sequence[NkiTensor],
    dsts: Sequence[NkiTensor],
    replica_group: ReplicaGroup,
    metadata_tensor: NkiTensor,
    recv_counts_known: bool = False,
    has_rdispls: bool = False,
    priority: int | None = None,
    name: str | None = None,
) -> NkiInstruction:
    """0.7 only: metadata half of ``all_gather_v``; follow with exactly one ``all_gather_v_trigger``."""

def all_gather_v_trigger(prepare_instr: NkiInstruction, name: str | None = None) -> NkiInstruction:
    """0.7 only: data half of ``all_gather_v`` (signature assumed equal to the all-to-all trigger; inferred)."""
