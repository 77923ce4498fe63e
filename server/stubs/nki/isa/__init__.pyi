"""``nki.isa`` (``nisa``): one function per NeuronCore instruction (NKI 0.6.0; 0.7 additions marked).

Calling convention since NKI 0.2.0: the destination comes first (``dst=``), is written in place, and its dtype is
the output dtype (no ``dtype=``/``mask=`` parameters). Every instruction takes ``name=`` (a label for the profiler
and the scheduling API) and returns an ``NkiInstruction`` handle. SBUF/PSUM operands span at most 128 partitions.
Engines: Tensor (matmul; reads SBUF, writes PSUM), Vector and Scalar (SBUF/PSUM), GpSimd (SBUF only), DMA
(HBM/SBUF, never PSUM). Stubs written by nki-studio from its reference notes.
"""

from collections.abc import Sequence
from enum import Enum, IntEnum
from typing import Any

from nki.language import DTypeLike, NkiTensor

Op = Any  # an ``nl`` operator such as ``nl.add`` or ``nl.exp``

# ---------------------------------------------------------------------------------------------- enums
class engine(Enum):
    """Engine that executes an instruction (``unknown``: the compiler chooses)."""

    unknown = 0
    tensor = 1
    scalar = 2
    gpsimd = 3
    dma = 4
    vector = 5
    sync = 6

tensor_engine: engine
"""Deprecated alias of ``engine.tensor``."""
vector_engine: engine
"""Deprecated alias of ``engine.vector``."""
scalar_engine: engine
"""Deprecated alias of ``engine.scalar``."""
gpsimd_engine: engine
"""Deprecated alias of ``engine.gpsimd``."""
unknown_engine: engine
"""Deprecated alias of ``engine.unknown``."""

class reduce_cmd(Enum):
    """What an instruction does with its engine's per-partition accumulator registers."""

    idle = 0
    reset = 1
    reduce = 2
    reset_reduce = 3
    load_reduce = 4

class dge_mode(Enum):
    """Descriptor generation of a DMA: ``swdge`` (GpSimd), ``hwdge`` (trn2+), ``none`` (host), ``unknown`` (compiler)."""

    unknown = 0
    swdge = 1
    hwdge = 2
    none = 3

class oob_mode(Enum):
    """Out-of-bounds indirect index: runtime ``error`` or ``skip`` the element."""

    error = 0
    skip = 1

class matmul_perf_mode(Enum):
    """``double_row``: FP8 matmul contracting 256 rows (trn2+)."""

    none = "none"
    double_row = "double_row"

class nc_version(IntEnum):
    """NeuronCore generation: gen2 = trn1/inf2, gen3 = trn2, gen4 = trn3."""

    gen2 = 2
    gen3 = 3
    gen4 = 4

class dma_engine(Enum):
    """Queue of ``sendrecv``: shared ``dma`` (default) or GpSimd-internal ``gpsimd_dma``."""

    dma = 1
    gpsimd_dma = 2

# ---------------------------------------------------------------------------------------------- classes
class NkiInstruction:
    """Handle returned by every ISA call."""

    def __init__(self, handle: Any) -> None: ...
    def depends_on(self, *producers: NkiInstruction) -> NkiInstruction:
        """Add scheduling edges (this instruction waits for ``producers``); returns self."""

class VirtualRegister:
    """A 32-bit scalar register of an engine sequencer (loop bounds, ``scalar_offset``). 0.7: prefer ``NkiScalar``."""

    def __init__(self, state: Any = None, frozen: bool = False) -> None: ...

class NkiScalar:
    """0.7 only: one integer computed on device (int32 or int64), from ``scalar_load``; ``+ - *`` are traced."""

    def __init__(self, state: Any, dtype: DTypeLike | None = None, is_comparison: bool = False) -> None: ...
    def __add__(self, other: int | NkiScalar) -> NkiScalar: ...
    def __sub__(self, other: int | NkiScalar) -> NkiScalar: ...
    def __mul__(self, other: int | NkiScalar) -> NkiScalar: ...
    def __radd__(self, other: int) -> NkiScalar: ...
    def __rsub__(self, other: int) -> NkiScalar: ...
    def __rmul__(self, other: int) -> NkiScalar: ...
    def __neg__(self) -> NkiScalar: ...
    # int32 comparisons are traced and give a comparison scalar (usable as ``nl.if_else``'s condition, newest
    # docs); int64 comparisons are rejected at compile time.
    def __lt__(self, other: int | NkiScalar) -> NkiScalar: ...
    def __le__(self, other: int | NkiScalar) -> NkiScalar: ...
    def __gt__(self, other: int | NkiScalar) -> NkiScalar: ...
    def __ge__(self, other: int | NkiScalar) -> NkiScalar: ...
    def __eq__(self, other: object) -> NkiScalar: ...  # type: ignore[override]
    def __ne__(self, other: object) -> NkiScalar: ...  # type: ignore[override]

class NkiValidationError(Exception):
    """Raised when a hardware constraint is violated."""

# ---------------------------------------------------------------------------------------------- Tensor engine
def nc_matmul(
    dst: NkiTensor,
    stationary: NkiTensor,
    moving: NkiTensor,
    is_stationary_onezero: bool = False,
    is_moving_onezero: bool = False,
    is_transpose: bool = False,
    accumulate: bool | None = None,
    tile_position: Sequence[int] = (),
    tile_size: Sequence[int] = (),
    perf_mode: matmul_perf_mode | str = ...,
    name: str | None = None,
) -> NkiInstruction:
    """``dst[M, N] (=|+=) stationary[K, M].T @ moving[K, N]``, accumulated in FP32.

    Engine: Tensor. stationary/moving in SBUF, dst in PSUM. K <= 128, M <= 128; N <= 512 on trn1/trn2 (one PSUM
    bank), on trn3 N <= 4096 (FP32 dst) or 8192 (BF16 dst). dst dtype FP32 (trn3 also BF16).
    ``accumulate=None``: first write to a PSUM location overwrites, later ones add. ``perf_mode=double_row`` (FP8,
    trn2+) contracts 2*K rows; ``is_transpose=True`` is a bit-exact transpose on trn2+.
    """

def nc_matmul_mx(
    dst: NkiTensor,
    stationary: NkiTensor,
    moving: NkiTensor,
    stationary_scale: NkiTensor,
    moving_scale: NkiTensor,
    tile_position: Sequence[int] | None = None,
    tile_size: Sequence[int] | None = None,
    accumulate: bool | None = None,
    name: str | None = None,
) -> NkiInstruction:
    """MX (microscaling) matmul with on-the-fly dequantisation. trn3 only.

    Engine: Tensor. Data ``float8_e5m2_x4``/``float8_e4m3fn_x4``/``float4_e2m1fn_x4`` and ``float8_e8m0fnu`` scales
    in SBUF; dst FP32 or BF16 in PSUM.
    """

def nc_transpose(
    dst: NkiTensor, data: NkiTensor, engine: engine = ..., name: str | None = None
) -> NkiInstruction:
    """2-D partition/free transpose ``dst[f, p] = data[p, f]``; same dtype.

    Engine: Tensor (data <= 128x128 in SBUF, dst in PSUM) or Vector (<= 32x32 blocks).
    """

# ---------------------------------------------------------------------------------------------- Scalar engine
def activation(
    dst: NkiTensor,
    op: Op,
    data: NkiTensor,
    bias: Any = None,
    scale: Any = 1.0,
    reduce_op: Op = None,
    reduce_res: NkiTensor | None = None,
    reduce_cmd: reduce_cmd = ...,
    name: str | None = None,
) -> NkiInstruction:
    """``dst = op(data * scale + bias)`` in FP32, optionally reducing along the free dims.

    Engine: Scalar (Activation). ``bias`` is a (P,1) vector (a scalar bias needs trn2+); ``scale`` a number or (P,1).
    SBUF/PSUM in and out.
    """

def activation_reduce(
    dst: NkiTensor,
    op: Op,
    data: NkiTensor,
    reduce_op: Op,
    reduce_res: NkiTensor | None,
    bias: Any = None,
    scale: Any = 1.0,
    name: str | None = None,
) -> NkiInstruction:
    """``activation`` plus a reset-and-reduce of the free dims into ``reduce_res`` (P,1). trn1: only ``nl.add``.

    Engine: Scalar.
    """

def activate2(
    dst: NkiTensor,
    op: Op,
    data: NkiTensor,
    imm0: Any,
    imm1: Any,
    op0: Op,
    op1: Op,
    relu_param: float = 0.0,
    reverse0: bool = False,
    reverse1: bool = False,
    reduce_op: Op = None,
    reduce_res: NkiTensor | None = None,
    reduce_cmd: reduce_cmd = ...,
    name: str | None = None,
) -> NkiInstruction:
    """Two ALU stages then an activation: ``op(op1(op0(data, imm0), imm1))``. trn3 only.

    Engine: Scalar. ``nl.bypass`` skips a stage; ``nl.prelu`` uses ``relu_param``.
    """

# ---------------------------------------------------------------------------------------------- Vector engine
def tensor_tensor(
    dst: NkiTensor, data1: NkiTensor, data2: NkiTensor, op: Op, engine: engine = ..., name: str | None = None
) -> NkiInstruction:
    """``dst = op(data1, data2)`` element-wise (no broadcasting; same partitions and elements per partition).

    Engine: Vector (GpSimd for ``nl.power`` and all-int32 operands). At most one input in PSUM.
    """

def tensor_scalar(
    dst: NkiTensor,
    data: NkiTensor,
    op0: Op,
    operand0: Any,
    reverse0: bool = False,
    op1: Op = None,
    operand1: Any = None,
    reverse1: bool = False,
    engine: engine = ...,
    name: str | None = None,
) -> NkiInstruction:
    """``dst = op1(op0(data, operand0), operand1)`` with scalar or (P,1) operands broadcast along the free dims.

    Engine: Vector (also Scalar/GpSimd). ``reverse0/1`` swap operand order. trn3 adds ``square``/``relu`` as op0.
    """

# ``dtype=``: the Neuron docs document it only for the legacy ``neuronxcc.nki.isa`` form that returns its result
# (v2.26.1: ``scalar_tensor_tensor(*, data, ..., dtype=None, mask=None)``); the ``nki.isa`` form with ``dst``
# (v2.33.0, the newest in the search corpus) takes its dtype from ``dst`` and does not list it. nki-library's
# current kernels pass it next to ``dst`` (core/moe/moe_cte/moe_cte_utils.py, 2026-04-13), so the toolchain
# accepts it (*inferred*); it is kept as an optional keyword-only argument so such code
# type-checks (the simulator takes it too and warns when it differs from ``dst``'s dtype).
# v2.33.0 also lists ``reduce_cmd``/``reduce_op``/``reduce_res``, not in the 0.6.0 reference this stub follows.
def scalar_tensor_tensor(
    dst: NkiTensor,
    data: NkiTensor,
    op0: Op,
    operand0: Any,
    op1: Op,
    operand1: NkiTensor,
    reverse0: bool = False,
    reverse1: bool = False,
    name: str | None = None,
    *,
    dtype: DTypeLike | None = None,
) -> NkiInstruction:
    """``dst = op1(op0(data, operand0), operand1)``: a scalar/(P,1) stage then a full-tile stage.

    Engine: Vector. ``data`` and ``operand1`` cannot both be in PSUM.
    """

def tensor_reduce(
    dst: NkiTensor,
    op: Op,
    data: NkiTensor,
    axis: int | Sequence[int],
    negate: bool = False,
    keepdims: bool = False,
    name: str | None = None,
) -> NkiInstruction:
    """Reduce ``data`` over trailing free axes with ``op`` (optionally negated).

    Engine: Vector. ``axis`` must be trailing contiguous free dims (never 0).
    """

def tensor_tensor_scan(
    dst: NkiTensor,
    data0: NkiTensor,
    data1: NkiTensor,
    initial: Any,
    op0: Op,
    op1: Op,
    reverse0: bool = False,
    reverse1: bool = False,
    name: str | None = None,
) -> NkiInstruction:
    """Sequential scan per partition: ``prev = op1(op0(data0[:, i], prev), data1[:, i])``.

    Engine: Vector.
    """

def tensor_scalar_reduce(
    dst: NkiTensor,
    data: NkiTensor,
    op0: Op,
    operand0: Any,
    reduce_op: Op,
    reduce_res: NkiTensor | None = None,
    reverse0: bool = False,
    reduce_cmd: reduce_cmd = ...,
    reduce_init: Any = None,
    reduce_res_negate: bool = False,
    name: str | None = None,
) -> NkiInstruction:
    """``dst = op0(data, operand0)`` and reduce it per partition into the accumulator / ``reduce_res`` (P,1).

    Engine: Vector.
    """

def tensor_scalar_cumulative(
    dst: NkiTensor,
    src: NkiTensor,
    op0: Op,
    op1: Op,
    imm0: Any,
    imm1: Any = None,
    reduce_cmd: reduce_cmd = ...,
    name: str | None = None,
) -> NkiInstruction:
    """Running (prefix) reduction per partition: ``reg = op1(op0(src[:, i], imm0), reg); dst[:, i] = reg``.

    Engine: Vector.
    """

def tensor_copy(
    dst: NkiTensor, src: NkiTensor, engine: engine = ..., name: str | None = None
) -> NkiInstruction:
    """``dst = src`` (bit-exact for equal dtypes, else cast through FP32). SBUF/PSUM in and out.

    Engine: Vector, GpSimd (no PSUM) or Scalar (trn2+).
    """

def tensor_copy_predicated(
    dst: NkiTensor, src: Any, predicate: NkiTensor, reverse_pred: bool = False, name: str | None = None
) -> NkiInstruction:
    """Copy ``src`` into ``dst`` where ``predicate != 0`` (inverted with ``reverse_pred``).

    Engine: Vector. Same dtype for src and dst; predicate uint8/16/32.
    """

def reciprocal(dst: NkiTensor, data: NkiTensor, name: str | None = None) -> NkiInstruction:
    """``dst = 1 / data`` in FP32 (more precise than the Scalar activation).

    Engine: Vector.
    """

def exponential(
    dst: NkiTensor,
    src: NkiTensor,
    max_value: Any = 0.0,
    reduce_res: NkiTensor | None = None,
    reduce_cmd: reduce_cmd = ...,
    reduce_init: float = 0.0,
    name: str | None = None,
) -> NkiInstruction:
    """``dst = exp(src - max_value)`` with an optional running sum. trn3 only.

    Engine: Vector.
    """

def bn_stats(dst: NkiTensor, data: NkiTensor, name: str | None = None) -> NkiInstruction:
    """Per-partition mean/variance statistics (6 values) of at most 512 free elements.

    Engine: Vector.
    """

def bn_aggr(dst: NkiTensor, data: NkiTensor, name: str | None = None) -> NkiInstruction:
    """Combine ``bn_stats`` outputs into ``(P, 2)`` ``[mean, variance]``.

    Engine: Vector.
    """

def select_reduce(
    dst: NkiTensor,
    predicate: NkiTensor,
    on_true: NkiTensor,
    on_false: Any,
    reduce_res: NkiTensor | None = None,
    reduce_cmd: reduce_cmd = ...,
    reduce_op: Op = ...,
    reverse_pred: bool = False,
    name: str | None = None,
) -> NkiInstruction:
    """``dst = where(predicate, on_true, on_false)`` with an optional max-reduction into ``reduce_res``.

    Engine: Vector.
    """

def range_select(
    dst: NkiTensor,
    on_true_tile: NkiTensor,
    comp_op0: Op,
    comp_op1: Op,
    bound0: NkiTensor,
    bound1: NkiTensor,
    reduce_cmd: reduce_cmd = ...,
    reduce_res: NkiTensor | None = None,
    reduce_op: Op = ...,
    range_start: int = 0,
    on_false_value: float = ...,
    name: str | None = None,
) -> NkiInstruction:
    """Keep elements whose free index lies within per-partition bounds, else ``on_false_value``. trn2+.

    Engine: Vector.
    """

def max8(dst: NkiTensor, src: NkiTensor, name: str | None = None) -> NkiInstruction:
    """The 8 largest values per partition, descending (8..16384 elements per partition).

    Engine: Vector (presumed).
    """

def nc_find_index8(
    dst: NkiTensor, data: NkiTensor, vals: NkiTensor, name: str | None = None
) -> NkiInstruction:
    """Index of the first occurrence of each of 8 values per partition (not found: all ones).

    Engine: Vector.
    """

def nc_match_replace8(
    dst: NkiTensor,
    data: NkiTensor,
    vals: NkiTensor,
    imm: float,
    dst_idx: NkiTensor | None = None,
    name: str | None = None,
) -> NkiInstruction:
    """Copy ``data`` replacing the first occurrence of each of 8 values by ``imm``; indices to ``dst_idx``.

    Engine: Vector.
    """

def nc_stream_shuffle(
    dst: NkiTensor, src: NkiTensor, shuffle_mask: Sequence[int], name: str | None = None
) -> NkiInstruction:
    """Move partitions within each 32-partition quadrant: ``dst[32q+i] = src[32q+mask[i]]`` (255 keeps dst).

    Engine: Vector.
    """

def quantize_mx(
    dst: NkiTensor, src: NkiTensor, dst_scale: NkiTensor, name: str | None = None
) -> NkiInstruction:
    """Quantise FP16/BF16 to MXFP8 (x4 packed) with ``float8_e8m0fnu`` block scales. trn3 only.

    Engine: Vector.
    """

def dropout(dst: NkiTensor, data: NkiTensor, prob: Any, name: str | None = None) -> NkiInstruction:
    """Zero each element with probability ``prob`` (kept values are not rescaled).

    Engine: Vector.
    """

def memset(dst: NkiTensor, value: Any, engine: engine = ..., name: str | None = None) -> NkiInstruction:
    """Fill ``dst`` with a constant of the dtype's kind (x4 packed types: only 0).

    Engine: Vector (SBUF/PSUM) or GpSimd (SBUF).
    """

def rng(dst: NkiTensor, engine: engine = ..., name: str | None = None) -> NkiInstruction:
    """Random bits into ``dst``. Engine: Vector (GpSimd on trn2+)."""

def rand2(dst: NkiTensor, min: Any, max: Any, name: str | None = None) -> NkiInstruction:
    """Uniform random values in [min, max). trn3 only. Engine: Vector."""

def set_rng_seed(src_seeds: NkiTensor, name: str | None = None) -> NkiInstruction:
    """Seed the random number generator from a tensor."""

def rand_set_state(src_seeds: NkiTensor, engine: engine = ..., name: str | None = None) -> NkiInstruction:
    """Load the RNG state. trn2+ (GpSimd), trn3 also Vector."""

def rand_get_state(dst: NkiTensor, engine: engine = ..., name: str | None = None) -> NkiInstruction:
    """Store the RNG state into ``dst``. trn2+ (GpSimd), trn3 also Vector."""

# ---------------------------------------------------------------------------------------------- GpSimd engine
def iota(
    dst: NkiTensor,
    pattern: Sequence[Sequence[int]],
    offset: int = 0,
    channel_multiplier: int = 0,
    name: str | None = None,
) -> NkiInstruction:
    """Fill ``dst`` with the affine values ``offset + p*channel_multiplier + sum(i_k*step_k)`` (int32 math).

    Engine: GpSimd. dst in SBUF.
    """

def affine_select(
    dst: NkiTensor,
    pattern: Sequence[Sequence[int]],
    channel_multiplier: int,
    on_true_tile: NkiTensor,
    on_false_value: Any,
    cmp_op: Op = ...,
    offset: int = 0,
    name: str | None = None,
) -> NkiInstruction:
    """Select ``on_true_tile`` where ``cmp_op(affine value, 0)`` holds, else ``on_false_value`` (masks, causal).

    Engine: GpSimd. SBUF only.
    """

def tensor_partition_reduce(
    dst: NkiTensor, op: Op, data: NkiTensor, name: str | None = None
) -> NkiInstruction:
    """Reduce across partitions into ``dst`` (1, free...) with add/average/max/bitwise ops.

    Engine: GpSimd. SBUF only.
    """

def local_gather(
    dst: NkiTensor,
    src_buffer: NkiTensor,
    index: NkiTensor,
    num_elem_per_idx: int = 1,
    num_valid_indices: int | None = None,
    name: str | None = None,
) -> NkiInstruction:
    """Gather elements within each 16-partition GpSimd core group.

    Engine: GpSimd. SBUF only.
    """

def nc_n_gather(
    dst: NkiTensor, data: NkiTensor, indices: NkiTensor, name: str | None = None
) -> NkiInstruction:
    """Per-partition gather on the flattened free dims: ``dst[p, j] = data[p].ravel()[indices[p, j]]``.

    Engine: GpSimd. SBUF only; indices uint32.
    """

def sequence_bounds(dst: NkiTensor, segment_ids: NkiTensor, name: str | None = None) -> NkiInstruction:
    """Start and end index of each element's segment for a (1, n) tile of segment ids.

    Engine: GpSimd.
    """

def nonzero_with_count(
    dst: NkiTensor, src: NkiTensor, index_offset: int = 0, padding_val: int = -1, name: str | None = None
) -> NkiInstruction:
    """Indices of nonzero elements plus their count (partitions 0, 16, ..., 112 only). trn2+.

    Engine: GpSimd.
    """

def topk(
    val_dst: NkiTensor, idx_dst: NkiTensor, src: NkiTensor, n: int, name: str | None = None
) -> NkiInstruction:
    """K largest BF16 values (ascending) and their positions from a 16-partition snake layout. New in 0.6.0.

    Engine: GpSimd.
    """

# ---------------------------------------------------------------------------------------------- DMA
def dma_copy(
    dst: NkiTensor,
    src: NkiTensor,
    priority: int | None = None,
    oob_mode: oob_mode = ...,
    dge_mode: dge_mode | int = ...,
    engine: engine = ...,
    name: str | None = None,
) -> NkiInstruction:
    """``dst = src`` between HBM and SBUF (never PSUM), with a cast through FP32 if dtypes differ.

    Engine: DMA. Gather/scatter through ``.ap(vector_offset=...)``; ``hwdge`` (trn2+) needs equal dtypes;
    ``priority`` 0-3 on trn3 only.
    """

def dma_transpose(
    dst: NkiTensor,
    src: NkiTensor,
    axes: Sequence[int] | None = None,
    priority: int | None = None,
    dge_mode: dge_mode | int = ...,
    oob_mode: oob_mode = ...,
    name: str | None = None,
) -> NkiInstruction:
    """Transpose while copying HBM->SBUF or SBUF->SBUF; ``dst.shape`` must be the transposed ``src.shape``.

    Engine: DMA.
    """

def dma_compute(
    dst: NkiTensor,
    srcs: Sequence[NkiTensor],
    reduce_op: Op,
    scales: Sequence[float] | None = None,
    unique_indices: bool = True,
    oob_mode: oob_mode = ...,
    name: str | None = None,
) -> NkiInstruction:
    """``dst = srcs[0] + srcs[1] + ...`` inside the DMA engines (only ``nl.add``, scales 1.0; up to 16 sources).

    Engine: DMA.
    """

# ---------------------------------------------------------------------------------------------- multi-core
def core_barrier(
    data: NkiTensor, cores: Sequence[int] | int, engine: engine = ..., name: str | None = None
) -> NkiInstruction:
    """Barrier between the two cores of an LNC=2 pair around a shared-HBM tensor. trn2+."""

def sendrecv(
    src: NkiTensor,
    dst: NkiTensor,
    send_to_rank: int,
    recv_from_rank: int,
    pipe_id: int,
    dma_engine: dma_engine = ...,
    name: str | None = None,
) -> NkiInstruction:
    """Send ``src`` to the other core's ``dst`` while receiving into this core's ``dst`` (SBUF). trn2+, LNC=2."""

# ---------------------------------------------------------------------------------------------- registers
def register_alloc(x: Any = None) -> VirtualRegister:
    """A new register, uninitialised or set to ``x``."""

def register_move(dst: VirtualRegister, src: Any) -> NkiInstruction:
    """``dst = src`` (an int constant or a register; renamed from ``imm=`` in 0.3.0)."""

def register_load(dst: VirtualRegister, src: NkiTensor) -> NkiInstruction:
    """Load the single element of a 1-element tensor into ``dst``."""

def register_store(dst: NkiTensor, src: VirtualRegister) -> NkiInstruction:
    """Store a register value into a 1-element tensor."""

def scalar_load(src: NkiTensor) -> NkiScalar:
    """0.7 only: read a 1x1 int32/int64 SBUF/HBM tensor as an ``NkiScalar``."""

def scalar_store(dst: NkiTensor, value: NkiScalar) -> None:
    """0.7 only: write an ``NkiScalar`` into a 1x1 tensor of the same width."""

# ---------------------------------------------------------------------------------------------- target queries
def get_nc_version() -> nc_version:
    """Generation being compiled/simulated (``NEURON_PLATFORM_TARGET_OVERRIDE``)."""

def get_nc_sub_version() -> int:
    """Silicon revision (0 or 1)."""
