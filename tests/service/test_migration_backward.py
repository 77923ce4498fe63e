"""``service.migration`` on the constructs of a flash-attention backward core (nki-samples' reference
``_flash_attn_bwd_core``): results named under an element-independent mask, a select cast by a ``dtype=`` other
than its destination's, a reduction of an expression, and ``nl.loop_reduce`` accumulating over a loop, rewritten
and proven by simulating both versions (the last key tile masked off)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

from nki_studio.protocol.migration import MigrationResult

# Four key tiles, the last masked off by a flag computed from the loop index (``None``: no mask, as the backward
# core's ``mask = ... if use_causal_mask else None``). Every named result, select and reduction carries the mask.
BACKWARD = """\
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


# nki-studio: simulate a=float32[128,512] b=float32[128,128]
@nki.jit
def k(a, b, causal=True):
    out = nl.ndarray((128, 384), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    sums = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    rows = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    res = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
    t = nl.load(a)
    bias = nl.load(b)
    for i in nl.affine_range(4):
        mask = i < 3 if causal else None
        shifted = nl.add(t[:, i * 128:(i + 1) * 128], bias, dtype=nl.float32, mask=mask)
        ip, jf = nl.mgrid[0:128, 0:128]
        sel = i * 32 + ip >= jf
        res[:, i * 128:(i + 1) * 128] = nisa.affine_select(
            pred=sel, on_true_tile=shifted, on_false_value=-9984.0, dtype=nl.float32, mask=mask
        )
        row = nisa.tensor_reduce(np.add, nl.multiply(shifted, shifted, mask=mask), axis=(1,), dtype=nl.float32,
                                 mask=mask)
        neg = nl.multiply(nl.multiply(row, -1.0, mask=mask), row, mask=mask)
        rows[:, 0:1] = nl.loop_reduce(neg, op=np.add, loop_indices=(i,), dtype=nl.float32, mask=mask)
    nl.store(out, value=res[:, 0:384])
    nl.store(sums, value=rows)
    return out, sums
"""


def test_the_backward_core_constructs_are_rewritten_and_proven(
    prove_migration: Callable[..., MigrationResult],
) -> None:
    result = prove_migration(textwrap.dedent(BACKWARD))
    assert result["manual"] == []
    migrated = result["migrated"]
    cond = "if mask is None or mask"
    # a named result is bound either way: computed under the mask, else an allocation of its operands' broadcast
    # shape and its dtype (the same mask on a nested call goes with it)
    assert (
        f"shifted = nl.add(t[:, i * 128:(i + 1) * 128], bias, dtype=nl.float32) {cond} else "
        "nl.ndarray(np.broadcast_shapes(t[:, i * 128:(i + 1) * 128].shape, bias.shape), dtype=nl.float32, "
        "buffer=nl.sbuf)"
    ) in migrated
    assert (
        f"neg = nl.multiply(nl.multiply(row, -1.0), row) {cond} else "
        "nl.ndarray(row.shape, dtype=row.dtype, buffer=nl.sbuf)"
    ) in migrated
    # selected in its own dtype, then copied (cast) into the bfloat16 tile, both under the mask
    assert "affine_select_value = nl.ndarray(shifted.shape, dtype=nl.float32, buffer=nl.sbuf)" in migrated
    assert (
        f"nisa.tensor_copy(dst=res[:, i * 128:(i + 1) * 128], src=affine_select_value) {cond} else None"
    ) in migrated
    # the reduced expression is made first, once
    assert "data_value = nl.multiply(shifted, shifted)" in migrated
    assert "nisa.tensor_reduce(dst=row, op=np.add, data=data_value, axis=(1,))" in migrated
    # the reduction over the loop: a copy at its first iteration, then accumulated
    assert (
        f"{cond}: nisa.tensor_copy(dst=rows[:, 0:1], src=neg) if i == 0 else "
        "nisa.tensor_tensor(dst=rows[:, 0:1], data1=rows[:, 0:1], data2=neg, op=np.add)"
    ) in migrated
    assert "loop_reduce" not in migrated and "mask=" not in migrated
