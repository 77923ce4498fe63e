"""SiLU, x / (1 + exp(-x)), FP32: our own translation to the current ``nki`` API of AccelOpt NKIBench
``kernels/silu_M4096_N7168_0.py`` (legacy ``neuronxcc.nki``, compiler-generated).

Same loop nest, tile shapes, dtypes and one instruction per legacy step: a [128, 1024] load, then per
[128, 512] half exp(-x) on the Scalar engine, 1 + e and its reciprocal (engine left to the compiler: on trn1 the
simulator puts both on the Scalar engine, docs/cost-model.md "Engine choice"), x * r on the Vector engine, and a
[128, 1024] store. Input layout as the benchmark's ``transform_to_nki_inputs``: ``x[M, N]`` reshaped to
``[128, M // 128, N]`` (row ``p * (M // 128) + i`` on partition ``p``). Shapes come from the input, so the
calibration suite may run fewer row tiles than the measurement (benchmarks/calibration/README.md, "Scaling").
"""

import nki
import nki.isa as nisa
import nki.language as nl

F_LOAD = 1024
F_OP = 512


@nki.jit
def silu_kernel(x):
    p, rows, n = x.shape
    out = nl.ndarray((p, rows, n), dtype=nl.float32, buffer=nl.shared_hbm)
    zero = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=zero, value=0.0)
    for i0 in range(rows):
        for i1 in range(n // F_LOAD):
            cols = slice(i1 * F_LOAD, (i1 + 1) * F_LOAD)
            xt = nl.ndarray((p, F_LOAD), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=xt, src=x[:, i0, cols])
            yt = nl.ndarray((p, F_LOAD), dtype=nl.float32, buffer=nl.sbuf)
            for i2 in range(F_LOAD // F_OP):
                half = slice(i2 * F_OP, (i2 + 1) * F_OP)
                e = nl.ndarray((p, F_OP), dtype=nl.float32, buffer=nl.sbuf)
                nisa.activation(dst=e, op=nl.exp, data=xt[:, half], bias=zero, scale=-1.0)
                d = nl.ndarray((p, F_OP), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_scalar(dst=d, data=e, op0=nl.add, operand0=1.0, reverse0=True)
                r = nl.ndarray((p, F_OP), dtype=nl.float32, buffer=nl.sbuf)
                nisa.reciprocal(dst=r, data=d)
                nisa.tensor_tensor(dst=yt[:, half], data1=xt[:, half], data2=r, op=nl.multiply)
            nisa.dma_copy(dst=out[:, i0, cols], src=yt)
    return out
