"""``service.migration`` on the flash-attention shapes of legacy code: causal and sliding-window predicates held in
names over position tiles built on ``nl.mgrid`` (``q_pos >= k_pos``), rewritten into ``affine_select``'s 0.7 operands and proven."""

from __future__ import annotations

from collections.abc import Callable

from nki_studio.protocol.migration import MigrationResult

CAUSAL = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


# nki-studio: simulate s=float32[256,128]
@nki.jit
def masked_scores(s):
    out = nl.ndarray((256, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    for q_tile in nl.affine_range(2):
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(128)[None, :]
        i_q_p, i_q_f = nl.mgrid[0:128, 0:128]
        q_pos = q_tile * 128 + i_q_p
        k_pos = 64 + i_q_f
        pred_causal = q_pos >= k_pos  # causal mask
        pred_sliding = k_pos > q_pos - 100  # sliding window
        t = nl.load(s[q_tile * 128 + i_p, i_f])
        r = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        r[...] = nisa.affine_select(pred=pred_causal, on_true_tile=t, on_false_value=-9984.0, dtype=nl.float32)
        w = nisa.affine_select(pred_sliding, r, -9984.0)
        nl.store(out[q_tile * 128 + i_p, i_f], value=w)
    return out
"""


def test_predicates_held_in_names_are_rewritten_and_proven(
    prove_migration: Callable[..., MigrationResult],
) -> None:
    result = prove_migration(CAUSAL, "attention.py")
    assert "pred_causal" not in result["migrated"] and "q_pos" not in result["migrated"]
    assert "mgrid" not in result["migrated"]
    assert "cmp_op=nl.greater_equal" in result["migrated"] and "cmp_op=nl.greater" in result["migrated"]


# flash attention's causal mask reads the scores where the matmul left them, in PSUM (legacy affine_select took it)
PSUM_SCORES = """\
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


# nki-studio: simulate q=float32[128,128] k=float32[128,512]
@nki.jit
def causal_scores(q, k):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    i_q_p, i_q_f = nl.mgrid[0:128, 0:512]
    pred_causal = 200 + i_q_p >= i_q_f
    qk_psum = nl.ndarray((nl.par_dim(128), 512), dtype=np.float32, buffer=nl.psum)
    qk_psum[:, :] = nl.matmul(nl.load(q), nl.load(k), transpose_x=True)
    r = nl.ndarray((nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.sbuf)
    r[:, :] = nisa.affine_select(pred=pred_causal, on_true_tile=qk_psum, on_false_value=-9984.0, dtype=nl.float32)
    nl.store(out, value=r)
    return out
"""


def test_a_psum_on_true_tile_is_read_through_an_sbuf_copy_and_proven(
    prove_migration: Callable[..., MigrationResult],
) -> None:
    result = prove_migration(PSUM_SCORES, "attention.py")
    assert "on_true_tile=nl.copy(qk_psum)" in result["migrated"]
