"""The value lattice of the compile-time interpreter: what a kernel expression is known to be.

A value is either ``UNKNOWN`` or something the interpreter computed exactly (a constant, a tuple, a dtype, a
tensor with a possibly partial shape ...). Rules only ever fire on exact values, so anything the interpreter
cannot follow degrades to ``UNKNOWN`` instead of being guessed.

Every constant carries a short derivation (``expr`` plus the names it was computed from) so a diagnostic can
say "256 = TILE*2 (TILE=128)".
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Any

from nki_studio.core.findings import Span


class Value:
    """Base class of all interpreter values."""

    __slots__ = ()

    @property
    def known(self) -> bool:
        """True when the value was computed (not ``UNKNOWN``)."""
        return True


class _Unknown(Value):
    __slots__ = ()

    @property
    def known(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Value = _Unknown()

MAX_SEQ_LEN = 4096  # longest tuple/list/range the interpreter materialises

Bindings = tuple[tuple[str, str], ...]
_MAX_BINDINGS = 4


@dataclass(frozen=True, eq=False)
class Const(Value):
    """A Python scalar (int, float, bool, str, None) with the expression it was computed from."""

    value: int | float | bool | str | None
    expr: str = ""  # source-like derivation, e.g. "TILE*2"; empty for a plain literal
    binds: Bindings = ()  # names the derivation used, with their values

    def explain(self) -> str:
        """``256 = TILE*2 (TILE=128)``, or just ``256`` for a literal."""
        value = repr(self.value) if isinstance(self.value, str) else str(self.value)
        text = value
        if self.expr and self.expr != value:
            text += f" = {self.expr}"
        shown = [f"{k}={v}" for k, v in self.binds if not (k == self.expr and v == value)]
        if shown:
            text += f" ({', '.join(shown[:_MAX_BINDINGS])})"
        return text


def merge_binds(*parts: Bindings) -> Bindings:
    """Union of derivation bindings, first occurrence wins, capped so messages stay short."""
    seen: dict[str, str] = {}
    for part in parts:
        for k, v in part:
            seen.setdefault(k, v)
    return tuple(list(seen.items())[: _MAX_BINDINGS * 2])


def named(value: Value, name: str) -> Value:
    """The value as read through variable ``name``: its derivation becomes ``name`` (with the old one kept)."""
    if isinstance(value, Const) and not isinstance(value.value, str):
        if value.expr == name:
            return value
        how = value.expr if value.expr else str(value.value)
        return Const(value.value, name, merge_binds(((name, how),), value.binds))
    return value


def const_int(value: Value) -> int | None:
    """The exact int (bools excluded) a value holds, else None."""
    if isinstance(value, Const) and isinstance(value.value, int) and not isinstance(value.value, bool):
        return value.value
    return None


def const_num(value: Value) -> int | float | None:
    """The exact int or float a value holds, else None."""
    if (
        isinstance(value, Const)
        and isinstance(value.value, (int, float))
        and not isinstance(value.value, bool)
    ):
        return value.value
    return None


@dataclass(frozen=True, eq=False)
class Seq(Value):
    """A tuple (immutable) or list (mutable, ``exact`` False once it was changed where we lost track)."""

    items: list[Value]
    is_list: bool = False
    exact: bool = True
    created: tuple[int, int] = (0, 0)  # (summarised-loop depth, unknown-branch depth) where it was built

    def as_ints(self) -> tuple[int, ...] | None:
        """All items as exact ints, else None."""
        out = []
        for item in self.items:
            n = const_int(item)
            if n is None:
                return None
            out.append(n)
        return tuple(out)


@dataclass(frozen=True, eq=False)
class DictVal(Value):
    """A dict with string keys (the only kind NKI accepts)."""

    items: dict[str, Value]
    created: tuple[int, int] = (0, 0)  # see Seq.created


@dataclass(frozen=True, eq=False)
class SliceVal(Value):
    """A ``start:stop:step`` slice or ``nl.ds(start, size)``."""

    start: Value
    stop: Value
    step: Value
    size: Value | None = None  # known element count (``nl.ds(start, size)``), else derived from the bounds


@dataclass(frozen=True, eq=False)
class ModuleRef(Value):
    """A module or namespace by qualified name, normalised (``neuronxcc.nki.language`` -> ``nki.language``)."""

    qualname: str


@dataclass(frozen=True, eq=False)
class ApiRef(Value):
    """A function or constant of the NKI API (``nki.language.ndarray``, ``nki.isa.engine.gpsimd`` ...)."""

    qualname: str


# Bits per element of each NKI dtype (language.md §2).
DTYPE_BITS: dict[str, int] = {
    "bool_": 8,
    "bool": 8,
    "int8": 8,
    "int16": 16,
    "int32": 32,
    "uint8": 8,
    "uint16": 16,
    "uint32": 32,
    "float16": 16,
    "bfloat16": 16,
    "tfloat32": 32,
    "float32": 32,
    "float8_e4m3": 8,
    "float8_e4m3fn": 8,
    "float8_e5m2": 8,
    "float8_e8m0fnu": 8,
    "float8_e5m2_x4": 32,
    "float8_e4m3fn_x4": 32,
    "float4_e2m1fn_x4": 16,
    # NumPy / legacy spellings seen in kernels
    "float64": 64,
    "int64": 64,
    "fp32": 32,
    "fp16": 16,
    "bf16": 16,
}
_DTYPE_CANON = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "bool": "bool_"}


@dataclass(frozen=True, eq=False)
class DType(Value):
    """An element type, by its ``nl`` name."""

    name: str

    @property
    def bytes(self) -> float:
        """Bytes per element (a packed fp4 x4 element is 2 bytes)."""
        return DTYPE_BITS.get(self.name, 32) / 8


def make_dtype(name: str) -> DType | None:
    """A DType for a known dtype name (``bfloat16``, ``np.float32`` leaf ...), else None."""
    leaf = name.rsplit(".", 1)[-1]
    if leaf in DTYPE_BITS:
        return DType(_DTYPE_CANON.get(leaf, leaf))
    return None


BUFFERS = {
    "sbuf": "sbuf",
    "psum": "psum",
    "hbm": "private_hbm",
    "private_hbm": "private_hbm",
    "shared_hbm": "shared_hbm",
}
ON_CHIP = ("sbuf", "psum")


@dataclass(frozen=True, eq=False)
class BufferVal(Value):
    """A memory region: ``sbuf``, ``psum``, ``private_hbm`` or ``shared_hbm``."""

    name: str


@dataclass(eq=False)
class Allocation:
    """One tensor storage created by kernel code (``nl.ndarray`` ..., or an ``nl`` op that returns a new tile).

    ``seq`` and ``last_use`` are event numbers of the interpreter's linear trace, used for liveness.
    ``repeat`` is how many instances are live at once because the tensor outlives an iteration of an
    enclosing loop the interpreter did not unroll (a lower bound: 1 when the trip count is unknown).
    """

    api: str
    span: Span
    path: str
    shape: tuple[Value, ...] | None
    dtype: DType | None
    buffer: str | None
    seq: int
    function: str
    call_chain: tuple[tuple[str, Span], ...] = ()  # (path, span) of helper call sites, outermost first
    last_use: int = -1
    loops: tuple[Any, ...] = ()  # tensors.LoopFrame of enclosing loops that were not unrolled
    repeat: int = 1
    branches: tuple[tuple[int, int], ...] = ()  # sides of unknown ifs taken to reach it (see excludes)
    is_matmul_dst: bool = False
    name: str = ""  # variable it was first bound to, for messages
    # Legacy block dims (``nl.ndarray((B, nl.par_dim(P), F))``), stored after the partition dim: (P, B, F).
    # Each block is a tile of its own (deprecations.md §E; legacy nki.language.par_dim page).
    block_dims: int = 0

    def excludes(self, other: Allocation) -> bool:
        """True when the two allocations sit on different sides of one unknown ``if``: never both made."""
        if not self.branches or not other.branches:
            return False
        sides = dict(self.branches)
        return any(sides.get(point, side) != side for point, side in other.branches)

    @property
    def on_chip(self) -> bool:
        """True for SBUF and PSUM tensors."""
        return self.buffer in ON_CHIP

    def shape_ints(self) -> tuple[int, ...] | None:
        """The allocation shape when every dim is known."""
        if self.shape is None:
            return None
        return Seq(list(self.shape)).as_ints()

    def bytes_per_partition(self) -> int | None:
        """Free-dim elements times element size, for an on-chip tensor with known shape and dtype."""
        dims = self.shape_ints()
        if dims is None or self.dtype is None or not dims:
            return None
        # integer arithmetic: a shape of hundreds of dims is a huge exact int, past any float
        return math.prod(dims[1:]) * DTYPE_BITS.get(self.dtype.name, 32) // 8

    def min_bytes_per_partition(self) -> int | None:
        """Exact bytes per partition, or a lower bound of 1 byte per element when only the dtype is unknown
        (no NKI dtype is smaller), for capacity sums that must never over-count."""
        exact = self.bytes_per_partition()
        if exact is not None or self.dtype is not None:
            return exact
        dims = self.shape_ints()
        return math.prod(dims[1:]) if dims else None

    def min_tile_bytes_per_partition(self) -> int | None:
        """:meth:`min_bytes_per_partition` of one tile: one block of a legacy block tensor, else the whole."""
        total = self.min_bytes_per_partition()
        dims = self.shape_ints()
        if total is None or not self.block_dims or dims is None:
            return total
        return total // max(1, math.prod(dims[1 : 1 + self.block_dims]))

    def shape_text(self) -> str:
        """``(128, 512)`` with ``?`` for unknown dims."""
        if self.shape is None:
            return "(?)"
        parts = [str(v.value) if isinstance(v, Const) else "?" for v in self.shape]
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


@dataclass(frozen=True, eq=False)
class TensorVal(Value):
    """A tensor (or a view of one): view shape, dtype and buffer as far as known, and its storage."""

    shape: tuple[Value, ...] | None
    dtype: DType | None
    buffer: str | None
    storage: Allocation | None = None

    def dim(self, i: int) -> Value:
        """Dimension ``i`` of the view, or UNKNOWN."""
        if self.shape is None or not -len(self.shape) <= i < len(self.shape):
            return UNKNOWN
        return self.shape[i]

    def free_elems(self) -> int | None:
        """Elements per partition (product of dims 1..n) when all are known."""
        if self.shape is None or len(self.shape) < 1:
            return None
        n = 1
        for v in self.shape[1:]:
            d = const_int(v)
            if d is None:
                return None
            n *= d
        return n


@dataclass(eq=False)
class FunctionVal(Value):
    """A user function (module-level, nested or imported from a local module) the interpreter can inline."""

    node: ast.FunctionDef | ast.AsyncFunctionDef
    module: Any  # interpreter.ModuleInfo; Any avoids an import cycle
    closure: Any = None  # interpreter.Frame of the enclosing function for nested defs (read at call time)


@dataclass(eq=False)
class ObjectVal(Value):
    """An instance of a user class (NKIObject / dataclass): attributes as far as they were set."""

    cls_name: str
    attrs: dict[str, Value] = field(default_factory=dict)
    created: tuple[int, int] = (0, 0)  # see Seq.created


@dataclass(eq=False)
class ClassVal(Value):
    """A user class defined in kernel modules; calling it builds an ObjectVal from keyword/field arguments."""

    node: ast.ClassDef
    module: Any


def same_value(a: Value, b: Value) -> bool:
    """Whether two values are certainly equal (used to merge branches and loop iterations)."""
    if a is b:
        return True
    if isinstance(a, Const) and isinstance(b, Const):
        return type(a.value) is type(b.value) and a.value == b.value
    if isinstance(a, Seq) and isinstance(b, Seq):
        return (
            not a.is_list
            and not b.is_list
            and len(a.items) == len(b.items)
            and all(same_value(x, y) for x, y in zip(a.items, b.items, strict=False))
        )
    if isinstance(a, DType) and isinstance(b, DType):
        return a.name == b.name
    if isinstance(a, BufferVal) and isinstance(b, BufferVal):
        return a.name == b.name
    if isinstance(a, (ModuleRef, ApiRef)) and type(a) is type(b):
        return a.qualname == b.qualname
    if isinstance(a, TensorVal) and isinstance(b, TensorVal):
        return a.storage is not None and a.storage is b.storage and _same_shape(a.shape, b.shape)
    return False


def _same_shape(a: tuple[Value, ...] | None, b: tuple[Value, ...] | None) -> bool:
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=False))


def join(a: Value, b: Value) -> Value:
    """Least upper bound of two values: equal -> the value, tensors of one storage -> shape join, else UNKNOWN."""
    if same_value(a, b):
        return a
    if isinstance(a, TensorVal) and isinstance(b, TensorVal):
        shape = None
        if a.shape is not None and b.shape is not None and len(a.shape) == len(b.shape):
            shape = tuple(x if same_value(x, y) else UNKNOWN for x, y in zip(a.shape, b.shape, strict=False))
        dtype = (
            a.dtype if a.dtype is not None and b.dtype is not None and a.dtype.name == b.dtype.name else None
        )
        buffer = a.buffer if a.buffer == b.buffer else None
        storage = a.storage if a.storage is b.storage else None
        return TensorVal(shape, dtype, buffer, storage)
    return UNKNOWN


def join_all(values: list[Value]) -> Value:
    """Join of several values (UNKNOWN for none)."""
    if not values:
        return UNKNOWN
    result = values[0]
    for value in values[1:]:
        result = join(result, value)
    return result
