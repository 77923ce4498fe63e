"""``t[...] = value`` the legacy way: a value-returning call assigned at once writes into ``t``.

A legacy call returns its result tile, and ``t[...] = nisa.nc_matmul(a, b)`` makes the instruction write into
``t``: the toolchain has no temporary there. With direct allocation "all PSUM tensors in a kernel must either all
be marked as auto_alloc(), or all be allocated with alloc or mod_alloc" [v2.26.1 nki.compiler.psum.auto_alloc],
so the unallocated result of ``qk_psum[...] = nisa.nc_matmul(...)`` can only be ``qk_psum`` itself (nki-samples'
allocated SD attention places all eight PSUM banks by hand and assigns matmul results into them). Capacity
therefore counts the assigned tensor only; a result some later instruction uses first is a tile of its own.

``nl.loop_reduce(x, op, loop_indices)`` reads its destination: "the destination tile is also the rhs input to
op" [v2.26.1 nki.language.loop_reduce], so ``t[...] = nl.loop_reduce(x, np.add, ...)`` is ``t[...] = t[...] + x``
(nki-samples' flash-attention backward accumulates dQ per query tile this way, with other tiles' reductions from
the same line in between). The reduction starts over at the first iteration of its loops (every loop index 0):
there ``t[...]`` becomes ``x``, as a name-bound result does. Compiler-generated kernels (AccelOpt's NKIBench
``rmsnorm_matmul``) reduce into an ``nl.ndarray`` nothing wrote before, and pass their NumPy check on hardware,
so the unwritten destination cannot enter the first step (inferred); a destination zero-filled first gives the
same sum either way. A ``mask=`` on the call applies as on any instruction writing into a tensor: a tile it
masks off is left out of the reduction (nki-samples' flash-attention backward masks causal tiles so).
"""

from __future__ import annotations

import sys
import weakref

import numpy as np
from nki_studio.sim import context
from nki_studio.sim.access import read, write
from nki_studio.sim.alu import AluOp
from nki_studio.sim.isa import _common
from nki_studio.sim.legacy import masks
from nki_studio.sim.legacy_hooks import register
from nki_studio.sim.tensor import NkiTensor
from nki_studio.sim.tensor_base import Storage

# Storages of result tiles no later instruction has used yet.
_fresh: weakref.WeakSet[Storage] = weakref.WeakSet()
# Storage of a loop_reduce result -> (the reduced tile x, the operator, whether the reduction starts over): its
# destination is only known when assigned.
_reductions: weakref.WeakKeyDictionary[Storage, tuple[NkiTensor, AluOp, bool]] = weakref.WeakKeyDictionary()


def fresh(result: NkiTensor) -> NkiTensor:
    """Mark ``result`` as the new result tile of a value-returning call (before its instruction writes it)."""
    _fresh.add(result.storage)
    return result


def reduction(result: NkiTensor, x: NkiTensor, op: AluOp, first: bool) -> NkiTensor:
    """Mark ``result`` as ``loop_reduce``'s: assigned into ``t``, ``t`` becomes ``op(t, x)`` (``x`` when ``first``:
    every reduction loop index is 0)."""
    _reductions[fresh(result).storage] = (x, op, first)
    return result


def written_into(value: object, target: NkiTensor) -> Storage | None:
    """``value`` is about to be written into ``target`` (``t[...] = value``, ``t += value``): when it is the
    result of the instruction just issued, and nothing else used it since, that instruction wrote the tensor, so
    the result is dropped from the capacity accounting and the trace records the instruction writing ``target``.
    Its storage when ``value`` was a fresh result, else None."""
    if not isinstance(value, NkiTensor) or value.storage not in _fresh:
        return None
    storage = value.storage
    _fresh.discard(storage)
    live = storage.live
    if live is not None and live.tracker is not None and live.first == live.last == live.clock():
        live.tracker.elide(live)
        recorder = context.current().recorder
        if recorder is not None:
            recorder.redirect(storage, target)
    return storage


def assign(target: NkiTensor, value: object) -> bool:
    """``target[...] = value`` (``legacy_hooks.Results``): True when done here (a ``loop_reduce`` result), False for
    the ordinary copy."""
    storage = written_into(value, target)
    reduced = None if storage is None else _reductions.pop(storage, None)
    keep = masks.result_mask(value)
    if reduced is None and keep is not None and isinstance(value, NkiTensor) and keep.size == target.size:
        # a masked instruction writing into the target: only where its mask holds (masks.py)
        write(target, read(value).reshape(target.shape), where=keep.reshape(target.shape))
        return True
    if reduced is None:
        return False
    # The loop_reduce call issued the instruction; only its destination operand was unknown until now. Its own
    # mask= applies as any instruction's: masked-off elements of the destination keep their values.
    x, op, first = reduced
    if first:
        value = read(x)
    else:
        with np.errstate(all="ignore"):
            value = np.asarray(_common.apply(op, _common.mat(target), _common.mat(x)))
    where = keep.reshape(target.shape) if keep is not None and keep.size == target.size else None
    write(target, value.reshape(target.shape), where=where)
    return True


register(result_hook=sys.modules[__name__])
