"""A kernel in the legacy ``neuronxcc.nki`` style (NKI 0.1, Neuron <= 2.26), written for the stub tests: index
tiles, masks, block dimensions, value-returning ISA calls, tile operators, a launch grid and the legacy entry
points and allocators."""

import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
import numpy as np
from neuronxcc import nki


@nki.compiler.skip_middle_end_transformations
@nki.jit
def scaled_rows(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    rows = a.shape[0]
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(512)[None, :]
    tiles = nl.ndarray(
        (2, nl.par_dim(128), 512),
        dtype=nl.float32,
        buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,)),
    )
    pid = nl.program_id(0)
    for t in nl.affine_range((rows + 127) // 128):
        x = nl.load(a[t * 128 + i_p, i_f], mask=(t * 128 + i_p < rows))
        y = nl.load(b[t * 128 + i_p, i_f], mask=(t * 128 + i_p < rows))
        tiles[t % 2, i_p, i_f] = nisa.tensor_tensor(x, y, op=nl.add, dtype=nl.float32)
        s = nisa.activation(op=nl.exp, data=tiles[t % 2, i_p, i_f], scale=0.5)
        acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
        acc += nisa.nc_matmul(x[i_p, 0:128], s)
        z = nl.static_cast(nl.multiply(acc, pid + 1), nl.bfloat16)
        low = nl.loop_reduce(z, op=np.add, loop_indices=[t], dtype=nl.float32)
        nl.store(out[t * 128 + i_p, i_f], low, mask=(t * 128 + i_p < rows))
    return out


def run(a, b):
    return nki.simulate_kernel(scaled_rows[2, 1], a, b)


benchmarked = nki.benchmark(warmup=2, iters=10)(scaled_rows)
