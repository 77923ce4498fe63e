"""RMSNorm of the rows of an SBUF tile, one instruction per step, as the hand-written NKIBench kernels lower
``nl.square``, ``nl.sum``, ``/ n``, ``+ eps``, ``nl.rsqrt`` and the two products (the lowering is the compiler's;
this choice is inferred): square on the Scalar engine, a row sum, ``/ n + eps`` in one ``tensor_scalar``, rsqrt
on the Scalar engine, the scaling by it (``tensor_scalar``) and the product with the broadcast weight.
"""

import nki.isa as nisa
import nki.language as nl


def rmsnorm_rows(a, gamma, eps):
    """``a / sqrt(mean(a^2, row) + eps) * gamma`` for the FP32 SBUF tile ``a`` [p, n]; ``gamma`` is [p, n]."""
    p, n = a.shape
    sq = nl.ndarray((p, n), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=sq, op=nl.square, data=a)
    ss = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=ss, op=nl.add, data=sq, axis=1)
    ms = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=ms, data=ss, op0=nl.multiply, operand0=1.0 / n, op1=nl.add, operand1=eps)
    rstd = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=rstd, op=nl.rsqrt, data=ms)
    yn = nl.ndarray((p, n), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=yn, data=a, op0=nl.multiply, operand0=rstd)
    y = nl.ndarray((p, n), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=y, data1=yn, data2=gamma, op=nl.multiply)
    return y
