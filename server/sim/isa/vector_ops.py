"""Element-wise Vector Engine instructions (isa.md §3.1-§3.3, §3.8-§3.11, §3.22), several of which may also
run on GpSimd or Scalar: ``tensor_tensor``, ``tensor_scalar``, ``scalar_tensor_tensor``, ``tensor_copy``,
``tensor_copy_predicated``, ``reciprocal``, ``exponential``, ``memset``.

Arithmetic is FP32 (inputs cast to float32, result cast to ``dst.dtype`` with RNE); bitvec operators work
on the stored integer bits (isa.md §0.4).
"""

from __future__ import annotations

import numpy as np
from nki_studio.sim import alu, context, dtypes, untaken
from nki_studio.sim.errors import HardwareLimitError
from nki_studio.sim.isa import _common as c
from nki_studio.sim.isa.enums import NkiInstruction, engine
from nki_studio.sim.isa.enums import reduce_cmd as Cmd
from nki_studio.sim.tensor import NkiTensor

_INT32 = ("int32", "uint32")


@untaken.instruction
def tensor_tensor(
    dst: NkiTensor,
    data1: NkiTensor,
    data2: NkiTensor,
    op: object,
    engine: object = engine.unknown,
    name: str | None = None,
) -> NkiInstruction:
    """``dst = op(data1, data2)`` element-wise, no broadcasting (isa.md §3.1).

    All-int32/uint32 operands default to GpSimd with exact integer arithmetic (Vector if any is in PSUM);
    ``nl.power`` runs on GpSimd; everything else on Vector in FP32.
    """
    opname = "nisa.tensor_tensor"
    d, a, b, p, f = c.two_inputs(opname, dst, ("data1", data1), ("data2", data2))
    opr = c.alu_op(opname, "op", op)
    if opr.arity != 2:
        raise HardwareLimitError(
            f"{opname} op=nl.{opr.name} is unary; use nisa.tensor_scalar or nisa.activation"
        )
    any_psum = any(t.buffer.kind == "psum" for t in (d, a, b))
    ints = all(t.dtype_name in _INT32 for t in (d, a, b))
    default = "gpsimd" if opr.name == "power" or (ints and not any_psum) else "vector"
    allowed = ("gpsimd",) if opr.name == "power" else ("vector", "gpsimd")
    eng = c.engine_name(opname, engine, default, allowed)
    c.no_psum_on_gpsimd(opname, eng, dst=d, data1=a, data2=b)
    if opr.kind == alu.BITVEC:
        for role, t in (("dst", d), ("data1", a), ("data2", b)):
            c.integer(opname, role, t)
    context.issue(opname, eng, reads={"data1": a, "data2": b}, writes={"dst": d}, flops=p * f)
    if opr.kind == alu.BITVEC:
        c.store_raw(d, np.asarray(opr.fn(c.mat(a, raw=True), c.mat(b, raw=True))))
    elif ints and eng == "gpsimd":
        # Exact integer arithmetic on GpSimd (isa.md §0.4); results saturate to dst like every int cast.
        c.store(d, opr.fn(c.mat(a, raw=True).astype(np.int64), c.mat(b, raw=True).astype(np.int64)))
    else:
        with np.errstate(all="ignore"):
            c.store(d, c.apply(opr, c.mat(a), c.mat(b)))
    return c.handle(opname, name)


def _operand(opname: str, role: str, opr: alu.AluOp, value: object, p: int) -> c.Values:
    """Operand of a tensor_scalar stage: ignored for unary operators (must be None or 0), integer bits for
    bitvec operators, else FP32 (a non-float32 tile is accepted with a warning: the docs require FP32)."""
    if opr.arity == 1:
        if value is not None and not (isinstance(value, (int, float)) and value == 0):
            raise HardwareLimitError(
                f"{opname}: {role} must be None or 0 for the unary operator nl.{opr.name}"
            )
        return None
    if value is None:
        raise HardwareLimitError(f"{opname}: {role} is required for nl.{opr.name}")
    if opr.kind == alu.BITVEC:
        return c.int_operand(opname, role, value, p)
    if isinstance(value, NkiTensor) and value.dtype_name != "float32":
        context.warn(f"{opname}: {role} should be float32 for arithmetic operators, got {value.dtype_name}")
    return c.scalar_operand(opname, role, value, p)


@untaken.instruction
def tensor_scalar(
    dst: NkiTensor,
    data: NkiTensor,
    op0: object,
    operand0: object,
    reverse0: bool = False,
    op1: object = None,
    operand1: object = None,
    reverse1: bool = False,
    engine: object = engine.unknown,
    name: str | None = None,
) -> NkiInstruction:
    """``dst = op1(op0(data, operand0), operand1)`` with scalar or ``(P, 1)`` operands (isa.md §3.2)."""
    opname = "nisa.tensor_scalar"
    d = c.tensor(opname, "dst", dst)
    x = c.tensor(opname, "data", data)
    p, f = c.same_shape2d(opname, dst=d, data=x)
    o0 = c.alu_op(opname, "op0", op0)
    if o0.name in ("square", "relu"):
        c.require_version(opname, 4, f"op0=nl.{o0.name}")
    o1 = None
    if op1 is not None:
        o1 = c.alu_op(opname, "op1", op1)
        if o1.kind != o0.kind:
            raise HardwareLimitError(
                f"{opname}: op0 and op1 must both be arithmetic or both bitvec operators"
            )
    elif operand1 is not None:
        raise HardwareLimitError(f"{opname}: operand1 given without op1")
    bitvec = o0.kind == alu.BITVEC
    # engine.unknown on NeuronCore-v2: the compiler runs arithmetic tensor_scalar on the Scalar engine (inferred,
    # no document states the choice: the trn1 AccelOpt NKIBench profiles of adamw, silu and swiglu show their
    # default-engine tensor_scalars as Scalar-engine time, none on Vector); Vector on later generations.
    default = "scalar" if not bitvec and c.nc_version() == 2 else "vector"
    eng = c.engine_name(opname, engine, default, ("vector",) if bitvec else ("vector", "scalar", "gpsimd"))
    c.no_psum_on_gpsimd(opname, eng, dst=d, data=x)
    if (
        eng == "scalar"
        and c.nc_version() == 3
        and (o0.name, o1.name if o1 else None) not in (("multiply", "add"), ("multiply", None), ("add", None))
    ):
        raise HardwareLimitError(
            f"{opname} on the Scalar engine of trn2 supports only (multiply, add), "
            f"(multiply, None) and (add, None)"
        )
    v0 = _operand(opname, "operand0", o0, operand0, p)
    v1 = _operand(opname, "operand1", o1, operand1, p) if o1 is not None else None
    if bitvec:
        for role, t in (("dst", d), ("data", x)):
            c.integer(opname, role, t)
    context.issue(
        opname,
        eng,
        reads={"data": x, "operand0": operand0, "operand1": operand1},
        writes={"dst": d},
        flops=p * f * (2 if o1 else 1),
    )
    if bitvec:
        out = np.asarray(c.apply(o0, c.mat(x, raw=True), v0, reverse0))
        if o1 is not None:
            out = np.asarray(c.apply(o1, out, v1, reverse1))
        c.store_raw(d, out)
        return c.handle(opname, name)
    with np.errstate(all="ignore"):
        out = c.apply(o0, c.mat(x), v0, reverse0)
        if o1 is not None:
            out = c.apply(o1, out, v1, reverse1)
        c.store(d, out)
    return c.handle(opname, name)


@untaken.instruction
def scalar_tensor_tensor(
    dst: NkiTensor,
    data: NkiTensor,
    op0: object,
    operand0: object,
    op1: object,
    operand1: NkiTensor,
    reverse0: bool = False,
    reverse1: bool = False,
    name: str | None = None,
    *,
    dtype: object = None,
) -> NkiInstruction:
    """``dst = op1(op0(data, operand0), operand1)``: scalar/vector operand0, full-tile operand1 (isa.md §3.3).

    ``dtype=``: nki-library passes the output dtype next to ``dst`` (its kernels compile, so the toolchain takes
    it); the result is written in ``dst``'s dtype (destination passing, *inferred*), so a different one warns."""
    opname = "nisa.scalar_tensor_tensor"
    d, x, t1, p, f = c.two_inputs(opname, dst, ("data", data), ("operand1", operand1))
    if dtype is not None and dtypes.to_dtype(dtype) != d.dtype:
        context.warn(
            f"{opname}: dtype={dtypes.dtype_name(dtypes.to_dtype(dtype))} differs from dst's "
            f"{dtypes.dtype_name(d.dtype)}; the result is written as dst's dtype"
        )
    o0 = c.alu_op(opname, "op0", op0)
    o1 = c.alu_op(opname, "op1", op1)
    if alu.BITVEC in (o0.kind, o1.kind):
        raise HardwareLimitError(f"{opname} supports arithmetic operators only")
    v0 = _operand(opname, "operand0", o0, operand0, p)
    context.issue(
        opname,
        "vector",
        reads={"data": x, "operand0": operand0, "operand1": t1},
        writes={"dst": d},
        flops=2 * p * f,
    )
    with np.errstate(all="ignore"):
        c.store(d, c.apply(o1, c.apply(o0, c.mat(x), v0, reverse0), c.mat(t1), reverse1))
    return c.handle(opname, name)


@untaken.instruction
def tensor_copy(
    dst: NkiTensor, src: NkiTensor, engine: object = engine.unknown, name: str | None = None
) -> NkiInstruction:
    """``dst = src``: bit-exact for equal dtypes, else through FP32 (isa.md §3.8)."""
    opname = "nisa.tensor_copy"
    d = c.tensor(opname, "dst", dst)
    s = c.tensor(opname, "src", src)
    c.same_shape2d(opname, dst=d, src=s)
    eng = c.engine_name(opname, engine, "vector", ("vector", "scalar", "gpsimd"))
    if eng == "scalar" and c.nc_version() < 3:
        # The stub both describes and forbids Scalar-engine copies on v2 (README §5.4); we forbid.
        raise HardwareLimitError(
            f"{opname} is not supported on the Scalar engine of NeuronCore-v2; "
            f"use nisa.activation(op=nl.copy)"
        )
    c.no_psum_on_gpsimd(opname, eng, dst=d, src=s)
    context.issue(opname, eng, reads={"src": s}, writes={"dst": d})
    c.store(d, c.mat(s, raw=c.same_storage_dtype(d, s)))
    return c.handle(opname, name)


@untaken.instruction
def tensor_copy_predicated(
    dst: NkiTensor, src: object, predicate: NkiTensor, reverse_pred: bool = False, name: str | None = None
) -> NkiInstruction:
    """``dst = where((predicate != 0) ^ reverse_pred, src, dst)``; no dtype conversion (isa.md §3.9)."""
    opname = "nisa.tensor_copy_predicated"
    d = c.tensor(opname, "dst", dst)
    pr = c.tensor(opname, "predicate", predicate)
    c.dtype_in(opname, "predicate", pr, ("uint8", "uint16", "uint32"))
    operands = {"dst": d, "predicate": pr}
    if isinstance(src, NkiTensor):
        s = c.tensor(opname, "src", src)
        if s.dtype_name != d.dtype_name:
            raise HardwareLimitError(
                f"{opname}: src dtype {s.dtype_name} must equal dst dtype {d.dtype_name}"
            )
        operands["src"] = s
        c.at_most_one_psum(opname, src=s, predicate=pr)
    p, _ = c.same_shape2d(opname, **operands)
    scalar = None if isinstance(src, NkiTensor) else c.scalar_operand(opname, "src", src, p)
    context.issue(opname, "vector", reads={"src": src, "predicate": pr}, writes={"dst": d})
    mask = c.mat(pr, raw=True) != 0
    if reverse_pred:
        mask = ~mask
    current = c.mat(d, raw=True)
    if isinstance(src, NkiTensor):
        value = c.mat(src, raw=True)
    else:
        value = dtypes.cast(np.asarray(scalar), d.dtype, d.storage.precise)
    c.store(d, np.where(mask, value, current))
    return c.handle(opname, name)


# The legacy (NeuronCore-v2) nki.isa.reciprocal left the engine to the compiler and documented Vector's throughput
# as about 8x below Scalar's for large tiles, advising Vector only below 64 elements per partition (Neuron 2.21
# docs, general/nki/api/generated/nki.isa.reciprocal). That the compiler follows the advice is inferred (the trn1
# AccelOpt NKIBench profiles of silu and adamw fit it); later generations keep the Vector engine.
_SCALAR_RECIPROCAL_MIN = 64


@untaken.instruction
def reciprocal(dst: NkiTensor, data: NkiTensor, name: str | None = None) -> NkiInstruction:
    """``dst = 1 / data`` in FP32 on the Vector engine (isa.md §3.10); on NeuronCore-v2, tiles of at least
    ``_SCALAR_RECIPROCAL_MIN`` elements per partition on the Scalar engine (see there)."""
    opname = "nisa.reciprocal"
    d = c.tensor(opname, "dst", dst)
    x = c.tensor(opname, "data", data)
    p, f = c.same_shape2d(opname, dst=d, data=x)
    eng = "scalar" if c.nc_version() == 2 and f >= _SCALAR_RECIPROCAL_MIN else "vector"
    context.issue(opname, eng, reads={"data": x}, writes={"dst": d}, flops=p * f)
    with np.errstate(all="ignore"):
        c.store(d, np.float32(1.0) / c.mat(x))
    return c.handle(opname, name)


_EXP_SRC = frozenset(
    {
        "float8_e4m3",
        "float8_e5m2",
        "float16",
        "bfloat16",
        "float32",
        "int8",
        "int16",
        "int32",
        "uint8",
        "uint16",
        "uint32",
    }
)
_EXP_DST = frozenset(
    {
        "float8_e4m3",
        "float8_e5m2",
        "float16",
        "bfloat16",
        "float32",
        "tfloat32",
        "int8",
        "int16",
        "int32",
        "uint8",
        "uint16",
    }
)


@untaken.instruction
def exponential(
    dst: NkiTensor,
    src: NkiTensor,
    max_value: object = 0.0,
    reduce_res: object = None,
    reduce_cmd: object = Cmd.idle,
    reduce_init: object = 0.0,
    name: str | None = None,
) -> NkiInstruction:
    """``dst = exp(src - max_value)`` with an optional add-reduction into the Vector accumulators (v4,
    isa.md §3.11). The sum uses the FP32 values before the cast to ``dst`` *(inferred)*."""
    opname = "nisa.exponential"
    c.require_version(opname, 4)
    d = c.tensor(opname, "dst", dst)
    s = c.tensor(opname, "src", src)
    p, f = c.same_shape2d(opname, dst=d, src=s)
    c.dtype_in(opname, "src", s, _EXP_SRC)
    c.dtype_in(opname, "dst", d, _EXP_DST)
    cmd = c.command(opname, reduce_cmd, (Cmd.idle, Cmd.reset, Cmd.reduce, Cmd.reset_reduce, Cmd.load_reduce))
    if cmd != Cmd.load_reduce and reduce_init not in (None, 0, 0.0):
        raise HardwareLimitError(f"{opname}: reduce_init is only used with reduce_cmd=load_reduce")
    mx = c.scalar_operand(opname, "max_value", max_value, p)
    init = None if reduce_init is None else c.scalar_operand(opname, "reduce_init", reduce_init, p)
    c.reduce_res_tile(opname, reduce_res, p)
    context.issue(
        opname,
        "vector",
        reads={"src": s, "max_value": max_value},
        writes={"dst": d, "reduce_res": reduce_res},
        flops=2 * p * f,
    )
    with np.errstate(all="ignore"):
        out = np.exp(c.mat(s) - mx)
        c.store(d, out)
    acc = c.accumulators("vector")
    add = alu.alu_op("add")
    assert add is not None
    c.accumulate(acc, p, cmd, add, np.asarray(np.sum(out, axis=1, dtype=np.float32)), init)
    c.reduce_result(opname, reduce_res, p, acc[:p].copy())
    return c.handle(opname, name)


@untaken.instruction
def memset(
    dst: NkiTensor, value: object, engine: object = engine.unknown, name: str | None = None
) -> NkiInstruction:
    """Fill ``dst`` with a constant (isa.md §3.22). A float value into an integer dst is converted (a
    warning unless it is an exact 0); packed x4 dtypes accept only 0. GpSimd cannot write PSUM."""
    opname = "nisa.memset"
    d = c.tensor(opname, "dst", dst)
    c.free_limit(opname, "dst", d)
    eng = c.engine_name(opname, engine, "vector", ("vector", "gpsimd"))
    c.no_psum_on_gpsimd(opname, eng, dst=d)
    dname = d.dtype_name
    if isinstance(value, NkiTensor) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise HardwareLimitError(f"{opname}: value must be a compile-time number, not {type(value).__name__}")
    if dname in dtypes.PACKED_X4 and value != 0:
        raise HardwareLimitError(f"{opname}: a {dname} tensor can only be set to 0")
    if dtypes.is_int(d.dtype) and isinstance(value, (float, np.floating)):
        # isa.md §3.22 says a float into an integer dst is an error since 0.3.0, yet kernels that run on
        # hardware memset uint32 tiles with 0.0: we infer the toolchain only needs the value to survive the
        # conversion. Exact integers are accepted (0.0 silently, others with a warning); anything else is
        # converted as the engines convert floats to integers (round to nearest even, saturate; isa.md §0).
        exact = float(value).is_integer() and np.iinfo(d.dtype).min <= value <= np.iinfo(d.dtype).max
        converted = dtypes.cast(np.asarray(value, np.float64), d.dtype)
        if not exact:
            context.warn(f"{opname}: value {value!r} is not representable in {dname}; stored as {converted}")
        elif value != 0:
            context.warn(f"{opname}: float value {value!r} into {dname} dst (an integer literal is portable)")
        value = int(converted)
    context.issue(opname, eng, writes={"dst": d})
    if dtypes.is_int(d.dtype) or dname in dtypes.PACKED_X4:
        c.store(d, np.asarray(value, np.int64))
    else:
        c.store(d, np.float32(value))
    return c.handle(opname, name)
