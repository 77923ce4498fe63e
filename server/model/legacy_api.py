"""The legacy ``neuronxcc.nki`` API (NKI 0.1, "Beta 1", Neuron 2.20-2.26) declared once, against the current one.

``python -m nki_studio.model.legacy_api_generate`` (``bash scripts/generate.sh``) writes the legacy stubs
``server/stubs/neuronxcc/**/__init__.pyi`` from this module and the current stubs (``server/stubs/nki/``), which
stay the one declaration of every signature the two APIs share. A legacy module is:

- ``reexports``: names legacy shares unchanged with the current module (``from nki.language import x as x``);
- ``Derived`` names: the current stub's function with the legacy calling convention, i.e. without the
  ``dst``/``name`` parameters the current API added, with ``mask=`` (and on ``nki.isa`` ``dtype=``) keyword-only
  and ``**kwargs``, returning a new tile (``ndarray``) instead of writing ``dst``; ``docs`` holds the legacy text
  where it differs from the current docstring;
- ``Declared`` stub text: names that exist only in legacy (``nl.arange``, ``nl.mgrid``, ``nl.par_dim``, the
  entry points, the ``compiler`` allocators) or whose legacy signature differs (``nl.load``, ``nisa.nc_matmul``),
  with their docs from the v2.26.1 API pages.

``tests/intelligence/test_legacy_stubs_generated.py`` fails while the committed stubs differ from the rendering;
the names only legacy has (``legacy_api_generate.legacy_only``) are also what the TextMate grammar scopes as
legacy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nki_studio.model import nki_api


@dataclass(frozen=True)
class Derived:
    """Functions of the current stub in their legacy form (see the module docstring)."""

    names: tuple[str, ...]
    docs: dict[str, str] = field(default_factory=dict)  # name -> legacy docstring, where it differs
    # name -> its first parameter that is keyword-only in legacy (``activation(op, data, *, bias=None, ...)``)
    keyword_only_from: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Declared:
    """Stub text written for the legacy API itself."""

    source: str


@dataclass(frozen=True)
class Section:
    """A ``# ---- heading`` section of a stub and its entries, in order."""

    heading: str
    parts: tuple[Derived | Declared, ...]

    def __init__(self, heading: str, *parts: Derived | Declared) -> None:
        object.__setattr__(self, "heading", heading)
        object.__setattr__(self, "parts", parts)


@dataclass(frozen=True)
class LegacyModule:
    """One legacy stub: ``neuronxcc/nki/<path>/__init__.pyi`` (``""``: ``neuronxcc.nki``, ``".."``: ``neuronxcc``)."""

    path: str
    doc: str
    header: str  # imports and type aliases, after the docstring
    reexports: tuple[str, ...] = ()
    sections: tuple[Section, ...] = ()


# Keyword-only parameters every legacy call of a module takes, with their annotations [v2.26.1 nki.isa.activation
# page: ``mask=None, dtype=None``; nki.language.loop_reduce page: ``mask=None``]; and the parameters the current
# API added, which a legacy call does not have (the destination and the profiler label, Neuron 2.27 notes).
LEGACY_KEYWORDS: dict[str, dict[str, str]] = {
    "language": {"mask": "Mask"},
    "isa": {"mask": "Mask", "dtype": "DTypeLike | None"},
}
CURRENT_ONLY_PARAMETERS: dict[str, tuple[str, ...]] = {"language": ("dst",), "isa": ("dst", "name")}
# Functions of the current element-wise families added after Neuron 2.26 (trn3's ALU ops; not on the v2.26.1 pages).
ADDED_AFTER_LEGACY = ("abs_max", "abs_min")

LANGUAGE = LegacyModule(
    "language",
    doc="""``neuronxcc.nki.language`` (``nl``) of the legacy NKI API (NKI 0.1, "Beta 1", Neuron 2.20-2.26).

What legacy kernels have that NKI 0.7 does not: index tiles (``nl.arange``, ``nl.mgrid``) that index tensors
(``t[i_p, i_f]``), ``mask=`` on every call (a compile-time predicate over index tiles and loop indices), block
dimensions (``nl.par_dim``), SPMD grids (``nl.program_id`` over ``kernel[a, b]``), ``nl.static_cast`` and
``nl.loop_reduce``, and arithmetic operators on tiles (``a + b``). Signatures from the Neuron v2.26.1 API pages
(``/en/v2.26.1/nki/api/generated/nki.language.*.html``); the element-wise families' ``mask=None, **kwargs`` after
their current parameters is inferred from the pages of ``loop_reduce`` and ``nki.isa.activation``. Names and
types this API shares with ``nki.language`` are re-exported from it. ``nki-studio migrate`` rewrites legacy code
to NKI 0.7. Stubs written by nki-studio.
""",
    header='''
import builtins
from collections.abc import Sequence
from typing import Any

from nki.language import ndarray as _ndarray

Shape = Sequence[int]
Mask = Any
"""A ``mask=``: a compile-time predicate over index tiles, loop indices and ``program_id`` (``i_p < n``,
``(i_f >= 4) & (i_f < 12)``); the call only touches the elements where it holds."""
''',
    reexports=(
        "DType",
        "DTypeLike",
        "MemoryRegion",
        "NKIObject",
        "NkiTensor",
        "affine_range",
        "bfloat16",
        "bool",
        "bool_",
        "device_print",
        "float8_e4m3",
        "float8_e4m3fn",
        "float8_e5m2",
        "float16",
        "float32",
        "hbm",
        "int8",
        "int16",
        "int32",
        "is_hbm",
        "is_on_chip",
        "is_psum",
        "is_sbuf",
        "private_hbm",
        "psum",
        "sbuf",
        "sequential_range",
        "shared_hbm",
        "static_range",
        "tfloat32",
        "tile_size",
        "uint8",
        "uint16",
        "uint32",
        "ds",
    ),
    sections=(
        Section(
            "index tiles",
            Declared('''
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
'''),
        ),
        Section(
            "creation",
            Declared('''
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
'''),
            Derived(
                (
                    "zeros",
                    "ones",
                    "full",
                    "zeros_like",
                    "rand",
                    "random_seed",
                    "shared_constant",
                ),
                docs={
                    "rand": """Uniform random values in [0, 1).""",
                    "random_seed": """Seed ``nl.rand``/``nisa.dropout`` with the 32-bit value of a (1, 1) tile [v2.26.1 nki.language.random_seed].""",
                },
            ),
        ),
        Section(
            "data movement",
            Derived(
                (
                    "load_transpose2d",
                    "copy",
                    "transpose",
                    "broadcast_to",
                    "expand_dims",
                    "gather_flattened",
                    "where",
                ),
                docs={
                    "copy": """New SBUF tile with the content of ``x`` (SBUF or PSUM); Vector ``tensor_copy``.""",
                },
            ),
        ),
        # The element-wise and reduction families: every function of the current stub's section of that name
        # (``nki_api``, generated from it), but for the later additions.
        Section(
            "unary math",
            Derived(nki_api.LANGUAGE_UNARY_MATH, docs={"rsqrt": """``1/sqrt(x)``."""}),
        ),
        Section("activations", Derived(nki_api.LANGUAGE_ACTIVATIONS)),
        Section(
            "binary math",
            Derived(tuple(n for n in nki_api.LANGUAGE_BINARY if n not in ADDED_AFTER_LEGACY)),
        ),
        Section("reductions", Derived(nki_api.LANGUAGE_REDUCTIONS)),
        Section("normalisation and dropout", Derived(nki_api.LANGUAGE_SHAPE_KEEPING)),
        Section(
            "legacy data movement",
            Declared('''
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
'''),
        ),
        Section(
            "SPMD",
            Declared('''
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
'''),
        ),
    ),
)

ISA = LegacyModule(
    "isa",
    doc="""``neuronxcc.nki.isa`` (``nisa``) of the legacy NKI API (NKI 0.1, "Beta 1", Neuron 2.20-2.26).

Legacy instructions *return* their result tile: ``acc = nisa.nc_matmul(a, b)`` is a new FP32 PSUM tile,
``y = nisa.activation(op=nl.exp, data=x)`` a new SBUF tile; ``dtype=`` picks the result's dtype and ``mask=`` the
elements computed. NKI 0.2 (Neuron 2.27) removed both: every instruction takes its destination first (``dst=``)
[v2.26.1 nki.isa.* pages; Neuron 2.27 release notes]. Signatures: ``nc_matmul``, ``activation``,
``activation_reduce``, ``iota``, ``affine_select`` and ``memset`` from their v2.26.1 pages; the other
value-returning ones are the current instruction's parameters without ``dst``/``name=`` plus ``mask=``/``dtype=``
(inferred from those pages and the 2.27 notes). The instructions the simulator runs only in their current ``dst=``
form, and the enums, are re-exported from ``nki.isa``. ``nki-studio migrate`` rewrites value-returning calls to
``dst=`` calls. Stubs written by nki-studio.
""",
    header="""
from collections.abc import Sequence
from typing import Any

from nki.language import DTypeLike, NkiTensor

from ..language import ndarray

Op = Any  # an ``nl`` (or NumPy) operator such as ``nl.add`` or ``np.add``
Mask = Any  # a compile-time predicate over index tiles (``neuronxcc.nki.language.Mask``)
""",
    reexports=(
        "dge_mode",
        "dma_copy",
        "engine",
        "get_nc_version",
        "gpsimd_engine",
        "local_gather",
        "max8",
        "nc_find_index8",
        "nc_match_replace8",
        "nc_stream_shuffle",
        "nc_version",
        "oob_mode",
        "range_select",
        "reduce_cmd",
        "scalar_engine",
        "select_reduce",
        "sequence_bounds",
        "tensor_copy_predicated",
        "tensor_engine",
        "unknown_engine",
        "vector_engine",
    ),
    sections=(
        Section(
            "value-returning",
            Declared('''
def nc_matmul(
    stationary: NkiTensor,
    moving: NkiTensor,
    *,
    is_stationary_onezero: bool = False,
    is_moving_onezero: bool = False,
    is_transpose: bool = False,
    tile_position: Sequence[int] = (),
    tile_size: Sequence[int] = (),
    mask: Mask = None,
    **kwargs: Any,
) -> ndarray:
    """``stationary.T @ moving`` on the Tensor engine, returned as a new FP32 PSUM tile [v2.26.1 nki.isa.nc_matmul].

    Both operands in SBUF with the same partition size (<= 128, the contraction); free sizes <= 128 (stationary)
    and <= 512 (moving): ``(128, 126)`` and ``(128, 512)`` give a ``(126, 512)`` tile. ``psum_tile += nisa.nc_matmul(
    ...)`` accumulates a contraction over 128 in PSUM.
    """
'''),
            Derived(
                ("activation", "activation_reduce"),
                docs={
                    "activation": """``op(data * scale + bias)`` on the Scalar engine, returned as a new tile; optionally reduced per partition
    into the engine's registers / ``reduce_res`` [v2.26.1 nki.isa.activation].""",
                    "activation_reduce": """``activation`` plus a reduction of its result along the free dims into ``reduce_res`` (one element per
    partition) [v2.26.1 nki.isa.activation_reduce].""",
                },
                keyword_only_from={"activation": "bias", "activation_reduce": "reduce_op"},
            ),
            Derived(
                (
                    "nc_transpose",
                    "tensor_reduce",
                    "tensor_partition_reduce",
                    "tensor_tensor",
                    "tensor_tensor_scan",
                    "scalar_tensor_tensor",
                    "tensor_scalar",
                    "tensor_scalar_reduce",
                    "tensor_copy",
                    "reciprocal",
                    "dropout",
                    "dma_transpose",
                    "bn_stats",
                    "bn_aggr",
                ),
                docs={
                    "nc_transpose": """2-D partition/free transpose ``result[f, p] = data[p, f]``; same dtype.""",
                    "tensor_reduce": """Reduce ``data`` over trailing free axes with ``op`` (optionally negated).""",
                    "tensor_partition_reduce": """Reduce across partitions into a (1, free...) tile with add/average/max/bitwise ops.""",
                    "tensor_tensor": """``result = op(data1, data2)`` element-wise (no broadcasting; same partitions and elements per partition).""",
                    "tensor_tensor_scan": """Sequential scan per partition: ``prev = op1(op0(data0[:, i], prev), data1[:, i])``.""",
                    "scalar_tensor_tensor": """``result = op1(op0(data, operand0), operand1)``: a scalar/(P,1) stage then a full-tile stage.""",
                    "tensor_scalar": """``result = op1(op0(data, operand0), operand1)`` with scalar or (P,1) operands broadcast along the free dims.""",
                    "tensor_scalar_reduce": """``result = op0(data, operand0)`` and reduce it per partition into the accumulator / ``reduce_res`` (P,1).""",
                    "tensor_copy": """``result = src`` (bit-exact for equal dtypes, else cast through FP32). SBUF/PSUM in and out.""",
                    "reciprocal": """``result = 1 / data`` in FP32 (more precise than the Scalar activation).""",
                    "dropout": """Zero each element with probability ``prob`` (kept values are not rescaled).""",
                    "dma_transpose": """Transpose while copying HBM->SBUF or SBUF->SBUF.""",
                    "bn_stats": """Per-partition mean/variance statistics of ``data`` as a new (P, 6) tile (FP32 cast back to the data's dtype without ``dtype=``) [v2.26.1 nki.isa.bn_stats].""",
                    "bn_aggr": """Aggregate ``bn_stats`` results into a new (P, 2) tile of mean and variance [v2.26.1 nki.isa.bn_aggr].""",
                },
            ),
        ),
        Section(
            "legacy forms",
            Declared('''
def iota(expr: Any, dtype: DTypeLike, *, mask: Mask = None, **kwargs: Any) -> ndarray:
    """A new SBUF tile holding the values of an index-tile expression (``nl.arange``/``nl.mgrid`` arithmetic) on
    GpSimd [v2.26.1 nki.isa.iota]. NKI 0.2 replaced ``expr`` with ``pattern=``/``offset=``."""

def affine_select(
    pred: Any,
    on_true_tile: NkiTensor,
    on_false_value: Any,
    *,
    mask: Mask = None,
    dtype: DTypeLike | None = None,
    **kwargs: Any,
) -> ndarray:
    """``on_true_tile`` where the affine predicate over index tiles holds, else ``on_false_value``, as a new tile
    (GpSimd; causal masks) [v2.26.1 nki.isa.affine_select]. NKI 0.2 replaced ``pred`` with ``pattern=``/``cmp_op=``."""

def memset(
    shape: Sequence[int],
    value: Any,
    dtype: DTypeLike,
    *,
    mask: Mask = None,
    engine: engine = ...,
    **kwargs: Any,
) -> ndarray:
    """A new tile of ``shape`` filled with ``value`` [v2.26.1 nki.isa.memset]. NKI 0.2: ``nisa.memset(dst, value)``."""
'''),
        ),
    ),
)

COMPILER = LegacyModule(
    "compiler",
    doc="""``neuronxcc.nki.compiler`` (``ncc``): direct allocation and compiler directives of the legacy NKI API
(Neuron <= 2.26) [v2.26.1 nki.compiler.* pages; deprecations.md §E]. Removed with the ``nki`` namespace: NKI 0.7
places tensors with ``nl.ndarray(..., address=(partition_offset, byte_offset))`` and configures the compiler with
``nki.compiler.CompileConfig``. Stubs written by nki-studio.
""",
    header='''
from collections.abc import Callable
from typing import Any, TypeVar

from nki.language import MemoryRegion

_F = TypeVar("_F", bound=Callable[..., Any])

class _Allocator:
    """A memory's allocators: the result is the ``buffer=`` of an ``nl.ndarray`` with block dimensions."""

    def mod_alloc(
        self,
        *,
        base_addr: int | None = None,
        base_bank: int | None = None,
        base_partition: int = 0,
        num_par_tiles: tuple[int, ...] = (),
        num_free_tiles: tuple[int, ...] = (),
        num_bank_tiles: tuple[int, ...] = (),
    ) -> MemoryRegion:
        """Modular allocation: block ``b`` of the tensor lives in physical tile ``b % n`` of the ``n`` given per
        block dimension (``num_free_tiles=`` on SBUF, ``num_bank_tiles=`` on PSUM), from ``base_addr`` bytes
        [v2.26.1 nki.compiler.sbuf.mod_alloc, nki.compiler.psum.mod_alloc]."""

    def auto_alloc(self) -> MemoryRegion:
        """Let the compiler place the tensor [v2.26.1 nki.compiler.sbuf.auto_alloc]."""

    def alloc(self, func: Callable[..., Any]) -> MemoryRegion:
        """Place the tensor with a function from block indices to addresses [v2.26.1 nki.compiler.sbuf.alloc]."""

sbuf: _Allocator
"""SBUF allocators (``ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,))``)."""
psum: _Allocator
"""PSUM allocators (``ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(2,))``)."""

def skip_middle_end_transformations(func: _F) -> _F:
    """Decorator: compile the kernel without the compiler's middle-end loop transformations
    [v2.26.1 nki.compiler.skip_middle_end_transformations]."""

def enable_stack_allocator(func: _F | None = None, **kwargs: Any) -> _F:
    """Decorator: allocate the kernel's tensors with the stack allocator (inferred from its use in nki-samples)."""

def force_auto_alloc(func: _F | None = None, **kwargs: Any) -> _F:
    """Decorator: let the compiler allocate every tensor, ignoring direct allocations (inferred from its name and
    use in nki-samples)."""

class _LoopDirective:
    """A loop iterator's ``directives=`` value."""

def no_reorder() -> _LoopDirective:
    """Loop directive: keep the loop's instructions in program order
    (``nl.sequential_range(n, directives=ncc.no_reorder())``; inferred from its use in nki-samples). NKI 0.7:
    ``with nl.no_reorder():`` around the loop."""

def multi_buffer(factor: int = 2) -> _LoopDirective:
    """Loop directive: allocate the loop's tensors over ``factor`` buffers (multi-buffered allocation; aws-neuron-sdk
    nki/compiler ``multi_buffer``). NKI 0.7: dropped, a ``range`` loop (the compiler chooses the buffers)."""
''',
)

NKI = LegacyModule(
    "",
    doc="""``neuronxcc.nki``: the legacy NKI API (NKI 0.1, "Beta 1", Neuron 2.20-2.26; deprecated by the ``nki`` namespace
of Neuron 2.27, a compile error inside kernels since NKI 0.4).

Stubs written by nki-studio from the Neuron v2.26.1 API pages (``/en/v2.26.1/nki/api/generated/nki.*.html``; the
v2.26.0 pages are the same API) and its reference notes (deprecations.md §D, §E). Conventional imports:
``from neuronxcc import nki``, ``import neuronxcc.nki.language as nl``, ``import neuronxcc.nki.isa as nisa``.
Every entry point here became ``nki.jit`` (or ``nki.simulate``) in the current API: ``nki-studio migrate``
rewrites them.
""",
    header='''
from collections.abc import Callable
from typing import Any

from . import compiler as compiler
from . import isa as isa
from . import language as language

# The decorators return ``Any``: a legacy kernel is called, launched on a grid (``kernel[2, 2](...)``) and given
# attributes (``benchmark_result``), which a precise type would refuse.

def jit(func: Callable[..., Any] | None = None, mode: str = "auto", **kwargs: Any) -> Any:
    """Compile a kernel for the framework it is called from (PyTorch, JAX) or run it standalone [v2.26.1 nki.jit].

    ``mode=`` chose the runner: ``"auto"`` (from the arguments' type), ``"baremetal"``, ``"benchmark"``,
    ``"simulation"``, ``"jax"``, ``"torchxla"``; ignored since NKI 0.3. ``kernel[a, b](...)`` launches a 2-D SPMD
    grid of programs (``nl.program_id``).
    """

def trace(func: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
    """The framework-tracing decorator (``torch_neuronx.nki_jit`` is the same) [v2.26.1 nki.trace]."""

def baremetal(kernel: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
    """Compile and run a kernel on a NeuronDevice with NumPy arrays in and out, no framework [v2.26.1 nki.baremetal].

    Options: ``save_neff_name=``, ``save_trace_name=`` (an execution trace for the profiler),
    ``additional_compile_opt=``, ``artifacts_dir=``.
    """

def benchmark(kernel: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
    """Compile a kernel, run it ``warmup=`` + ``iters=`` times on a NeuronDevice and keep its latency statistics
    in ``kernel.benchmark_result.nc_latency.get_latency_percentile(p)`` [v2.26.1 nki.benchmark]."""

def profile(func: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
    """Profile a kernel on a NeuronDevice: NEFF and NTFF in ``working_directory=`` (an absolute path), with
    ``save_neff_name=``, ``save_trace_name=``, ``overwrite=``, ``profile_nth=`` [v2.26.1 nki.profile]."""

def simulate_kernel(kernel: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run a kernel (or a launched grid, ``kernel[2, 2]``) on the compiler's CPU simulator with NumPy arrays and
    return its outputs [v2.26.1 nki.simulate_kernel]."""
''',
)

NEURONXCC = LegacyModule(
    "..",
    doc="""``neuronxcc``: the Neuron compiler package, as legacy kernels import NKI from it (``from neuronxcc import nki``).

Only its ``nki`` sub-package is stubbed (``neuronxcc.nki``: the legacy NKI API, Neuron <= 2.26).
""",
    header="""
from . import nki as nki
""",
)

MODULES = (NEURONXCC, NKI, LANGUAGE, ISA, COMPILER)
