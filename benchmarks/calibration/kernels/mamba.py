"""Selective-scan (Mamba) core, FP32: our own translation to the current ``nki`` API of AccelOpt NKIBench
``kernels/mamba_M7168_C256_S16_0.py`` (legacy ``neuronxcc.nki``, hand-written after nki-samples'
``tutorials/fused_mamba`` v1).

Same loops and instructions: per state and 128-channel tile, [128, L] loads of delta and u, a [128, 1] load of A,
broadcast [128, L] loads of the B and C rows, ``activation(exp, scale=A)``, two ``tensor_tensor`` products, a
``tensor_tensor_scan`` (multiply, add), the product with C and its accumulation into the per-channel-tile sum,
then one [128, L] store per channel tile. Inputs ``delta[C, L]``, ``u[C, L]``, ``a[C, S]``, ``b[S, L]``,
``c[S, L]`` (the benchmark names L ``M``). The measured kernel spills (110 MB of spill traffic); this one keeps
the accumulators on chip and lets the simulator's capacity check say whether that fits.
"""

import nki
import nki.isa as nisa
import nki.language as nl

P = 128


@nki.jit
def mamba_kernel(delta, u, a, b, c):
    channels, seq_len = delta.shape
    _, state_size = a.shape
    out = nl.ndarray((channels, seq_len), dtype=delta.dtype, buffer=nl.shared_hbm)
    tiles = channels // P
    accum = []
    for _ in range(tiles):
        acc = nl.ndarray((P, seq_len), dtype=delta.dtype, buffer=nl.sbuf)
        nisa.memset(dst=acc, value=0.0)
        accum.append(acc)
    for s in range(state_size):
        for t in range(tiles):
            ch = slice(t * P, (t + 1) * P)
            delta_i = nl.ndarray((P, seq_len), dtype=delta.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=delta_i, src=delta[ch, :])
            a_i = nl.ndarray((P, 1), dtype=a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=a_i, src=a[ch, s : s + 1])
            delta_a = nl.ndarray((P, seq_len), dtype=delta.dtype, buffer=nl.sbuf)
            nisa.activation(dst=delta_a, op=nl.exp, data=delta_i, scale=a_i)
            u_i = nl.ndarray((P, seq_len), dtype=u.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=u_i, src=u[ch, :])
            b_i = nl.ndarray((P, seq_len), dtype=b.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=b_i, src=b[s : s + 1, :].broadcast(0, P))
            delta_u = nl.ndarray((P, seq_len), dtype=delta.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=delta_u, data1=delta_i, data2=u_i, op=nl.multiply)
            delta_bu = nl.ndarray((P, seq_len), dtype=delta.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=delta_bu, data1=delta_u, data2=b_i, op=nl.multiply)
            scan = nl.ndarray((P, seq_len), dtype=delta.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor_scan(
                dst=scan, data0=delta_a, data1=delta_bu, initial=0.0, op0=nl.multiply, op1=nl.add
            )
            c_i = nl.ndarray((P, seq_len), dtype=c.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=c_i, src=c[s : s + 1, :].broadcast(0, P))
            scan_c = nl.ndarray((P, seq_len), dtype=delta.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=scan_c, data1=scan, data2=c_i, op=nl.multiply)
            nisa.tensor_tensor(dst=accum[t], data1=accum[t], data2=scan_c, op=nl.add)
    for t in range(tiles):
        nisa.dma_copy(dst=out[t * P : (t + 1) * P, :], src=accum[t])
    return out
