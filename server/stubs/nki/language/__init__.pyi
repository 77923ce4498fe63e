"""``nki.language`` (``nl``): tensors, buffers, dtypes and convenience operations (NKI 0.6.0; 0.7 marked).

The ``nl`` helpers are lowered by the compiler to one or more ``nki.isa`` instructions; the hardware-exact
rules live on the ISA functions. Most math/creation helpers are *experimental* in 0.6.0. On-chip tensors
(``sbuf``/``psum``) keep the partition dimension first (at most 128 partitions) and are at least 2-D.
Stubs written by nki-studio from its reference notes.
"""

import builtins
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from enum import Enum
from typing import Any, TypeAlias, TypeVar

import numpy as np

Shape = Sequence[int]

# ---------------------------------------------------------------------------------------------- memory regions
class MemoryRegion(Enum):
    """Where a tensor lives: on-chip SBUF/PSUM or device HBM."""

    sbuf = "sbuf"
    psum = "psum"
    private_hbm = "private_hbm"
    shared_hbm = "shared_hbm"

sbuf: MemoryRegion
"""State Buffer: on-chip, 128 partitions, private per kernel instance, default buffer of creation APIs.
Capacity per partition depends on the generation (hover shows the configured target's)."""
psum: MemoryRegion
"""PSUM accumulation buffer: on-chip, 16 KiB per partition in 8 banks of 2 KiB (512 FP32 per bank).
Matmul results land here; DMA cannot read PSUM (copy to SBUF first)."""
private_hbm: MemoryRegion
"""HBM visible only to one kernel instance / physical core."""
hbm: MemoryRegion
"""Alias of ``private_hbm``. Kernel outputs in ``nl.hbm`` fail to compile: use ``nl.shared_hbm``."""
shared_hbm: MemoryRegion
"""HBM visible to all instances (both cores under LNC=2). Kernel outputs must be allocated here (since 0.3.0)."""

def is_hbm(b: MemoryRegion) -> builtins.bool:
    """True for any HBM kind (``private_hbm``/``hbm``/``shared_hbm``)."""

def is_on_chip(b: MemoryRegion) -> builtins.bool:
    """True for SBUF or PSUM."""

def is_psum(b: MemoryRegion) -> builtins.bool:
    """True for PSUM."""

def is_sbuf(b: MemoryRegion) -> builtins.bool:
    """True for SBUF."""

# ---------------------------------------------------------------------------------------------- dtypes
class DType(str):
    """An NKI element type (a string in the official stubs)."""

DTypeLike: TypeAlias = DType | type[Any] | np.dtype[Any]
"""What a ``dtype=`` parameter accepts: an ``nl`` dtype, a NumPy scalar type (``np.float32``) or a NumPy dtype
(``x.dtype`` of a NumPy input), as real kernels pass them."""

bool_: DType
"""Boolean stored as one byte."""
bool: DType
"""The same dtype as ``bool_`` (boolean stored as one byte).

Not in the documented name list (language reference 0.6.0; the data-type table of the Neuron docs v2.33.1
names ``nki.language.bool_`` only), but real kernels use it (nki-library, once) and the simulator accepts it
as an alias of ``bool_``; that it is the same dtype is inferred from that usage. Prefer ``bool_``. Every
``bool`` annotation in this stub is ``builtins.bool``: this name shadows the builtin here."""
int8: DType
"""8-bit signed integer."""
int16: DType
"""16-bit signed integer."""
int32: DType
"""32-bit signed integer (Python int literals in kernels are int32)."""
int64: DType
"""64-bit signed integer (0.7: only as the dtype of an ``NkiScalar`` loaded from a 1x1 tensor)."""
uint8: DType
"""8-bit unsigned integer."""
uint16: DType
"""16-bit unsigned integer."""
uint32: DType
"""32-bit unsigned integer."""
float16: DType
"""IEEE half (1 sign, 5 exponent, 10 mantissa bits)."""
bfloat16: DType
"""bfloat16 (1 sign, 8 exponent, 7 mantissa bits)."""
tfloat32: DType
"""FP32 storage with the mantissa rounded to 10 bits (Tensor engine input format)."""
float32: DType
"""IEEE single precision; all engine arithmetic happens in FP32."""
float8_e4m3: DType
"""Neuron ("legacy") FP8 with 4 exponent and 3 mantissa bits. Do not mix with ``float8_e4m3fn`` in a matmul."""
float8_e4m3fn: DType
"""OCP FP8 e4m3 (no infinities, max 448). Matmul input on trn3 only."""
float8_e5m2: DType
"""FP8 with 5 exponent and 2 mantissa bits (max 57344)."""
float8_e8m0fnu: DType
"""Unsigned power-of-two scale (MX block scale), value ``2**(e-127)``."""
float8_e5m2_x4: DType
"""Four packed float8_e5m2 in 32 bits (MX, trn3 only: ``nc_matmul_mx``/``quantize_mx``)."""
float8_e4m3fn_x4: DType
"""Four packed float8_e4m3fn in 32 bits (MX, trn3 only)."""
float4_e2m1fn_x4: DType
"""Four packed FP4 e2m1 in 16 bits (MX, trn3 only, max 6.0)."""

# ---------------------------------------------------------------------------------------------- tile sizes
class _TileSize:
    """Hardware tile-size constants of the current target (``nl.tile_size``)."""

    pmax: int
    """Partitions of SBUF/PSUM: 128 on every generation."""
    psum_bank_fmax: int
    """FP32 elements per PSUM bank per partition (512). Since 0.4.0."""
    psum_bank_fmax_bytes: int
    """Bytes per PSUM bank per partition (2048). Since 0.4.0."""
    psum_fmax: int
    """Deprecated in 0.4.0: use ``psum_bank_fmax``."""
    gemm_stationary_fmax: int
    """Largest stationary free size of ``nc_matmul`` (128)."""
    gemm_moving_fmax: int
    """Largest moving free size of ``nc_matmul`` (512 on trn1/trn2)."""
    bn_stats_fmax: int
    """Largest free size of one ``bn_stats`` call (512)."""
    psum_min_align: int
    """Minimum byte alignment of a PSUM free-dim address."""
    sbuf_min_align: int
    """Minimum byte alignment of an SBUF free-dim address."""
    @property
    def psum_num_banks(self) -> int:
        """PSUM banks (8; 7 with ``NKI_DMA_TRANSPOSE_AS_PE_TRANSPOSE=true`` on trn2+). Since 0.5.0."""
    @property
    def sbuf_size_bytes(self) -> int:
        """Total SBUF bytes of the target. Since 0.4.0."""
    @property
    def sbuf_fmax_bytes(self) -> int:
        """Usable SBUF bytes per partition. Since 0.4.0."""
    @property
    def sbuf_fmax(self) -> int:
        """Usable SBUF size per partition in FP32 elements. Since 0.4.0."""
    @property
    def total_available_sbuf_size(self) -> int:
        """Deprecated in 0.4.0: use ``sbuf_fmax_bytes`` / ``sbuf_size_bytes``."""

tile_size: _TileSize
"""Hardware tile-size constants (``nl.tile_size.pmax`` is 128)."""

# ---------------------------------------------------------------------------------------------- classes
class NKIObject:
    """Base class of user classes (configs, dataclasses) used inside kernels; inherit from nothing else."""

    def __init__(self, **kwargs: Any) -> None: ...

class NkiTensor:
    """A tensor view: storage (buffer, dtype, allocation) plus a view (shape, strides, offset; up to 5 dims).

    View methods return new views of the same storage at no run-time cost. On-chip views keep the partition
    dimension first and at least two dimensions.
    """

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int
    name: str
    dtype: DType
    buffer: MemoryRegion
    ndim: int
    size: int
    @property
    def data(self) -> NkiTensor:
        """The tensor itself (0.7 examples pass ``t.data`` for tensors and grids alike; inferred)."""
    def __init__(
        self, shape: Shape, dtype: DTypeLike, storage: Any, buffer: MemoryRegion = ..., name: str | None = ""
    ) -> None: ...
    def __getitem__(self, key: Any) -> ndarray: ...
    def __setitem__(self, key: Any, value: Any) -> None: ...
    def slice(self, dim: int, start: int, end: int, step: int = 1) -> ndarray:
        """Elements ``start..end-1`` (step ``step``) of ``dim``."""
    def select(self, dim: int, index: int | NkiTensor) -> ndarray:
        """Remove ``dim`` by picking ``index`` (an int, or a (1,1) int32 SBUF tensor for a run-time pick)."""
    def vector_select(self, dim: int, vector_offset: NkiTensor) -> ndarray:
        """Per-partition gather of rows of an HBM tensor; ``dim`` must be 0."""
    def permute(self, dims: Sequence[int]) -> ndarray:
        """Reorder dimensions (on-chip: ``dims[0] == 0``)."""
    def broadcast(self, dim: int, size: int) -> ndarray:
        """Repeat a size-1 dimension ``size`` times (stride 0)."""
    def expand_dim(self, dim: int) -> ndarray:
        """Insert a size-1 dimension at ``dim``."""
    def squeeze_dim(self, dim: int) -> ndarray:
        """Drop a size-1 dimension."""
    def reshape_dim(self, dim: int, shape: Shape) -> ndarray:
        """Split one dimension into several (one -1 allowed)."""
    def flatten_dims(self, start_dim: int, end_dim: int) -> ndarray:
        """Merge dimensions ``start_dim..end_dim`` (inclusive); they must be contiguous."""
    def reshape(self, shape: Shape) -> ndarray:
        """Same elements, new shape (on-chip: partition size unchanged; layout must allow it)."""
    def rearrange(
        self, src_pattern: Any, dst_pattern: Any, fixed_sizes: dict[str, int] | None = None
    ) -> ndarray:
        """einops-style split/permute/merge of dimensions."""
    def view(self, dtype: DTypeLike) -> ndarray:
        """Reinterpret the bits as ``dtype``; the last dimension scales with the size ratio."""
    def reinterpret_cast(self, dtype: DTypeLike) -> ndarray:
        """Alias of ``view(dtype)``."""
    def ap(
        self,
        pattern: Sequence[Sequence[int]],
        offset: int | None = None,
        scalar_offset: Any = None,
        vector_offset: NkiTensor | None = None,
        indirect_dim: int = 0,
        dtype: DTypeLike | None = None,
    ) -> ndarray:
        """Raw access pattern ``[[step, count], ...]`` over the underlying storage (ignores the current view).

        ``scalar_offset`` (a (1,1) SBUF tensor, ``VirtualRegister`` or 0.7 ``NkiScalar``) or ``vector_offset``
        ((P,1) SBUF indices) add run-time offsets; the two are mutually exclusive.
        """
    def indirect(self, index: NkiTensor, num_elem: int | None = None) -> ndarray:
        """Tensor-indirection view ``(P, num_elem)`` for compute instructions (trn3 only, since 0.5.0)."""
    def is_contiguous(self) -> builtins.bool:
        """Dense row-major over the free dimensions."""
    def get_pattern(self) -> list[list[int]]:
        """The current view in ``.ap()`` format."""
    def is_indirect(self) -> builtins.bool:
        """Whether the view uses a run-time offset."""

# ---------------------------------------------------------------------------------------------- creation
class ndarray(NkiTensor):
    """Allocate an uninitialised tensor of ``shape``/``dtype`` on ``buffer`` (default SBUF).

    On-chip: ``shape[0]`` is the partition dimension (<= 128) and the free bytes count against the per-partition
    capacity. ``address=(partition_offset, free_offset_bytes)`` places it explicitly (PSUM: 2 KiB bank aligned).
    Kernel outputs use ``buffer=nl.shared_hbm``.
    """

    def __init__(
        self,
        shape: Shape,
        dtype: DTypeLike,
        buffer: MemoryRegion = ...,
        name: str | None = "",
        address: tuple[int, int] | None = None,
    ) -> None: ...

def zeros(shape: Shape, dtype: DTypeLike, buffer: MemoryRegion = ..., name: str | None = "") -> ndarray:
    """Allocate a tensor filled with 0 (default SBUF)."""

def ones(shape: Shape, dtype: DTypeLike, buffer: MemoryRegion = ..., name: str | None = "") -> ndarray:
    """Allocate a tensor filled with 1 (default SBUF)."""

def full(
    shape: Shape, fill_value: Any, dtype: DTypeLike, buffer: MemoryRegion = ..., name: str | None = ""
) -> ndarray:
    """Allocate a tensor filled with ``fill_value`` (default SBUF)."""

def zeros_like(
    x: NkiTensor, dtype: DTypeLike | None = None, buffer: MemoryRegion | None = None, name: str | None = ""
) -> ndarray:
    """Zeros with the shape of ``x``."""

def empty_like(
    x: Any,
    dtype: DTypeLike | None = None,
    buffer: MemoryRegion | None = None,
    name: str | None = "",
    *,
    transpose_axes: Sequence[int] | None = None,
    address: tuple[int, int] | None = None,
) -> Any:
    """Uninitialised tensor with the shape (and by default dtype/buffer) of ``x``.

    0.7: ``x`` may be a tile/block grid; ``transpose_axes=`` and ``address=`` are new keyword-only parameters.
    """

def rand(shape: Shape, dtype: DTypeLike, buffer: MemoryRegion = ..., name: str | None = "") -> ndarray:
    """Uniform random values in [0, 1) (trn3: ``nisa.rand2`` on Vector; earlier: ``nisa.rng``)."""

def random_seed(seed: NkiTensor) -> None:
    """Seed ``rand``; ``seed`` is a (1,1) on-chip tensor holding a 32-bit value (not a Python int)."""

def shared_constant(constant: Any) -> ndarray:
    """A ``shared_hbm`` tensor initialised from a NumPy array or ``.npy`` path, embedded in the binary."""

def shared_identity_matrix(n: int, dtype: DTypeLike = ..., dst: NkiTensor | None = None) -> ndarray:
    """An ``n x n`` identity matrix in SBUF (default dtype uint8); identical ones are shared."""

# ---------------------------------------------------------------------------------------------- data movement
def load(src: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """Copy an HBM view into a new SBUF tile of the same shape (first dim -> partitions, <= 128). DMA."""

def store(dst: NkiTensor, value: NkiTensor) -> None:
    """Copy SBUF tile ``value`` into HBM view ``dst`` (a PSUM value must be copied to SBUF first). DMA."""

def load_transpose2d(src: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """Load a 2-D HBM tensor into SBUF with the two axes swapped."""

def copy(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """New SBUF tile with the content of ``x`` (SBUF or PSUM); Vector ``tensor_copy``. Stable since 0.6.0."""

def transpose(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """2-D partition/free swap; the result is in PSUM (Tensor engine)."""

def matmul(x: NkiTensor, y: NkiTensor, transpose_x: builtins.bool = False) -> ndarray:
    """``x @ y`` (or ``x.T @ y``) on the Tensor engine; result FP32 in PSUM.

    x: SBUF, P <= 128, F <= 128; y: SBUF, P <= 128, F <= 512. Known issue 0.3-0.6: only ``transpose_x=True`` works.
    """

def broadcast_to(x: NkiTensor, shape: Shape, dtype: DTypeLike | None = None) -> ndarray:
    """Broadcast an on-chip tile to ``shape`` (same rank, each dim equal or 1)."""

def expand_dims(x: NkiTensor, axis: int) -> ndarray:
    """View with a new size-1 axis."""

def ds(start: Any, size: int) -> slice:
    """Dynamic slice ``start : start + size`` for use inside ``[]``."""

def gather_flattened(
    data: NkiTensor, indices: NkiTensor, axis: int = 0, dtype: DTypeLike | None = None
) -> ndarray:
    """Per-partition gather from the flattened free dims of ``data`` (maps to ``nisa.nc_n_gather``)."""

def where(condition: NkiTensor, x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """Element-wise select; ``condition`` is a 1.0/0.0 tile."""

# ---------------------------------------------------------------------------------------------- unary math
def abs(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """Absolute value (Vector/Scalar). Also an ALU/activation ``op``."""

def negative(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """``-x``."""

def sign(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """-1, 0 or 1."""

def square(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """``x * x``."""

def sqrt(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """Square root (activation valid range [2^-116, 2^118])."""

def rsqrt(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """``1/sqrt(x)``; runs on GpSimd since 0.5.0 (no PSUM input)."""

def reciprocal(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """``1/x``."""

def exp(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """``e**x`` (Scalar engine)."""

def log(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """Natural logarithm (activation valid range [2^-64, 2^64])."""

def sin(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """Sine with range reduction (the raw activation is only valid on [-pi, pi])."""

def cos(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """Cosine."""

def tan(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """Tangent."""

def arctan(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """Arc tangent (activation valid range [-pi/2, pi/2])."""

def tanh(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """Hyperbolic tangent."""

def ceil(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """Round up."""

def floor(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """Round down."""

def trunc(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """Round toward zero."""

def invert(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """Bitwise NOT of an integer tile."""

def logical_not(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """XOR with 1 for 0/1 inputs (use ``nl.equal(x, 0)`` for general input)."""

# ---------------------------------------------------------------------------------------------- activations
def relu(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """``max(x, 0)`` (Scalar engine activation)."""

def sigmoid(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """``1/(1+exp(-x))``."""

def silu(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """``x * sigmoid(x)``."""

def silu_dx(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """Derivative of silu."""

def gelu(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """``0.5 * x * (1 + erf(x / sqrt(2)))``."""

def gelu_dx(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """Derivative of gelu."""

def gelu_apprx_sigmoid(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """gelu approximated with a sigmoid."""

def gelu_apprx_sigmoid_dx(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """Derivative of the sigmoid gelu approximation."""

def gelu_apprx_tanh(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """gelu approximated with tanh."""

def mish(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """``x * tanh(softplus(x))``."""

def softplus(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """``log(1 + exp(x))``."""

def erf(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """Error function."""

def erf_dx(x: NkiTensor, dtype: DTypeLike | None = None) -> ndarray:
    """Derivative of erf."""

# ---------------------------------------------------------------------------------------------- binary math
def add(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """``x + y`` (equal shapes; computed in FP32)."""

def subtract(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """``x - y``."""

def multiply(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """``x * y``."""

def divide(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """``x / y`` — not supported on hardware: use ``multiply(x, reciprocal(y))``."""

def maximum(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """Element-wise maximum."""

def minimum(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """Element-wise minimum."""

def abs_max(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """Signed value of larger magnitude (tie: ``y``). trn3 only."""

def abs_min(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """Signed value of smaller magnitude (tie: ``y``). trn3 only."""

def power(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """``x ** y`` (GpSimd); the exponent must be a tile, not a scalar."""

def fmod(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """C-style remainder. Simulation only: fails on hardware."""

def mod(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """Python-style ``%``. Simulation only."""

def equal(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """1 where ``x == y`` else 0 (dtype of the input; pass ``dtype=nl.uint8`` for a mask)."""

def not_equal(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """1 where ``x != y`` else 0."""

def less(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """1 where ``x < y`` else 0."""

def less_equal(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """1 where ``x <= y`` else 0."""

def greater(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """1 where ``x > y`` else 0."""

def greater_equal(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """1 where ``x >= y`` else 0."""

def bitwise_and(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """Bitwise AND of integer inputs."""

def bitwise_or(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """Bitwise OR of integer inputs."""

def bitwise_xor(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """Bitwise XOR of integer inputs."""

def left_shift(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """Shift left."""

def right_shift(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """Logical shift right."""

def logical_and(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """Logical AND on 0/1 inputs."""

def logical_or(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """Logical OR on 0/1 inputs."""

def logical_xor(x: Any, y: Any, dtype: DTypeLike | None = None) -> ndarray:
    """Logical XOR on 0/1 inputs."""

# ---------------------------------------------------------------------------------------------- reductions
def sum(
    x: NkiTensor, axis: int | Sequence[int], dtype: DTypeLike | None = None, keepdims: builtins.bool = False
) -> ndarray:
    """Sum over free axes (trailing contiguous ones: [1], [1,2], ...)."""

def max(
    x: NkiTensor, axis: int | Sequence[int], dtype: DTypeLike | None = None, keepdims: builtins.bool = False
) -> ndarray:
    """Maximum over free axes."""

def min(
    x: NkiTensor, axis: int | Sequence[int], dtype: DTypeLike | None = None, keepdims: builtins.bool = False
) -> ndarray:
    """Minimum over free axes."""

def mean(
    x: NkiTensor, axis: int | Sequence[int], dtype: DTypeLike | None = None, keepdims: builtins.bool = False
) -> ndarray:
    """Mean over free axes (FP32 intermediates)."""

def prod(
    x: NkiTensor, axis: int | Sequence[int], dtype: DTypeLike | None = None, keepdims: builtins.bool = False
) -> ndarray:
    """Product over free axes."""

def var(
    x: NkiTensor, axis: int | Sequence[int], dtype: DTypeLike | None = None, keepdims: builtins.bool = False
) -> ndarray:
    """Variance over free axes (``keepdims`` is ignored: dims are always kept)."""

def all(x: NkiTensor, axis: int | Sequence[int], dtype: DTypeLike | None = None) -> ndarray:
    """Logical AND reduction over free axes."""

# ---------------------------------------------------------------------------------------------- normalisation and dropout
def softmax(x: NkiTensor, axis: int | Sequence[int] = -1, dtype: DTypeLike | None = None) -> ndarray:
    """Softmax over the free axis/axes."""

def rms_norm(
    x: NkiTensor,
    w: NkiTensor,
    axis: int | Sequence[int],
    n: int,
    epsilon: float = 1e-06,
    dtype: DTypeLike | None = None,
    compute_dtype: DTypeLike | None = None,
) -> ndarray:
    """``x / RMS(x) * w`` with RMS over ``axis`` using ``n`` as the element count."""

def dropout(x: NkiTensor, rate: Any, dtype: DTypeLike | None = None) -> ndarray:
    """Zero elements with probability ``rate`` (scalar or (P,1) tile)."""

# ---------------------------------------------------------------------------------------------- loops
def affine_range(start: int, stop: int | None = None, step: int = 1) -> Iterator[int]:
    """Deprecated: identical to ``range`` (fully unrolled)."""

def sequential_range(start: int, stop: int | None = None, step: int = 1) -> Iterator[int]:
    """Deprecated: identical to ``range``."""

def static_range(start: int, stop: int | None = None, step: int = 1) -> Iterator[int]:
    """Deprecated in 0.6.0: identical to ``range``."""

def dynamic_range(start: Any, stop: Any = None, step: int = 1) -> Iterator[Any]:
    """On-device loop (body emitted once). Deprecated in 0.6.0, **removed in 0.7**: use ``nl.fori_loop``."""

def fori_loop(
    lower: Any, upper: Any, body_fun: Callable[[Any], None], step: int = 1, *, unroll: builtins.bool = False
) -> None:
    """Run ``body_fun(i)`` on device for ``i in range(lower, upper, step)`` (new in 0.6.0).

    Bounds: int or ``VirtualRegister`` (0.7 also ``NkiScalar``, 32-bit only); ``step`` a positive compile-time int.
    0.6: ``i`` is a read-only register (no Python arithmetic); 0.7: an ``NkiScalar`` allowing ``i * 4 + 1``.
    Not allowed inside ``no_reorder``. ``unroll=True`` (newest docs): unrolled by the compiler, compile-time bounds.
    """

def while_loop(init: Any, body_fun: Callable[[Any], Any]) -> None:
    """``r = init; while r != 0: r = body_fun(r)`` on device (new in 0.6.0); ``init`` is a ``VirtualRegister``."""

def if_else(
    cond: builtins.bool | int | Any, then_fn: Callable[[], None], else_fn: Callable[[], None] | None = None
) -> None:
    """Run ``then_fn()`` when ``cond`` is nonzero (negative included), else ``else_fn()`` if given (newest docs).

    ``cond``: a Python bool/int (resolved at compile time, only that callback is called) or a 32-bit
    ``NkiScalar`` (arithmetic and comparison results included) available on every engine.
    """

def no_reorder() -> AbstractContextManager[None]:
    """``with nl.no_reorder():`` keeps program order of every instruction inside (no dynamic loops inside)."""

# ---------------------------------------------------------------------------------------------- SPMD / debug
def program_id(axis: int = 0) -> int:
    """Index of this program along ``axis`` of the launch grid (the core under LNC=2); 0 without a grid."""

def num_programs(axes: int = 0) -> int:
    """Number of programs along ``axes``; 1 without LNC."""

def program_ndim() -> int:
    """Number of launch-grid dimensions (0 without a grid)."""

def device_print(print_prefix: str, tensor: NkiTensor) -> None:
    """Print a tensor at run time (``print`` runs at specialisation time instead)."""

# ---------------------------------------------------------------------------------------------- 0.7 grids
_Grid = TypeVar("_Grid", bound="NkiGrid")

class NkiGrid:
    """0.7: base of tile/block grid views."""

    buffer: MemoryRegion
    data: NkiTensor
    dtype: DType
    element_shape: tuple[int, ...]
    index_step_elements: tuple[int, ...]
    is_data_representable: builtins.bool
    is_remainder: builtins.bool
    shape: tuple[int, ...]
    tile_shape: tuple[int, ...]
    def __getitem__(self: _Grid, key: Any) -> _Grid:
        """Select tiles/blocks by grid coordinate: a grid of the same kind (one tile: shape ``()``)."""

class NkiTileGrid(NkiGrid):
    """0.7: a tensor seen as a grid of fixed-size tiles."""

class NkiBlockGrid(NkiGrid):
    """0.7: a grid of blocks of tiles."""

    block_shape: tuple[int, ...]

def tiles(source: Any, *, tile_shape: Shape | None = None) -> NkiTileGrid:
    """0.7 only: view a tensor as a grid of tiles (``.data`` is the operand; edge tiles are clamped)."""

def blocks(source: Any, *, tile_shape: Shape | None = None, block_shape: Shape) -> NkiBlockGrid:
    """0.7 only: view a tensor as blocks of ``block_shape`` tiles."""

def alloc_tiles(
    *,
    tile_shape: Shape,
    element_shape: Shape,
    buffer: MemoryRegion,
    dtype: DTypeLike,
    address: tuple[int, int] | None = None,
    name: str | None = "",
) -> NkiTileGrid:
    """0.7 only: allocate uninitialised storage organised as tiles."""

def alloc_blocks(
    *,
    tile_shape: Shape,
    block_shape: Shape,
    element_shape: Shape,
    buffer: MemoryRegion,
    dtype: DTypeLike,
    address: tuple[int, int] | None = None,
    name: str | None = "",
) -> NkiBlockGrid:
    """0.7 only: allocate uninitialised storage organised as blocks of tiles."""

# ---------------------------------------------------------------------------------------------- operator constants
prelu: Any
"""Parametric ReLU activation ``op`` (slope = ``relu_param`` of ``nisa.activate2``)."""
bypass: Any
"""Pass-through ``op0``/``op1`` for ``nisa.activate2``."""
average: Any
"""Mean-over-partitions ``op`` of ``nisa.tensor_partition_reduce``."""
