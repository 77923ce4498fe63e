"""Rotary embedding with one frequency table, FP32: our own translation to the current ``nki`` API of AccelOpt
NKIBench ``kernels/rope_single_freq_apply_B1_H64_N4096_D128_0.py`` (legacy ``neuronxcc.nki``, hand-written after
nki-samples' ``tutorials/rotary``).

Same loop and instructions: per 512-column tile one [128, 512] load of x and [64, 512] loads of cos and sin, a
copy of x's lower half to partitions 0-63 (legacy ``nl.copy``; here ``activation(copy)`` on the Scalar engine,
where the matmul kernels' measured engine times show the compiler puts ``nl.copy``: inferred), four
``tensor_tensor`` products and two ``tensor_tensor`` sums into the two halves of the output tile, and one
[128, 512] store. ``x[D, S]``, ``cos``/``sin`` ``[D // 2, S]``.
"""

import nki
import nki.isa as nisa
import nki.language as nl

TILE_S = 512


@nki.jit
def rope_kernel(x, cos, sin):
    d, s = x.shape
    h = d // 2
    out = nl.ndarray((d, s), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in range(s // TILE_S):
        cols = slice(i * TILE_S, (i + 1) * TILE_S)
        xt = nl.ndarray((d, TILE_S), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=xt, src=x[:, cols])
        ct = nl.ndarray((h, TILE_S), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=ct, src=cos[:, cols])
        st = nl.ndarray((h, TILE_S), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=st, src=sin[:, cols])
        odd = nl.ndarray((h, TILE_S), dtype=x.dtype, buffer=nl.sbuf)
        nisa.activation(dst=odd, op=nl.copy, data=xt[h:d, :])
        even = xt[0:h, :]
        prods = []
        for a, b in ((even, ct), (odd, ct), (even, st), (odd, st)):
            t = nl.ndarray((h, TILE_S), dtype=x.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=t, data1=a, data2=b, op=nl.multiply)
            prods.append(t)
        e_cos, o_cos, e_sin, o_sin = prods
        ot = nl.ndarray((d, TILE_S), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=ot[0:h, :], data1=e_cos, data2=o_sin, op=nl.subtract)
        nisa.tensor_tensor(dst=ot[h:d, :], data1=o_cos, data2=e_sin, op=nl.add)
        nisa.dma_copy(dst=out[:, cols], src=ot)
    return out
