"""``nki.isa`` for the embedded simulator: every public name of NKI 0.6/0.7's ``nki.isa`` (isa.md).

Instructions live in one module per engine, as isa.md is organised: ``tensor_ops``, ``mx``,
``scalar_ops``, ``vector_ops`` / ``vector_reduce`` / ``vector_search``, ``rng``, ``gpsimd_ops``, ``dma``,
``multicore``, ``registers``. (No module may be named like a public ``nisa`` attribute: importing
``isa.vector_engine`` would replace the deprecated alias ``nisa.vector_engine`` with the module.) Every instruction validates its operands (buffers, partitions, free
sizes, dtypes, generation), announces itself with ``context.issue`` (trace, budgets) and returns an
``NkiInstruction`` handle. What cannot be simulated raises ``NotImplementedInSimulator`` naming the kernel
line (never a silent wrong result).
"""

from __future__ import annotations

from nki_studio.sim.errors import HardwareLimitError as NkiValidationError
from nki_studio.sim.isa.dma import dma_compute, dma_copy, dma_transpose
from nki_studio.sim.isa.enums import (
    NkiInstruction,
    dge_mode,
    dma_engine,
    engine,
    gpsimd_engine,
    matmul_perf_mode,
    nc_version,
    oob_mode,
    reduce_cmd,
    scalar_engine,
    tensor_engine,
    unknown_engine,
    vector_engine,
)
from nki_studio.sim.isa.gpsimd_ops import (
    affine_select,
    iota,
    local_gather,
    nc_n_gather,
    nonzero_with_count,
    sequence_bounds,
    tensor_partition_reduce,
    topk,
)
from nki_studio.sim.isa.multicore import core_barrier, sendrecv
from nki_studio.sim.isa.mx import nc_matmul_mx, quantize_mx
from nki_studio.sim.isa.registers import (
    get_nc_sub_version,
    get_nc_version,
    register_alloc,
    register_load,
    register_move,
    register_store,
    scalar_load,
    scalar_store,
)
from nki_studio.sim.isa.rng import dropout, rand2, rand_get_state, rand_set_state, rng, set_rng_seed
from nki_studio.sim.isa.scalar_ops import activate2, activation, activation_reduce
from nki_studio.sim.isa.tensor_ops import nc_matmul, nc_transpose
from nki_studio.sim.isa.vector_ops import (
    exponential,
    memset,
    reciprocal,
    scalar_tensor_tensor,
    tensor_copy,
    tensor_copy_predicated,
    tensor_scalar,
    tensor_tensor,
)
from nki_studio.sim.isa.vector_reduce import (
    bn_aggr,
    bn_stats,
    range_select,
    select_reduce,
    tensor_reduce,
    tensor_scalar_cumulative,
    tensor_scalar_reduce,
    tensor_tensor_scan,
)
from nki_studio.sim.isa.vector_search import max8, nc_find_index8, nc_match_replace8, nc_stream_shuffle
from nki_studio.sim.scalars import NkiScalar, VirtualRegister
from nki_studio.sim.unimplemented import module_getattr

__all__ = [
    "NkiInstruction",
    "NkiScalar",
    "NkiValidationError",
    "VirtualRegister",
    "activate2",
    "activation",
    "activation_reduce",
    "affine_select",
    "bn_aggr",
    "bn_stats",
    "core_barrier",
    "dge_mode",
    "dma_compute",
    "dma_copy",
    "dma_engine",
    "dma_transpose",
    "dropout",
    "engine",
    "exponential",
    "get_nc_sub_version",
    "get_nc_version",
    "gpsimd_engine",
    "iota",
    "local_gather",
    "matmul_perf_mode",
    "max8",
    "memset",
    "nc_find_index8",
    "nc_match_replace8",
    "nc_matmul",
    "nc_matmul_mx",
    "nc_n_gather",
    "nc_stream_shuffle",
    "nc_transpose",
    "nc_version",
    "nonzero_with_count",
    "oob_mode",
    "quantize_mx",
    "rand2",
    "rand_get_state",
    "rand_set_state",
    "range_select",
    "reciprocal",
    "reduce_cmd",
    "register_alloc",
    "register_load",
    "register_move",
    "register_store",
    "rng",
    "scalar_engine",
    "scalar_load",
    "scalar_store",
    "scalar_tensor_tensor",
    "select_reduce",
    "sendrecv",
    "sequence_bounds",
    "set_rng_seed",
    "tensor_copy",
    "tensor_copy_predicated",
    "tensor_engine",
    "tensor_partition_reduce",
    "tensor_reduce",
    "tensor_scalar",
    "tensor_scalar_cumulative",
    "tensor_scalar_reduce",
    "tensor_tensor",
    "tensor_tensor_scan",
    "topk",
    "unknown_engine",
    "vector_engine",
]


# Removed or legacy-only ISA names (isa.md §9): they import, and using one is reported as "not implemented" with
# the kernel line; any other unknown name raises MissingName (an AttributeError).
_REMOVED = {
    "tensor_copy_dynamic_src": "removed in NKI 0.4.0; use tensor_copy with .ap(scalar_offset=...)",
    "tensor_copy_dynamic_dst": "removed in NKI 0.4.0; use tensor_copy with .ap(scalar_offset=...)",
}


__getattr__ = module_getattr("nisa", _REMOVED, "not a documented nki.isa name")
