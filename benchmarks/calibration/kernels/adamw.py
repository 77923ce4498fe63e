"""AdamW update, FP32: our own translation to the current ``nki`` API of AccelOpt NKIBench
``kernels/adamw_M10944_N2048_0.py`` (legacy ``neuronxcc.nki``, compiler-generated).

Same loop nest, tile shapes, dtypes and one instruction per legacy step: per [128, 1024] row block four loads
(theta, m, v, g), per [128, 512] half eleven ``tensor_scalar``/``tensor_tensor``/``reciprocal`` instructions
(engine left to the compiler: on trn1 the simulator puts the tensor_scalars and the reciprocal on the Scalar
engine, docs/cost-model.md "Engine choice") and one Scalar ``activation(sqrt)``, one store. The legacy kernel masks the last, partial row
tile (10944 = 85.5 x 128); here that tile is a slice of fewer partitions. Inputs in the benchmark's order
``(theta, g, m, v)``, each ``[M, N]``.
"""

import nki
import nki.isa as nisa
import nki.language as nl

P = 128
F_LOAD = 1024
F_OP = 512


def _tile(p):
    """A [p, 512] FP32 SBUF tile for one intermediate."""
    return nl.ndarray((p, F_OP), dtype=nl.float32, buffer=nl.sbuf)


@nki.jit
def adamw_kernel(theta, g, m, v):
    rows, n = theta.shape
    out = nl.ndarray((rows, n), dtype=nl.float32, buffer=nl.shared_hbm)
    zero = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=zero, value=0.0)
    for i0 in range((rows + P - 1) // P):
        r0 = i0 * P
        p = min(P, rows - r0)
        for i1 in range(n // F_LOAD):
            cols = slice(i1 * F_LOAD, (i1 + 1) * F_LOAD)
            tiles = []
            for src in (theta, m, v, g):
                t = nl.ndarray((p, F_LOAD), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=src[r0 : r0 + p, cols])
                tiles.append(t)
            th, mt, vt, gt = tiles
            res = nl.ndarray((p, F_LOAD), dtype=nl.float32, buffer=nl.sbuf)
            for i2 in range(F_LOAD // F_OP):
                h = slice(i2 * F_OP, (i2 + 1) * F_OP)
                decay, theta_t = _tile(p), _tile(p)
                nisa.tensor_scalar(dst=decay, data=th[:, h], op0=nl.multiply, operand0=1e-05)
                nisa.tensor_tensor(dst=theta_t, data1=th[:, h], data2=decay, op=nl.subtract)
                m9, g1, m_t, step = _tile(p), _tile(p), _tile(p), _tile(p)
                nisa.tensor_scalar(dst=m9, data=mt[:, h], op0=nl.multiply, operand0=0.9)
                nisa.tensor_scalar(dst=g1, data=gt[:, h], op0=nl.multiply, operand0=0.1)
                nisa.tensor_tensor(dst=m_t, data1=m9, data2=g1, op=nl.add)
                nisa.tensor_scalar(dst=step, data=m_t, op0=nl.multiply, operand0=0.01)
                v9, g001, gg, v_t = _tile(p), _tile(p), _tile(p), _tile(p)
                nisa.tensor_scalar(dst=v9, data=vt[:, h], op0=nl.multiply, operand0=0.999)
                nisa.tensor_scalar(dst=g001, data=gt[:, h], op0=nl.multiply, operand0=0.001)
                nisa.tensor_tensor(dst=gg, data1=g001, data2=gt[:, h], op=nl.multiply)
                nisa.tensor_tensor(dst=v_t, data1=v9, data2=gg, op=nl.add)
                root, denom, inv, upd = _tile(p), _tile(p), _tile(p), _tile(p)
                nisa.activation(dst=root, op=nl.sqrt, data=v_t, bias=zero[:p, :], scale=1000.0)
                nisa.tensor_scalar(dst=denom, data=root, op0=nl.add, operand0=1e-08)
                nisa.reciprocal(dst=inv, data=denom)
                nisa.tensor_tensor(dst=upd, data1=step, data2=inv, op=nl.multiply)
                nisa.tensor_tensor(dst=res[:, h], data1=theta_t, data2=upd, op=nl.subtract)
            nisa.dma_copy(dst=out[r0 : r0 + p, cols], src=res)
    return out
