"""``neuronxcc.nki.language`` (``nl``) of the legacy NKI API (NKI 0.1, "Beta 1", Neuron 2.20-2.26).

What legacy kernels have that NKI 0.7 does not: index tiles (``nl.arange``, ``nl.mgrid``) that index tensors
(``t[i_p, i_f]``), ``mask=`` on every call (a compile-time predicate over index tiles and loop indices), block
dimensions (``nl.par_dim``), SPMD grids (``nl.program_id`` over ``kernel[a, b]``), ``nl.static_cast`` and
``nl.loop_reduce``, and arithmetic operators on tiles (``a + b``). Signatures from the Neuron v2.26.1 API pages
(``/en/v2.26.1/nki/api/generated/nki.language.*.html``); the element-wise families' ``mask=None, **kwargs`` after
their current parameters is inferred from the pages of ``loop_reduce`` and ``nki.isa.activation``. Names and
types this API shares with ``nki.language`` are re-exported from it. ``nki-studio migrate`` rewrites legacy code
to NKI 0.7. Stubs written by nki-studio.
"""

import builtins
from collections.abc import Sequence
from typing import Any

from nki.language import DType as DType
from nki.language import DTypeLike as DTypeLike
from nki.language import MemoryRegion as MemoryRegion
from nki.language import NKIObject as NKIObject
from nki.language import NkiTensor as NkiTensor
from nki.language import affine_range as affine_range
from nki.language import bfloat16 as bfloat16
from nki.language import bool as bool
from nki.language import bool_ as bool_
from nki.language import device_print as device_print
from nki.language import float8_e4m3 as float8_e4m3
from nki.language import float8_e4m3fn as float8_e4m3fn
from nki.language import float8_e5m2 as float8_e5m2
from nki.language import float16 as float16
from nki.language import float32 as float32
from nki.language import hbm as hbm
from nki.language import int8 as int8
from nki.language import int16 as int16
from nki.language import int32 as int32
from nki.language import is_hbm as is_hbm
from nki.language import is_on_chip as is_on_chip
from nki.language import is_psum as is_psum
from nki.language import is_sbuf as is_sbuf
from nki.language import ndarray as _ndarray
from nki.language import private_hbm as private_hbm
from nki.language import psum as psum
from nki.language import sbuf as sbuf
from nki.language import sequential_range as sequential_range
from nki.language import shared_hbm as shared_hbm
from nki.language import static_range as static_range
from nki.language import tfloat32 as tfloat32
from nki.language import tile_size as tile_size
from nki.language import uint8 as uint8
from nki.language import uint16 as uint16
from nki.language import uint32 as uint32

Shape = Sequence[int]
Mask = Any
"""A ``mask=``: a compile-time predicate over index tiles, loop indices and ``program_id`` (``i_p < n``,
``(i_f >= 4) & (i_f < 12)``); the call only touches the elements where it holds."""

# ---------------------------------------------------------------------------------------------- index tiles
class IndexTile:
    """An affine index expression over ``nl.arange``/``nl.mgrid`` indices: indexes a tensor (``t[i_p, i_f]``),
    combines with ``+ - *`` and integers, and compared with ``< <= > >=`` makes a ``mask=`` predicate.

    Removed in NKI 0.2: index with slices (``t[0:128, 0:512]``), ``nl.ds(start, size)`` or ``.ap()``.
    """

    def __getitem__(self, key: Any) -> IndexTile: ...
    def __add__(self, other: Any) -> IndexTile: ...
    def __radd__(self, other: Any) -> IndexTile: ...
    def __sub__(self, other: Any) -> IndexTile: ...
    def __rsub__(self, other: Any) -> IndexTile: ...
    def __mul__(self, other: Any) -> IndexTile: ...
    def __rmul__(self, other: Any) -> IndexTile: ...
    def __lt__(self, other: Any) -> Any: ...
    def __le__(self, other: Any) -> Any: ...
    def __gt__(self, other: Any) -> Any: ...
    def __ge__(self, other: Any) -> Any: ...

def arange(*args: int) -> IndexTile:
    """``arange(stop)`` / ``arange(start, stop)``: contiguous index values, used to index a tensor and define a
    tile; ``nl.arange(128)[:, None]`` is a partition index, ``nl.arange(512)[None, :]`` a free index
    [v2.26.1 nki.language.arange]. Removed in NKI 0.2: slice instead (``t[0:128, 0:512]``)."""

class _Mgrid:
    def __getitem__(self, key: Any) -> Any: ...

mgrid: _Mgrid
"""``nl.mgrid[0:128, 0:512]``: index tiles of a dense grid, like ``numpy.mgrid``; unpack them (``i_p, i_f =
nl.mgrid[...]``) or read ``.p`` / ``.x`` [v2.26.1 nki.language.mgrid]. Removed in NKI 0.2: slice instead."""

def par_dim(size: int) -> int:
    """Mark the partition dimension of a shape with block dimensions before it: ``nl.ndarray((B, nl.par_dim(128),
    512), ...)`` is ``B`` blocks of ``(128, 512)`` tiles [v2.26.1 nki.language.par_dim]. Removed in NKI 0.2: fold
    the blocks into the free dims ``(128, B, 512)`` or keep a list of tiles."""

# ---------------------------------------------------------------------------------------------- creation
class ndarray(_ndarray):
    """Allocate a tensor of ``shape``/``dtype`` on ``buffer`` [v2.26.1 nki.language.ndarray]; ``buffer=`` defaults
    to ``None`` (the compiler decides; SBUF since NKI 0.3) and may be a ``neuronxcc.nki.compiler`` allocator.
    Block dimensions come before ``nl.par_dim(P)``. Kernel outputs use ``buffer=nl.shared_hbm``."""

    def __init__(
        self, shape: Shape, dtype: DTypeLike, *, buffer: Any = None, name: str = "", **kwargs: Any
    ) -> None: ...
    def __getitem__(self, key: Any) -> ndarray: ...
    def __setitem__(self, key: Any, value: Any) -> None: ...
    # Arithmetic on tiles (``c = a + b``, ``acc += nisa.nc_matmul(...)``): element-wise, as the ``nl`` function
    # of the same name [legacy examples; deprecations.md §E]. Removed in NKI 0.2: call ``nl.add`` ... instead.
    def __add__(self, other: Any) -> ndarray: ...
    def __radd__(self, other: Any) -> ndarray: ...
    def __iadd__(self, other: Any) -> ndarray: ...
    def __sub__(self, other: Any) -> ndarray: ...
    def __rsub__(self, other: Any) -> ndarray: ...
    def __isub__(self, other: Any) -> ndarray: ...
    def __mul__(self, other: Any) -> ndarray: ...
    def __rmul__(self, other: Any) -> ndarray: ...
    def __imul__(self, other: Any) -> ndarray: ...
    def __truediv__(self, other: Any) -> ndarray: ...
    def __rtruediv__(self, other: Any) -> ndarray: ...
    def __neg__(self) -> ndarray: ...
    def broadcast_to(self, shape: Shape) -> ndarray: ...

def empty_like(
    a: NkiTensor, dtype: DTypeLike | None = None, *, buffer: Any = None, name: str = "", **kwargs: Any
) -> ndarray:
    """Uninitialised tensor with the shape (and by default dtype) of ``a`` [v2.26.1 nki.language.empty_like]."""

def zeros(
    shape: Shape,
    dtype: DTypeLike,
    buffer: MemoryRegion = ...,
    name: str | None = "",
    *,
    mask: Mask = None,
    **kwargs: Any,
) -> ndarray:
    """Allocate a tensor filled with 0 (default SBUF)."""

def ones(
    shape: Shape,
    dtype: DTypeLike,
    buffer: MemoryRegion = ...,
    name: str | None = "",
    *,
    mask: Mask = None,
    **kwargs: Any,
) -> ndarray:
    """Allocate a tensor filled with 1 (default SBUF)."""

def full(
    shape: Shape,
    fill_value: Any,
    dtype: DTypeLike,
    buffer: MemoryRegion = ...,
    name: str | None = "",
    *,
    mask: Mask = None,
    **kwargs: Any,
) -> ndarray:
    """Allocate a tensor filled with ``fill_value`` (default SBUF)."""

def zeros_like(
    x: NkiTensor,
    dtype: DTypeLike | None = None,
    buffer: MemoryRegion | None = None,
    name: str | None = "",
    *,
    mask: Mask = None,
    **kwargs: Any,
) -> ndarray:
    """Zeros with the shape of ``x``."""

def rand(
    shape: Shape,
    dtype: DTypeLike,
    buffer: MemoryRegion = ...,
    name: str | None = "",
    *,
    mask: Mask = None,
    **kwargs: Any,
) -> ndarray:
    """Uniform random values in [0, 1)."""

def random_seed(seed: NkiTensor, *, mask: Mask = None, **kwargs: Any) -> None:
    """Seed ``nl.rand``/``nisa.dropout`` with the 32-bit value of a (1, 1) tile [v2.26.1 nki.language.random_seed]."""

def shared_constant(constant: Any, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """A ``shared_hbm`` tensor initialised from a NumPy array or ``.npy`` path, embedded in the binary."""

# ---------------------------------------------------------------------------------------------- data movement
def load_transpose2d(
    src: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any
) -> ndarray:
    """Load a 2-D HBM tensor into SBUF with the two axes swapped."""

def copy(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """New SBUF tile with the content of ``x`` (SBUF or PSUM); Vector ``tensor_copy``."""

def transpose(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """2-D partition/free swap; the result is in PSUM (Tensor engine)."""

def broadcast_to(
    x: NkiTensor, shape: Shape, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any
) -> ndarray:
    """Broadcast an on-chip tile to ``shape`` (same rank, each dim equal or 1)."""

def expand_dims(x: NkiTensor, axis: int, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """View with a new size-1 axis."""

def ds(start: Any, size: int) -> slice:
    """Dynamic slice ``start : start + size`` for use inside ``[]``."""

def gather_flattened(
    data: NkiTensor,
    indices: NkiTensor,
    axis: int = 0,
    dtype: DTypeLike | None = None,
    *,
    mask: Mask = None,
    **kwargs: Any,
) -> ndarray:
    """Per-partition gather from the flattened free dims of ``data`` (maps to ``nisa.nc_n_gather``)."""

def where(
    condition: NkiTensor, x: Any, y: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any
) -> ndarray:
    """Element-wise select; ``condition`` is a 1.0/0.0 tile."""

# ---------------------------------------------------------------------------------------------- unary math
def abs(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """Absolute value (Vector/Scalar). Also an ALU/activation ``op``."""

def negative(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """``-x``."""

def sign(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """-1, 0 or 1."""

def square(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """``x * x``."""

def sqrt(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """Square root (activation valid range [2^-116, 2^118])."""

def rsqrt(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """``1/sqrt(x)``."""

def reciprocal(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """``1/x``."""

def exp(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """``e**x`` (Scalar engine)."""

def log(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """Natural logarithm (activation valid range [2^-64, 2^64])."""

def sin(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """Sine with range reduction (the raw activation is only valid on [-pi, pi])."""

def cos(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """Cosine."""

def tan(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """Tangent."""

def arctan(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """Arc tangent (activation valid range [-pi/2, pi/2])."""

def tanh(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """Hyperbolic tangent."""

def ceil(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """Round up."""

def floor(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """Round down."""

def trunc(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """Round toward zero."""

def invert(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """Bitwise NOT of an integer tile."""

def logical_not(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """XOR with 1 for 0/1 inputs (use ``nl.equal(x, 0)`` for general input)."""

# ---------------------------------------------------------------------------------------------- activations
def relu(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """``max(x, 0)`` (Scalar engine activation)."""

def sigmoid(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """``1/(1+exp(-x))``."""

def silu(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """``x * sigmoid(x)``."""

def silu_dx(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """Derivative of silu."""

def gelu(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """``0.5 * x * (1 + erf(x / sqrt(2)))``."""

def gelu_dx(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """Derivative of gelu."""

def gelu_apprx_sigmoid(
    x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any
) -> ndarray:
    """gelu approximated with a sigmoid."""

def gelu_apprx_sigmoid_dx(
    x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any
) -> ndarray:
    """Derivative of the sigmoid gelu approximation."""

def gelu_apprx_tanh(
    x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any
) -> ndarray:
    """gelu approximated with tanh."""

def mish(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """``x * tanh(softplus(x))``."""

def softplus(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """``log(1 + exp(x))``."""

def erf(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """Error function."""

def erf_dx(x: NkiTensor, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """Derivative of erf."""

# ---------------------------------------------------------------------------------------------- binary math
def add(x: Any, y: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """``x + y`` (equal shapes; computed in FP32)."""

def subtract(x: Any, y: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """``x - y``."""

def multiply(x: Any, y: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """``x * y``."""

def divide(x: Any, y: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """``x / y`` — not supported on hardware: use ``multiply(x, reciprocal(y))``."""

def maximum(x: Any, y: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """Element-wise maximum."""

def minimum(x: Any, y: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """Element-wise minimum."""

def power(x: Any, y: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """``x ** y`` (GpSimd); the exponent must be a tile, not a scalar."""

def fmod(x: Any, y: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """C-style remainder. Simulation only: fails on hardware."""

def mod(x: Any, y: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """Python-style ``%``. Simulation only."""

def equal(x: Any, y: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """1 where ``x == y`` else 0 (dtype of the input; pass ``dtype=nl.uint8`` for a mask)."""

def not_equal(x: Any, y: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """1 where ``x != y`` else 0."""

def less(x: Any, y: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """1 where ``x < y`` else 0."""

def less_equal(
    x: Any, y: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any
) -> ndarray:
    """1 where ``x <= y`` else 0."""

def greater(x: Any, y: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """1 where ``x > y`` else 0."""

def greater_equal(
    x: Any, y: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any
) -> ndarray:
    """1 where ``x >= y`` else 0."""

def bitwise_and(
    x: Any, y: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any
) -> ndarray:
    """Bitwise AND of integer inputs."""

def bitwise_or(
    x: Any, y: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any
) -> ndarray:
    """Bitwise OR of integer inputs."""

def bitwise_xor(
    x: Any, y: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any
) -> ndarray:
    """Bitwise XOR of integer inputs."""

def left_shift(
    x: Any, y: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any
) -> ndarray:
    """Shift left."""

def right_shift(
    x: Any, y: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any
) -> ndarray:
    """Logical shift right."""

def logical_and(
    x: Any, y: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any
) -> ndarray:
    """Logical AND on 0/1 inputs."""

def logical_or(
    x: Any, y: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any
) -> ndarray:
    """Logical OR on 0/1 inputs."""

def logical_xor(
    x: Any, y: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any
) -> ndarray:
    """Logical XOR on 0/1 inputs."""

# ---------------------------------------------------------------------------------------------- reductions
def sum(
    x: NkiTensor,
    axis: int | Sequence[int],
    dtype: DTypeLike | None = None,
    keepdims: builtins.bool = False,
    *,
    mask: Mask = None,
    **kwargs: Any,
) -> ndarray:
    """Sum over free axes (trailing contiguous ones: [1], [1,2], ...)."""

def max(
    x: NkiTensor,
    axis: int | Sequence[int],
    dtype: DTypeLike | None = None,
    keepdims: builtins.bool = False,
    *,
    mask: Mask = None,
    **kwargs: Any,
) -> ndarray:
    """Maximum over free axes."""

def min(
    x: NkiTensor,
    axis: int | Sequence[int],
    dtype: DTypeLike | None = None,
    keepdims: builtins.bool = False,
    *,
    mask: Mask = None,
    **kwargs: Any,
) -> ndarray:
    """Minimum over free axes."""

def mean(
    x: NkiTensor,
    axis: int | Sequence[int],
    dtype: DTypeLike | None = None,
    keepdims: builtins.bool = False,
    *,
    mask: Mask = None,
    **kwargs: Any,
) -> ndarray:
    """Mean over free axes (FP32 intermediates)."""

def prod(
    x: NkiTensor,
    axis: int | Sequence[int],
    dtype: DTypeLike | None = None,
    keepdims: builtins.bool = False,
    *,
    mask: Mask = None,
    **kwargs: Any,
) -> ndarray:
    """Product over free axes."""

def var(
    x: NkiTensor,
    axis: int | Sequence[int],
    dtype: DTypeLike | None = None,
    keepdims: builtins.bool = False,
    *,
    mask: Mask = None,
    **kwargs: Any,
) -> ndarray:
    """Variance over free axes (``keepdims`` is ignored: dims are always kept)."""

def all(
    x: NkiTensor,
    axis: int | Sequence[int],
    dtype: DTypeLike | None = None,
    *,
    mask: Mask = None,
    **kwargs: Any,
) -> ndarray:
    """Logical AND reduction over free axes."""

# ---------------------------------------------------------------------------------------------- normalisation and dropout
def softmax(
    x: NkiTensor,
    axis: int | Sequence[int] = -1,
    dtype: DTypeLike | None = None,
    *,
    mask: Mask = None,
    **kwargs: Any,
) -> ndarray:
    """Softmax over the free axis/axes."""

def rms_norm(
    x: NkiTensor,
    w: NkiTensor,
    axis: int | Sequence[int],
    n: int,
    epsilon: float = 1e-06,
    dtype: DTypeLike | None = None,
    compute_dtype: DTypeLike | None = None,
    *,
    mask: Mask = None,
    **kwargs: Any,
) -> ndarray:
    """``x / RMS(x) * w`` with RMS over ``axis`` using ``n`` as the element count."""

def dropout(
    x: NkiTensor, rate: Any, dtype: DTypeLike | None = None, *, mask: Mask = None, **kwargs: Any
) -> ndarray:
    """Zero elements with probability ``rate`` (scalar or (P,1) tile)."""

# ---------------------------------------------------------------------------------------------- legacy data movement
def load(src: NkiTensor, *, mask: Mask = None, dtype: DTypeLike | None = None, **kwargs: Any) -> ndarray:
    """Load an HBM tile (``a[i_p, i_f]``, slices, or a 1-D column) into a new SBUF tile [v2.26.1 nki.language.load]."""

def store(dst: NkiTensor, value: NkiTensor, *, mask: Mask = None, **kwargs: Any) -> None:
    """Store an SBUF (or PSUM) tile into HBM [v2.26.1 nki.language.store]."""

def matmul(
    x: NkiTensor, y: NkiTensor, *, transpose_x: builtins.bool = False, mask: Mask = None, **kwargs: Any
) -> ndarray:
    """``x @ y`` (``x.T @ y`` with ``transpose_x=True``) on the Tensor engine; the result is an FP32 PSUM tile
    [v2.26.1 nki.language.matmul]."""

def static_cast(x: Any, dtype: DTypeLike, **kwargs: Any) -> ndarray:
    """``x`` converted to ``dtype`` [v2.26.1 nki.language.static_cast]. Removed in NKI 0.2: ``nl.copy(x,
    dtype=...)`` or ``nisa.tensor_copy`` into a tile of the target dtype (``.view()`` to reinterpret bits)."""

def loop_reduce(
    x: NkiTensor,
    op: Any,
    loop_indices: Any,
    *,
    dtype: DTypeLike | None = None,
    mask: Mask = None,
    **kwargs: Any,
) -> ndarray:
    """Reduce ``x`` with ``op`` over the loops of ``loop_indices`` into the call's destination, which is also
    ``op``'s other operand: ``b = nl.loop_reduce(a, op=np.add, loop_indices=[k])`` in a loop over ``k`` is
    ``b = nisa.tensor_tensor(data1=b, data2=a, op=np.add)`` [v2.26.1 nki.language.loop_reduce]. Removed in NKI
    0.2: ``nisa.tensor_tensor(dst=acc, data1=acc, data2=x, op=op)`` in the loop."""

class _Fp32:
    min: float
    """The lowest FP32 value (bit pattern 0xff7fffff)."""

fp32: _Fp32
"""FP32 constants: ``nl.fp32.min`` [reference notes, language.md §2]. Removed in NKI 0.2: ``-3.4028235e+38``."""

class finfo:
    """Limits of a float dtype: ``min``, ``max``, ``eps``, ``tiny``, ``bits`` [v2.26.1 nki.language.finfo]."""

    min: float
    max: float
    eps: float
    tiny: float
    bits: int
    def __init__(self, dtype: DTypeLike) -> None: ...

# ---------------------------------------------------------------------------------------------- SPMD
def program_id(axis: int) -> int:
    """The index of this program along ``axis`` of the launch grid ``kernel[a, b]`` [v2.26.1
    nki.language.program_id]."""

def num_programs(axes: int | Sequence[int] | None = None) -> int:
    """The number of programs along ``axes`` of the launch grid; ``None``: all of them [v2.26.1
    nki.language.num_programs] (NKI 0.3 changed the default to axis 0)."""

def program_ndim() -> int:
    """The number of dimensions of the launch grid [v2.26.1 nki.language.program_ndim]."""

def spmd_dim(*args: Any, **kwargs: Any) -> Any:
    """A launch-grid dimension distributed over NeuronCores: ``kernel[nl.spmd_dim(2, nl.nc(2))]`` [v2.26.1
    nki.language.spmd_dim]. Removed in NKI 0.2: the bracket takes one LNC degree (``kernel[2]``)."""

def nc(n: int) -> Any:
    """``n`` NeuronCores, for ``nl.spmd_dim`` [v2.26.1 nki.language.nc]."""
