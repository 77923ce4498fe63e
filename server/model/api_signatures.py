"""Parameter lists of the NKI API calls the interpreter resolves, so positional and keyword operands match up.

``ISA_PARAMS`` is taken from isa.md (``nki.isa``, NKI 0.6.0): only the leading parameters that carry tensors,
shapes, dtypes or buffers are listed, the rest stay keyword-only for us; each list is the start of its stub's
positional parameters (``tests/intelligence/test_signature_agreement.py``). The ``nki.language`` lists come from
the stubs through the generated ``nki_api``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

from nki_studio.model.nki_api import LANGUAGE_PARAMS

T = TypeVar("T")

ISA_PARAMS: dict[str, tuple[str, ...]] = {
    "nc_matmul": (
        "dst",
        "stationary",
        "moving",
        "is_stationary_onezero",
        "is_moving_onezero",
        "is_transpose",
        "accumulate",
        "tile_position",
        "tile_size",
        "perf_mode",
    ),
    "nc_matmul_mx": ("dst", "stationary", "moving", "stationary_scale", "moving_scale"),
    "nc_transpose": ("dst", "data", "engine"),
    "activation": ("dst", "op", "data", "bias", "scale", "reduce_op", "reduce_res", "reduce_cmd"),
    "activation_reduce": ("dst", "op", "data", "reduce_op", "reduce_res", "bias", "scale"),
    "activate2": ("dst", "op", "data", "imm0", "imm1", "op0", "op1"),
    "tensor_tensor": ("dst", "data1", "data2", "op", "engine"),
    "tensor_scalar": ("dst", "data", "op0", "operand0", "reverse0", "op1", "operand1", "reverse1", "engine"),
    "scalar_tensor_tensor": ("dst", "data", "op0", "operand0", "op1", "operand1", "reverse0", "reverse1"),
    "tensor_reduce": ("dst", "op", "data", "axis", "negate", "keepdims"),
    "tensor_tensor_scan": ("dst", "data0", "data1", "initial", "op0", "op1"),
    "tensor_scalar_reduce": ("dst", "data", "op0", "operand0", "reduce_op", "reduce_res"),
    "tensor_scalar_cumulative": ("dst", "src", "op0", "op1", "imm0", "imm1"),
    "tensor_copy": ("dst", "src", "engine"),
    "tensor_copy_predicated": ("dst", "src", "predicate", "reverse_pred"),
    "reciprocal": ("dst", "data"),
    "exponential": ("dst", "src", "max_value", "reduce_res"),
    "bn_stats": ("dst", "data"),
    "bn_aggr": ("dst", "data"),
    "select_reduce": ("dst", "predicate", "on_true", "on_false", "reduce_res"),
    "range_select": ("dst", "on_true_tile", "comp_op0", "comp_op1", "bound0", "bound1"),
    "max8": ("dst", "src"),
    "nc_find_index8": ("dst", "data", "vals"),
    "nc_match_replace8": ("dst", "data", "vals", "imm", "dst_idx"),
    "nc_stream_shuffle": ("dst", "src", "shuffle_mask"),
    "quantize_mx": ("dst", "src", "dst_scale"),
    "dropout": ("dst", "data", "prob"),
    "memset": ("dst", "value", "engine"),
    "rng": ("dst", "engine"),
    "rand2": ("dst", "min", "max"),
    "iota": ("dst", "pattern", "offset", "channel_multiplier"),
    "affine_select": (
        "dst",
        "pattern",
        "channel_multiplier",
        "on_true_tile",
        "on_false_value",
        "cmp_op",
        "offset",
    ),
    "tensor_partition_reduce": ("dst", "op", "data"),
    "local_gather": ("dst", "src_buffer", "index", "num_elem_per_idx", "num_valid_indices"),
    "nc_n_gather": ("dst", "data", "indices"),
    "sequence_bounds": ("dst", "segment_ids"),
    "nonzero_with_count": ("dst", "src", "index_offset", "padding_val"),
    "topk": ("val_dst", "idx_dst", "src", "n"),
    "dma_copy": ("dst", "src", "priority", "oob_mode", "dge_mode", "engine"),
    "dma_transpose": ("dst", "src", "axes"),
    "dma_compute": ("dst", "srcs", "reduce_op", "scales"),
    "sendrecv": ("src", "dst", "send_to_rank", "recv_from_rank", "pipe_id"),
    "core_barrier": ("data", "cores", "engine"),
    "register_load": ("dst", "src"),
    "register_store": ("dst", "src"),
}

# Parameters that are written by the instruction (everything else that is a tensor is read).
ISA_OUTPUTS = frozenset({"dst", "val_dst", "idx_dst", "reduce_res", "dst_idx", "dst_scale"})

# Instructions that only run on GpSimd (isa.md §4 and §3.23 notes), so no operand may be in PSUM (isa.md §0.3).
GPSIMD_ONLY = frozenset(
    {
        "iota",
        "affine_select",
        "tensor_partition_reduce",
        "local_gather",
        "nc_n_gather",
        "sequence_bounds",
        "nonzero_with_count",
        "topk",
    }
)

# Instructions whose data operands must span the same partitions and elements per partition (isa.md §2-§3).
SAME_SHAPE_OPERANDS: dict[str, tuple[str, ...]] = {
    "tensor_tensor": ("dst", "data1", "data2"),
    "tensor_copy": ("dst", "src"),
    "activation": ("dst", "data"),
    "tensor_scalar": ("dst", "data"),
    "scalar_tensor_tensor": ("dst", "data", "operand1"),
    "reciprocal": ("dst", "data"),
    "tensor_copy_predicated": ("dst", "src", "predicate"),
    "exponential": ("dst", "src"),
    "dropout": ("dst", "data"),
    "activation_reduce": ("dst", "data"),
    "tensor_scalar_reduce": ("dst", "data"),
    "tensor_scalar_cumulative": ("dst", "src"),
    "select_reduce": ("dst", "on_true", "predicate"),
}

# Instructions whose operands must span the same partitions, free sizes aside (isa.md §3.4, §3.12, §3.16,
# §3.17: reductions and statistics write fewer elements per partition than they read).
SAME_PARTITION_OPERANDS: dict[str, tuple[str, ...]] = {
    "tensor_reduce": ("dst", "data"),
    "bn_stats": ("dst", "data"),
    "bn_aggr": ("dst", "data"),
    "max8": ("dst", "src"),
    "nc_find_index8": ("dst", "data", "vals"),
}

# Two-input Vector instructions: at most one of these inputs may be in PSUM (isa.md §0.3).
ONE_PSUM_INPUT: dict[str, tuple[str, str]] = {
    "tensor_tensor": ("data1", "data2"),
    "tensor_tensor_scan": ("data0", "data1"),
    "scalar_tensor_tensor": ("data", "operand1"),
    "tensor_copy_predicated": ("src", "predicate"),
    "select_reduce": ("on_true", "predicate"),
}

# nki.language creation calls the interpreter allocates for (language.md §6), with their stubs' parameter lists.
NL_CREATE_PARAMS: dict[str, tuple[str, ...]] = {
    name: LANGUAGE_PARAMS[name]
    for name in (
        "ndarray",
        "zeros",
        "ones",
        "full",
        "rand",
        "empty_like",
        "zeros_like",
        "shared_identity_matrix",
    )
}


def bind_arguments(params: tuple[str, ...], args: Sequence[T], kwargs: Mapping[str, T]) -> dict[str, T]:
    """Match positional ``args`` to ``params`` and merge ``kwargs`` (extra positionals are dropped)."""
    bound: dict[str, T] = dict(zip(params, args, strict=False))
    bound.update(kwargs)
    return bound
