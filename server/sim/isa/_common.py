"""Helpers shared by the ``nki.isa`` instruction implementations: operand checks (buffers, partitions, free
sizes, dtypes), operand values as ``(P, F)`` float32 matrices, scalar/vector operands, operator lookup,
engine accumulator registers and PSUM "matmul-written" flags.

Every check raises ``HardwareLimitError`` (``nisa.NkiValidationError``), which names the kernel line.
"""

from __future__ import annotations

import math
import weakref
from typing import Any

import numpy as np
from nki_studio.model.targets import TargetLimits
from nki_studio.sim import alu, checks, context, dtypes
from nki_studio.sim.access import read, write
from nki_studio.sim.errors import HardwareLimitError, SimulationError
from nki_studio.sim.isa.enums import NkiInstruction, engine, reduce_cmd
from nki_studio.sim.scalars import NkiScalar, VirtualRegister
from nki_studio.sim.tensor import NkiTensor

F32 = np.float32
ON_CHIP = ("sbuf", "psum")
SBUF = ("sbuf",)
PSUM = ("psum",)
Values = Any  # np.ndarray or a float32 scalar

FLOAT_DTYPES = frozenset(
    {"float8_e4m3", "float8_e4m3fn", "float8_e5m2", "bfloat16", "float16", "tfloat32", "float32"}
)


def nc_version() -> int:
    """NeuronCore generation of the simulated target (2, 3 or 4)."""
    return context.current().options.target.generation.nc_version


def limits() -> TargetLimits:
    """Hardware limits of the simulated target."""
    return context.current().options.target.limits


def require_version(op: str, minimum: int, what: str = "") -> None:
    """``op`` (or its feature ``what``) exists from NeuronCore-v``minimum`` on (isa.md §0.11)."""
    v = nc_version()
    if v < minimum:
        gen = context.current().options.target.generation.value
        feature = f"{op} {what}".strip()
        raise HardwareLimitError(
            f"{feature} needs NeuronCore-v{minimum} or newer; the target is {gen} (v{v})"
        )


_TENSOR_ENGINE_OPS = frozenset({"nisa.nc_matmul", "nisa.nc_matmul_mx"})  # regroup by 32 themselves


def tensor(op: str, role: str, value: object, allowed: tuple[str, ...] = ON_CHIP) -> NkiTensor:
    """``value`` as a tensor in one of the ``allowed`` regions; on-chip operands are partition-checked."""
    t = checks.tensor_arg(op, role, value)
    if t._indirect is not None and op not in _TENSOR_ENGINE_OPS:
        t = t.regrouped(16) or t  # Vector/Scalar/GpSimd read indexes in 16-offset groups (isa.md §0.8)
    checks.buffers(op, role, t, allowed)
    if t.buffer.on_chip:
        checks.partitions(op, role, t)
        if t.ndim < 2:
            raise HardwareLimitError(
                f"{op} {role} must be at least 2-D (partition dim first), got {list(t.shape)}"
            )
    return t


def free_limit(op: str, role: str, t: NkiTensor) -> int:
    """Elements per partition of an element-wise engine operand, within the engine's access limit
    (hardware.md §1: 64K elements on SBUF, 4K on PSUM)."""
    n = checks.free_size(t)
    lim = limits()
    cap = lim.vector_free_max_psum if t.buffer.kind == "psum" else lim.vector_free_max_sbuf
    if n > cap:
        # The limit is stated for dense operands; the docs give none for stride-0 (broadcast) dims, which
        # re-read the same elements. Such an operand is accepted with a warning while the elements it
        # actually touches fit (never stricter than the toolchain; inferred).
        free_dims = zip(t.shape[1:], t.strides[1:], strict=False)
        touched = n if t._index is not None else math.prod(d for d, s in free_dims if s != 0)
        if touched <= cap:
            context.warn(
                f"{op} {role} has {n} elements per partition, above the {cap} of a dense "
                f"{t.buffer.kind.upper()} operand; accepted because its stride-0 (broadcast) dims leave "
                f"{touched} distinct elements (the documented limit is for dense operands)"
            )
            return n
        raise HardwareLimitError(
            f"{op} {role} has {n} elements per partition; the maximum on {t.buffer.kind.upper()} is {cap}"
        )
    return n


def same_shape2d(op: str, **operands: NkiTensor) -> tuple[int, int]:
    """All operands have the same partitions and elements per partition (isa.md §0.2); returns (P, F)."""
    p = checks.same_partitions(op, **operands)
    f = checks.same_free_size(op, **operands)
    for role, t in operands.items():
        free_limit(op, role, t)
    return p, f


def at_most_one_psum(op: str, **operands: NkiTensor | None) -> None:
    """Two-input Vector instructions may read at most one operand from PSUM (isa.md §0.3)."""
    in_psum = [r for r, t in operands.items() if t is not None and t.buffer.kind == "psum"]
    if len(in_psum) > 1:
        raise HardwareLimitError(
            f"{op}: at most one of {', '.join(operands)} may be in PSUM ({', '.join(in_psum)} are)"
        )


def two_inputs(
    op: str, dst: object, first: tuple[str, object], second: tuple[str, object]
) -> tuple[NkiTensor, NkiTensor, NkiTensor, int, int]:
    """Operands of a two-input Vector instruction: on-chip tensors of equal partitions and elements per
    partition, at most one input in PSUM. Returns ``(dst, first, second, P, F)``."""
    d = tensor(op, "dst", dst)
    a = tensor(op, first[0], first[1])
    b = tensor(op, second[0], second[1])
    p, f = same_shape2d(op, **{"dst": d, first[0]: a, second[0]: b})
    at_most_one_psum(op, **{first[0]: a, second[0]: b})
    return d, a, b, p, f


def dtype_in(op: str, role: str, t: NkiTensor, allowed: frozenset[str] | tuple[str, ...]) -> str:
    """The operand's dtype name, which must be in ``allowed``."""
    name = t.dtype_name
    if name not in allowed:
        raise HardwareLimitError(
            f"{op} {role} dtype {name} is not supported; expected one of {', '.join(sorted(allowed))}"
        )
    return name


def integer(op: str, role: str, t: NkiTensor) -> None:
    """Bitvec operators work on integer dtypes only (isa.md §0.4)."""
    if not dtypes.is_int(t.dtype):
        raise HardwareLimitError(
            f"{op} {role} must have an integer dtype for a bitvec operator, not {t.dtype_name}"
        )


def mat(t: NkiTensor, raw: bool = False) -> np.ndarray:
    """The view's values as a ``(P, F)`` matrix: float32, or stored values with ``raw``."""
    v = read(t, raw=raw)
    p = t.shape[0] if t.shape else 1
    return v.reshape(p, -1)


def store(dst: NkiTensor, values: Values, accumulate: bool = False, where: np.ndarray | None = None) -> None:
    """Write instruction results into ``dst`` (only where ``where`` is set, when given); a non-matmul write
    to PSUM clears its matmul flags."""
    write(dst, values, accumulate=accumulate, where=where)
    if dst.buffer.kind == "psum":
        flags = psum_flags(dst, create=False)
        if flags is not None:
            flags[...] = False


def store_raw(dst: NkiTensor, values: np.ndarray) -> None:
    """Write raw bits (bitvec results, bit-exact copies): values already in ``dst``'s storage dtype keep
    their bits; other integer values wrap to the destination width like a register move."""
    store_dt = dst._data.dtype
    if values.dtype != store_dt and dtypes.is_int(store_dt) and values.dtype.kind in "iu":
        values = values.astype(store_dt)
    store(dst, values)


def same_storage_dtype(a: NkiTensor, b: NkiTensor) -> bool:
    """True when a raw copy from ``b`` to ``a`` is bit-exact (same NKI dtype and same storage)."""
    return a.dtype_name == b.dtype_name and a._data.dtype == b._data.dtype


# ----------------------------------------------------------------- scalar / vector operands


def scalar_operand(op: str, role: str, value: object, p: int, *, allow_tensor: bool = True) -> Values:
    """A "scalar" operand (isa.md §0.2): a Python/NumPy number, a register/NkiScalar, or a ``(P, 1)`` tile
    (per-partition value broadcast along the free dims). Returns a float32 scalar or a ``(P, 1)`` array."""
    if isinstance(value, NkiTensor):
        if not allow_tensor:
            raise HardwareLimitError(f"{op} {role} must be a compile-time scalar, not a tensor")
        tensor(op, role, value)
        if checks.free_size(value) != 1 or value.shape[0] not in (p, 1):
            raise HardwareLimitError(
                f"{op} {role} must be a scalar or a ({p}, 1) tile, got {list(value.shape)}"
            )
        return mat(value)
    if isinstance(value, (VirtualRegister, NkiScalar)):
        return F32(value.sim_value())
    if isinstance(value, (bool, int, float, np.integer, np.floating)):
        return F32(value)
    raise HardwareLimitError(f"{op} {role} must be a number or a (P, 1) tile, not {type(value).__name__}")


def int_operand(op: str, role: str, value: object, p: int) -> Values:
    """A scalar operand of a bitvec operator: stored integer bits (scalar or ``(P, 1)``)."""
    if isinstance(value, NkiTensor):
        tensor(op, role, value)
        integer(op, role, value)
        if checks.free_size(value) != 1 or value.shape[0] not in (p, 1):
            raise HardwareLimitError(
                f"{op} {role} must be a scalar or a ({p}, 1) tile, got {list(value.shape)}"
            )
        return mat(value, raw=True)
    if isinstance(value, (VirtualRegister, NkiScalar)):
        return np.int64(value.sim_value())
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return np.int64(value)
    raise HardwareLimitError(
        f"{op} {role} of a bitvec operator must be an integer or an integer (P, 1) tile, not {value!r}"
    )


# ----------------------------------------------------------------- operators


def alu_op(
    op: str, role: str, value: object, *, reduce: bool = False, allowed: tuple[str, ...] = ()
) -> alu.AluOp:
    """Resolve an ALU operator argument (``nl.add`` ...), checking reducibility, an allow-list and the
    generation it needs."""
    resolved = alu.alu_op(value)
    if resolved is None:
        raise HardwareLimitError(f"{op} {role}={_op_repr(value)} is not an ALU operator")
    if allowed and resolved.name not in allowed:
        raise HardwareLimitError(
            f"{op} {role}={_op_repr(value)} is not supported here; expected one of "
            f"{', '.join('nl.' + a for a in allowed)}"
        )
    if reduce and not resolved.reducible:
        raise HardwareLimitError(f"{op} {role}={_op_repr(value)} cannot be used as a reduction operator")
    if resolved.min_nc_version > nc_version():
        require_version(op, resolved.min_nc_version, f"{role}=nl.{resolved.name}")
    return resolved


def activation(op: str, value: object) -> alu.Activation:
    """Resolve an activation function argument (isa.md §0.6)."""
    fn = alu.activation_fn(value)
    if fn is None:
        raise HardwareLimitError(f"{op} op={_op_repr(value)} is not an activation function")
    return fn


def _op_repr(value: object) -> str:
    name = alu.op_name(value)
    return f"nl.{name}" if name else repr(value)


def apply(opr: alu.AluOp, x: Values, y: Values, reverse: bool = False) -> Values:
    """``opr(x, y)`` (or ``opr(y, x)`` when ``reverse``); unary operators ignore ``y``.

    When ``x`` is a float32 array this instruction owns (a converted copy, never a tensor's storage:
    ``read`` hands out storage views read-only), ufunc results are computed in place, which saves a
    full-tile allocation per stage."""
    fn = opr.fn
    in_place = (
        isinstance(fn, np.ufunc)
        and isinstance(x, np.ndarray)
        and x.flags.writeable
        and x.dtype == F32
        and np.result_type(x, y) == F32
        and np.broadcast_shapes(np.shape(x), np.shape(y)) == x.shape
    )
    if opr.arity == 1:
        return fn(x, out=x) if in_place else fn(x)
    if in_place:
        return fn(y, x, out=x) if reverse else fn(x, y, out=x)
    return fn(y, x) if reverse else fn(x, y)


# ----------------------------------------------------------------- engines

_ENGINE_NAMES = {
    engine.tensor: "tensor",
    engine.vector: "vector",
    engine.scalar: "scalar",
    engine.gpsimd: "gpsimd",
    engine.dma: "dma",
    engine.sync: "sync",
}


def engine_name(op: str, value: Any, default: str, allowed: tuple[str, ...]) -> str:
    """The engine an instruction runs on: the requested one (which must be allowed) or ``default``."""
    if value is None or value == engine.unknown:
        return default
    try:
        name = _ENGINE_NAMES[engine(value)]
    except (ValueError, KeyError, TypeError):
        raise HardwareLimitError(f"{op} engine={value!r} is not an nisa.engine member") from None
    if name not in allowed:
        raise HardwareLimitError(f"{op} cannot run on the {name} engine; allowed: {', '.join(allowed)}")
    return name


def handle(op: str, name: str | None) -> NkiInstruction:
    """The instruction handle returned to the kernel."""
    return NkiInstruction(op, name)


def no_psum_on_gpsimd(op: str, eng: str, **operands: NkiTensor | None) -> None:
    """GpSimd cannot access PSUM (isa.md §0.3)."""
    if eng != "gpsimd":
        return
    for role, t in operands.items():
        if t is not None and t.buffer.kind == "psum":
            raise HardwareLimitError(f"{op} on the GpSimd engine cannot access PSUM ({role} is in PSUM)")


# ----------------------------------------------------------------- accumulator registers (isa.md §0.7)


def accumulators(eng: str) -> np.ndarray:
    """The per-partition FP32 accumulator registers of ``eng`` ("scalar" or "vector") on this core.

    Initial content is NaN: hardware registers start with whatever was there, and NaN makes a kernel that
    accumulates without a reset visible, like the memory sentinels *(implementation choice)*.
    """
    regs = context.current_core().registers
    key = f"{eng}.accumulators"
    acc = regs.get(key)
    if acc is None:
        acc = np.full(limits().partitions, np.nan, F32)
        regs[key] = acc
    return acc


def command(op: str, value: Any, allowed: tuple[reduce_cmd, ...]) -> reduce_cmd:
    """A ``reduce_cmd`` argument, checked against the commands the instruction supports."""
    try:
        cmd = reduce_cmd(value)
    except (ValueError, TypeError):
        raise HardwareLimitError(f"{op} reduce_cmd={value!r} is not an nisa.reduce_cmd member") from None
    if cmd not in allowed:
        raise HardwareLimitError(
            f"{op} does not support reduce_cmd={cmd.name}; expected one of "
            f"{', '.join(c.name for c in allowed)}"
        )
    return cmd


def accumulate(
    acc: np.ndarray, p: int, cmd: reduce_cmd, opr: alu.AluOp, partial: np.ndarray, init: Values = None
) -> None:
    """Apply a register command to ``acc[:p]`` with this instruction's per-partition ``partial`` results.

    reset: identity only; reset_reduce: identity then fold; reduce: fold onto the current value;
    load_reduce: ``init`` then fold; idle: untouched.
    """
    if cmd == reduce_cmd.idle:
        return
    if cmd in (reduce_cmd.reset, reduce_cmd.reset_reduce):
        acc[:p] = F32(opr.identity if opr.identity is not None else 0.0)
    elif cmd == reduce_cmd.load_reduce:
        if init is None:
            raise SimulationError("load_reduce needs an initial value (reduce_init / imm1)")
        acc[:p] = np.broadcast_to(np.asarray(init, F32).reshape(-1), (p,))
    if cmd in (reduce_cmd.reduce, reduce_cmd.reset_reduce, reduce_cmd.load_reduce):
        acc[:p] = opr.fn(acc[:p], np.asarray(partial, F32).reshape(p))


def reduce_res_tile(op: str, reduce_res: object, p: int) -> NkiTensor | None:
    """The ``(P, 1)`` ``reduce_res`` tile, checked, or None; instructions call it before ``issue`` too, since
    it is a check the compiler makes (an untaken ``nl.if_else`` branch stops at ``issue``)."""
    if reduce_res is None:
        return None
    t = tensor(op, "reduce_res", reduce_res)
    if t.shape[0] != p or checks.free_size(t) != 1:
        raise HardwareLimitError(f"{op} reduce_res must be a ({p}, 1) tile, got {list(t.shape)}")
    return t


def reduce_result(op: str, reduce_res: object, p: int, values: np.ndarray) -> None:
    """Write per-partition register values into the ``(P, 1)`` ``reduce_res`` tile when one is given."""
    t = reduce_res_tile(op, reduce_res, p)
    if t is not None:
        store(t, values.reshape(p, 1))


# ----------------------------------------------------------------- PSUM matmul flags (isa.md §1.1)

_FLAG_KEY = "psum.matmul_flags"


def psum_flags(t: NkiTensor, create: bool = True) -> np.ndarray | None:
    """Per-element "written by a matmul" flags of a PSUM view (a writable view into per-storage flags)."""
    regs = context.current_core().registers
    table: weakref.WeakKeyDictionary[Any, np.ndarray] | None = regs.get(_FLAG_KEY)
    if table is None:
        if not create:
            return None
        table = weakref.WeakKeyDictionary()
        regs[_FLAG_KEY] = table
    st = t.storage
    if t._data is not st.data:
        return (
            None  # a reinterpreted (.view(dtype)) PSUM view is not tracked: treated as never matmul-written
        )
    flags = table.get(st)
    if flags is None:
        if not create:
            return None
        flags = np.zeros(st.data.size, np.bool_)
        table[st] = flags
    if t._index is not None:
        return _IndexedFlags(flags, t._index)  # type: ignore[return-value]
    if t.size == 0:
        return np.zeros(t.shape, np.bool_)
    return np.ndarray(t.shape, np.bool_, buffer=flags, offset=t.offset, strides=t.strides)


class _IndexedFlags:
    """Flag access through a gathered (indirect) PSUM view."""

    def __init__(self, flags: np.ndarray, index: np.ndarray) -> None:
        self.flags = flags
        self.index = index

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self.flags[self.index]

    def __setitem__(self, key: object, value: object) -> None:
        self.flags[self.index] = value
