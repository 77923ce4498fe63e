"""All-reduce (sum) of a tile across the ranks of one replica group with nki.collectives.

Every rank loads its own copy of x into SBUF, the collective sums the copies across the group, and every
rank stores the result. `ranks` is the group size; simulate it with that many ranks
(`nki_studio.sim.simulate(..., ranks=4)`), each rank's x being its own input.
"""

import nki
import nki.collectives as ncc
import nki.isa as nisa
import nki.language as nl
import numpy as np


def ref_allreduce(x, ranks):
    """Every rank holds the same x here, so the sum over the group is ranks * x (FP32)."""
    return (x.astype(np.float32) * np.float32(ranks)).astype(x.dtype)


# nki-studio: simulate x=float32[128,512] ranks=4 reference=ref_allreduce seed=7
@nki.jit
def allreduce_kernel(x, ranks):
    p, d = x.shape
    out = nl.ndarray((p, d), dtype=x.dtype, buffer=nl.shared_hbm)
    group = ncc.ReplicaGroup([list(range(ranks))])
    mine = nl.ndarray((p, d), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=mine, src=x)
    total = nl.ndarray((p, d), dtype=x.dtype, buffer=nl.sbuf)
    ncc.all_reduce(srcs=[mine], dsts=[total], replica_group=group, op=nl.add)
    nisa.dma_copy(dst=out, src=total)
    return out
