"""Selective-scan (Mamba) core, FP32, as optimised by AccelOpt: our own translation to the current ``nki`` API of
``samples/nki/mamba_optimized.py`` in zhang677/AccelOpt (legacy ``neuronxcc.nki``; its ``samples/nki/README.md``
calls it the best Mamba kernel AccelOpt found, so the suite pairs it with that case's best-plan latency:
inferred, the repository does not name the plan).

Against ``mamba.py``: the sequence is processed in 512-column tiles, one after the other, each state's scan
starting from the last column of the previous tile (kept in a [128, S] tile per channel tile); delta and u are
loaded once per (sequence tile, channel tile) and the state loop is innermost. Same instructions per state as
the source: A load, ``activation(exp, scale=A)``, broadcast B load, two products, the scan, the copy of its last
column, broadcast C load, the product with C and its accumulation.
"""

import nki
import nki.isa as nisa
import nki.language as nl

P = 128
TILE_L = 512


@nki.jit
def mamba_optimized_kernel(delta, u, a, b, c):
    channels, seq_len = delta.shape
    _, state_size = a.shape
    out = nl.ndarray((channels, seq_len), dtype=delta.dtype, buffer=nl.shared_hbm)
    tiles = channels // P
    n_seq = seq_len // TILE_L
    scan_state = []
    for _ in range(tiles):
        st = nl.ndarray((P, state_size), dtype=delta.dtype, buffer=nl.sbuf)
        nisa.memset(dst=st, value=0.0)
        scan_state.append(st)
    for j in range(n_seq):
        cols = slice(j * TILE_L, (j + 1) * TILE_L)
        accum = []
        for t in range(tiles):
            ch = slice(t * P, (t + 1) * P)
            acc = nl.ndarray((P, TILE_L), dtype=delta.dtype, buffer=nl.sbuf)
            nisa.memset(dst=acc, value=0.0)
            accum.append(acc)
            delta_i = nl.ndarray((P, TILE_L), dtype=delta.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=delta_i, src=delta[ch, cols])
            u_i = nl.ndarray((P, TILE_L), dtype=u.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=u_i, src=u[ch, cols])
            for s in range(state_size):
                a_i = nl.ndarray((P, 1), dtype=a.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=a_i, src=a[ch, s : s + 1])
                delta_a = nl.ndarray((P, TILE_L), dtype=delta.dtype, buffer=nl.sbuf)
                nisa.activation(dst=delta_a, op=nl.exp, data=delta_i, scale=a_i)
                b_i = nl.ndarray((P, TILE_L), dtype=b.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=b_i, src=b[s : s + 1, cols].broadcast(0, P))
                delta_u = nl.ndarray((P, TILE_L), dtype=delta.dtype, buffer=nl.sbuf)
                nisa.tensor_tensor(dst=delta_u, data1=delta_i, data2=u_i, op=nl.multiply)
                delta_bu = nl.ndarray((P, TILE_L), dtype=delta.dtype, buffer=nl.sbuf)
                nisa.tensor_tensor(dst=delta_bu, data1=delta_u, data2=b_i, op=nl.multiply)
                scan = nl.ndarray((P, TILE_L), dtype=delta.dtype, buffer=nl.sbuf)
                initial = scan_state[t][:, s : s + 1] if j > 0 else 0.0
                nisa.tensor_tensor_scan(
                    dst=scan, data0=delta_a, data1=delta_bu, initial=initial, op0=nl.multiply, op1=nl.add
                )
                if j < n_seq - 1:
                    nisa.tensor_copy(dst=scan_state[t][:, s : s + 1], src=scan[:, TILE_L - 1 : TILE_L])
                c_i = nl.ndarray((P, TILE_L), dtype=c.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=c_i, src=c[s : s + 1, cols].broadcast(0, P))
                scan_c = nl.ndarray((P, TILE_L), dtype=delta.dtype, buffer=nl.sbuf)
                nisa.tensor_tensor(dst=scan_c, data1=scan, data2=c_i, op=nl.multiply)
                nisa.tensor_tensor(dst=acc, data1=acc, data2=scan_c, op=nl.add)
        for t in range(tiles):
            nisa.dma_copy(dst=out[t * P : (t + 1) * P, cols], src=accum[t])
    return out
