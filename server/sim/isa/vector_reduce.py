"""Vector Engine reductions, scans and statistics (isa.md §3.4-§3.7, §3.12-§3.15): ``tensor_reduce``,
``tensor_tensor_scan``, ``tensor_scalar_reduce``, ``tensor_scalar_cumulative``, ``bn_stats``, ``bn_aggr``,
``select_reduce``, ``range_select``. FP32 math; accumulator registers per core (isa.md §0.7).
"""

from __future__ import annotations

import math

import numpy as np
from nki_studio.sim import alu, checks, context, untaken
from nki_studio.sim.errors import HardwareLimitError
from nki_studio.sim.isa import _common as c
from nki_studio.sim.isa.enums import NkiInstruction
from nki_studio.sim.isa.enums import reduce_cmd as Cmd
from nki_studio.sim.tensor import NkiTensor

F32 = np.float32


def _axes(op: str, axis: object, ndim: int) -> tuple[int, ...]:
    """Reduction axes: trailing contiguous free dims ending at the last dim (isa.md §3.4)."""
    raw = [axis] if isinstance(axis, (int, np.integer)) else list(axis)  # type: ignore[call-overload]
    axes = sorted({int(a) + ndim if int(a) < 0 else int(a) for a in raw})
    if not axes or axes[0] < 1 or axes != list(range(axes[0], ndim)):
        raise HardwareLimitError(
            f"{op}: axis={axis!r} must be the trailing free dims ending at the last dim "
            f"(e.g. {ndim - 1} or {tuple(range(1, ndim))}) of a {ndim}-D tensor"
        )
    return tuple(axes)


@untaken.instruction
def tensor_reduce(
    dst: NkiTensor,
    op: object,
    data: NkiTensor,
    axis: object,
    negate: bool = False,
    keepdims: bool = False,
    name: str | None = None,
) -> NkiInstruction:
    """Reduce ``data`` over trailing free axes with a reduction operator; ``negate`` multiplies by -1."""
    opname = "nisa.tensor_reduce"
    d = c.tensor(opname, "dst", dst)
    x = c.tensor(opname, "data", data)
    p = checks.same_partitions(opname, dst=d, data=x)
    c.free_limit(opname, "data", x)
    opr = c.alu_op(opname, "op", op, reduce=True)
    axes = _axes(opname, axis, x.ndim)
    kept = math.prod(x.shape[1 : axes[0]])
    if checks.free_size(d) != kept:
        raise HardwareLimitError(
            f"{opname} dst must hold {kept} elements per partition (the reduced shape), got {list(d.shape)}"
        )
    if opr.kind == alu.BITVEC:
        c.integer(opname, "data", x)
        c.integer(opname, "dst", d)
        if negate:
            raise HardwareLimitError(f"{opname}: negate applies to arithmetic operators only")
    context.issue(opname, "vector", reads={"data": x}, writes={"dst": d}, flops=x.size)
    if opr.kind == alu.BITVEC:
        c.store_raw(d, np.asarray(opr.reduce(read_nd(x, raw=True), axes)).reshape(p, -1))
        return c.handle(opname, name)
    with np.errstate(all="ignore"):
        out = opr.reduce(read_nd(x), axes)
        if negate:
            out = -out
    c.store(d, np.asarray(out, F32).reshape(p, -1))
    return c.handle(opname, name)


def read_nd(t: NkiTensor, raw: bool = False) -> np.ndarray:
    """The view's values in its own shape."""
    return c.mat(t, raw).reshape(t.shape)


@untaken.instruction
def tensor_tensor_scan(
    dst: NkiTensor,
    data0: NkiTensor,
    data1: NkiTensor,
    initial: object,
    op0: object,
    op1: object,
    reverse0: bool = False,
    reverse1: bool = False,
    name: str | None = None,
) -> NkiInstruction:
    """``r[i] = op1(op0(data0[i], r[i-1]), data1[i])`` along the flattened free dim, ``r[-1] = initial``
    (isa.md §3.5). ``reverse1=False`` puts ``data1`` on the right of ``op1``. The carry stays FP32."""
    opname = "nisa.tensor_tensor_scan"
    d, a, b, p, f = c.two_inputs(opname, dst, ("data0", data0), ("data1", data1))
    o0 = c.alu_op(opname, "op0", op0)
    o1 = c.alu_op(opname, "op1", op1)
    if alu.BITVEC in (o0.kind, o1.kind) or o0.arity == 1 or o1.arity == 1:
        raise HardwareLimitError(f"{opname} supports binary arithmetic operators only")
    init = c.scalar_operand(opname, "initial", initial, p)
    context.issue(
        opname,
        "vector",
        reads={"data0": a, "data1": b, "initial": initial},
        writes={"dst": d},
        flops=2 * p * f,
    )
    x0, x1 = c.mat(a), c.mat(b)
    with np.errstate(all="ignore"):
        if o0.name == "multiply" and o1.name == "add" and bool(np.all(x0 == 1)):
            # Prefix sum (nki-library's cumsum idiom): 1*prev is exact, so the sequential FP32 sums are
            # exactly np.cumsum's left-to-right float32 accumulation.
            steps = np.array(x1, dtype=F32)
            steps[:, :1] += np.broadcast_to(np.asarray(init, F32).reshape(-1, 1), (p, 1))
            out = np.cumsum(steps, axis=1, dtype=F32)
        else:
            out = np.empty((p, f), F32)
            prev = np.broadcast_to(np.asarray(init, F32).reshape(-1), (p,))
            for i in range(f):
                prev = c.apply(o1, c.apply(o0, x0[:, i], prev, reverse0), x1[:, i], reverse1)
                out[:, i] = prev
    c.store(d, out)
    return c.handle(opname, name)


@untaken.instruction
def tensor_scalar_reduce(
    dst: NkiTensor,
    data: NkiTensor,
    op0: object,
    operand0: object,
    reduce_op: object,
    reduce_res: object = None,
    reverse0: bool = False,
    reduce_cmd: object = Cmd.reset_reduce,
    reduce_init: object = None,
    reduce_res_negate: bool = False,
    name: str | None = None,
) -> NkiInstruction:
    """``dst = op0(data, operand0)`` and fold each partition's results into the Vector accumulators
    (isa.md §3.6). The fold uses the FP32 values *(inferred)*; ``reduce_res_negate`` negates only the
    read-out, the registers keep the positive value."""
    opname = "nisa.tensor_scalar_reduce"
    d = c.tensor(opname, "dst", dst)
    x = c.tensor(opname, "data", data)
    p, f = c.same_shape2d(opname, dst=d, data=x)
    o0 = c.alu_op(opname, "op0", op0)
    if o0.kind == alu.BITVEC:
        raise HardwareLimitError(f"{opname}: op0 must be an arithmetic operator")
    if reverse0:
        raise HardwareLimitError(f"{opname}: reverse0 is documented as not supported yet")
    opr = c.alu_op(
        opname, "reduce_op", reduce_op, reduce=True, allowed=("add", "multiply", "maximum", "minimum")
    )
    cmd = c.command(opname, reduce_cmd, (Cmd.reset_reduce, Cmd.reduce, Cmd.load_reduce))
    if (reduce_init is not None) != (cmd == Cmd.load_reduce):
        raise HardwareLimitError(f"{opname}: reduce_init must be given exactly when reduce_cmd=load_reduce")
    v0 = None if o0.arity == 1 else c.scalar_operand(opname, "operand0", operand0, p)
    init = None if reduce_init is None else c.scalar_operand(opname, "reduce_init", reduce_init, p)
    c.reduce_res_tile(opname, reduce_res, p)
    context.issue(
        opname,
        "vector",
        reads={"data": x, "operand0": operand0},
        writes={"dst": d, "reduce_res": reduce_res},
        flops=2 * p * f,
    )
    with np.errstate(all="ignore"):
        t = np.asarray(c.apply(o0, c.mat(x), v0), F32)
        c.store(d, t)
        acc = c.accumulators("vector")
        c.accumulate(acc, p, cmd, opr, opr.reduce(t, (1,)), init)
    out = acc[:p].copy()
    c.reduce_result(opname, reduce_res, p, -out if reduce_res_negate else out)
    return c.handle(opname, name)


_CUMULATIVE_DTYPES = frozenset(
    {
        "bfloat16",
        "float16",
        "float32",
        "float8_e4m3",
        "float8_e5m2",
        "float8_e4m3fn",
        "uint8",
        "uint16",
        "int8",
        "int16",
    }
)
_ACCUMULATE = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum}


@untaken.instruction
def tensor_scalar_cumulative(
    dst: NkiTensor,
    src: NkiTensor,
    op0: object,
    op1: object,
    imm0: object,
    imm1: object = None,
    reduce_cmd: object = Cmd.reset_reduce,
    name: str | None = None,
) -> NkiInstruction:
    """Running reduction per partition: ``reg = op1(op0(src[i], imm0), reg); dst[i] = reg`` (isa.md §3.7).

    The register starts at the identity of ``op1`` (reset_reduce), keeps the Vector accumulator value
    (reduce) or ``imm1`` (load_reduce); the final value stays in the accumulators. Operand order
    ``op1(value, reg)`` follows the stub (matters for subtract).
    """
    opname = "nisa.tensor_scalar_cumulative"
    d = c.tensor(opname, "dst", dst)
    s = c.tensor(opname, "src", src)
    p, f = c.same_shape2d(opname, dst=d, src=s)
    c.dtype_in(opname, "src", s, _CUMULATIVE_DTYPES)
    c.dtype_in(opname, "dst", d, _CUMULATIVE_DTYPES)
    o0 = c.alu_op(opname, "op0", op0)
    if o0.kind == alu.BITVEC:
        raise HardwareLimitError(f"{opname}: op0 must be an arithmetic operator")
    o1 = c.alu_op(opname, "op1", op1, allowed=("add", "subtract", "multiply", "maximum", "minimum"))
    cmd = c.command(opname, reduce_cmd, (Cmd.reset_reduce, Cmd.reduce, Cmd.load_reduce))
    v0 = None if o0.arity == 1 else c.scalar_operand(opname, "imm0", imm0, p)
    if cmd == Cmd.load_reduce:
        if imm1 is None:
            raise HardwareLimitError(f"{opname}: reduce_cmd=load_reduce needs imm1")
        v1 = c.scalar_operand(opname, "imm1", imm1, p)
    context.issue(
        opname, "vector", reads={"src": s, "imm0": imm0, "imm1": imm1}, writes={"dst": d}, flops=2 * p * f
    )
    acc = c.accumulators("vector")
    if cmd == Cmd.reset_reduce:
        start = np.full(p, o1.identity, F32)
    elif cmd == Cmd.load_reduce:
        start = np.broadcast_to(np.asarray(v1, F32).reshape(-1), (p,))
    else:
        start = acc[:p].copy()
    with np.errstate(all="ignore"):
        vals = np.asarray(c.apply(o0, c.mat(s), v0), F32)
        ufunc = _ACCUMULATE.get(o1.name)
        if ufunc is not None:
            steps = np.concatenate([start.reshape(p, 1), vals], axis=1)
            out = ufunc.accumulate(steps, axis=1, dtype=F32)[:, 1:]
        else:  # subtract: reg = v - reg
            out = np.empty((p, f), F32)
            reg = start.astype(F32)
            for i in range(f):
                reg = vals[:, i] - reg
                out[:, i] = reg
    c.store(d, out)
    if f:
        acc[:p] = out[:, -1]
    return c.handle(opname, name)


@untaken.instruction
def bn_stats(dst: NkiTensor, data: NkiTensor, name: str | None = None) -> NkiInstruction:
    """Per partition ``[n_even, mean_even, var_even*n_even, n_odd, mean_odd, var_odd*n_odd]`` over the
    even/odd positions of the flattened free dim, population variance (isa.md §3.12, layout inferred)."""
    opname = "nisa.bn_stats"
    d = c.tensor(opname, "dst", dst)
    x = c.tensor(opname, "data", data)
    p = checks.same_partitions(opname, dst=d, data=x)
    f = checks.free_size(x)
    fmax = c.limits().bn_stats_free_max
    if f > fmax:
        raise HardwareLimitError(
            f"{opname} data has {f} elements per partition; the maximum is {fmax} "
            f"(nl.tile_size.bn_stats_fmax)"
        )
    if checks.free_size(d) != 6:
        raise HardwareLimitError(f"{opname} dst must hold 6 elements per partition, got {list(d.shape)}")
    context.issue(opname, "vector", reads={"data": x}, writes={"dst": d}, flops=3 * p * f)
    v = c.mat(x).astype(np.float64)
    out = np.zeros((p, 6), np.float64)
    for k, part in enumerate((v[:, 0::2], v[:, 1::2])):
        n = part.shape[1]
        if n:
            mean = part.mean(axis=1)
            out[:, 3 * k] = n
            out[:, 3 * k + 1] = mean
            out[:, 3 * k + 2] = ((part - mean[:, None]) ** 2).sum(axis=1)
    c.store(d, out.astype(F32))
    return c.handle(opname, name)


@untaken.instruction
def bn_aggr(dst: NkiTensor, data: NkiTensor, name: str | None = None) -> NkiInstruction:
    """Combine ``(count, mean, var*count)`` triples into ``[mean, variance]`` (isa.md §3.13; exact pooled
    statistics *(inferred)*)."""
    opname = "nisa.bn_aggr"
    d = c.tensor(opname, "dst", dst)
    x = c.tensor(opname, "data", data)
    p = checks.same_partitions(opname, dst=d, data=x)
    f = checks.free_size(x)
    if f % 3:
        raise HardwareLimitError(
            f"{opname} data must hold (count, mean, var*count) triples; {f} elements per "
            f"partition is not a multiple of 3"
        )
    if checks.free_size(d) != 2:
        raise HardwareLimitError(f"{opname} dst must hold 2 elements per partition, got {list(d.shape)}")
    context.issue(opname, "vector", reads={"data": x}, writes={"dst": d}, flops=4 * p * f)
    t = c.mat(x).astype(np.float64).reshape(p, -1, 3)
    n, m, m2 = t[..., 0], t[..., 1], t[..., 2]
    total = n.sum(axis=1)
    with np.errstate(all="ignore"):
        mean = np.where(total > 0, (n * m).sum(axis=1) / total, 0.0)
        var = np.where(total > 0, (m2.sum(axis=1) + (n * (m - mean[:, None]) ** 2).sum(axis=1)) / total, 0.0)
    c.store(d, np.stack([mean, var], axis=1).astype(F32))
    return c.handle(opname, name)


def _max_register(opname: str, p: int, cmd: Cmd, out: np.ndarray, reduce_res: object) -> None:
    """Max-reduction into the Vector accumulators shared by select_reduce and range_select."""
    acc = c.accumulators("vector")
    mx = alu.alu_op("maximum")
    assert mx is not None
    c.accumulate(acc, p, cmd, mx, out.max(axis=1) if out.shape[1] else np.full(p, -np.inf, F32))
    if cmd != Cmd.idle or reduce_res is not None:
        c.reduce_result(opname, reduce_res, p, acc[:p].copy())


@untaken.instruction
def select_reduce(
    dst: NkiTensor,
    predicate: NkiTensor,
    on_true: NkiTensor,
    on_false: object,
    reduce_res: object = None,
    reduce_cmd: object = Cmd.idle,
    reduce_op: object = None,
    reverse_pred: bool = False,
    name: str | None = None,
) -> NkiInstruction:
    """``dst = where((predicate != 0) ^ reverse_pred, on_true, on_false)`` plus an optional max-reduction
    (isa.md §3.14)."""
    opname = "nisa.select_reduce"
    d, pr, t, p, f = c.two_inputs(opname, dst, ("predicate", predicate), ("on_true", on_true))
    c.dtype_in(opname, "predicate", pr, ("int8", "uint8", "int16", "uint16"))
    if t.dtype_name in ("tfloat32", "int32", "uint32"):
        raise HardwareLimitError(f"{opname}: on_true dtype {t.dtype_name} is not supported")
    c.alu_op(opname, "reduce_op", reduce_op if reduce_op is not None else "maximum", allowed=("maximum",))
    cmd = c.command(opname, reduce_cmd, (Cmd.idle, Cmd.reset, Cmd.reduce, Cmd.reset_reduce))
    off = c.scalar_operand(opname, "on_false", on_false, p)
    c.reduce_res_tile(opname, reduce_res, p)
    context.issue(
        opname,
        "vector",
        reads={"predicate": pr, "on_true": t, "on_false": on_false},
        writes={"dst": d, "reduce_res": reduce_res},
        flops=p * f,
    )
    mask = c.mat(pr, raw=True) != 0
    if reverse_pred:
        mask = ~mask
    out = np.where(mask, c.mat(t), np.asarray(off, F32)).astype(F32, copy=False)
    c.store(d, out)
    _max_register(opname, p, cmd, out, reduce_res)
    return c.handle(opname, name)


_FP32_MIN = float(np.finfo(np.float32).min)  # -3.4028234663852886e38, the float32 value as a float64


@untaken.instruction
def range_select(
    dst: NkiTensor,
    on_true_tile: NkiTensor,
    comp_op0: object,
    comp_op1: object,
    bound0: object,
    bound1: object,
    reduce_cmd: object = Cmd.reset_reduce,
    reduce_res: object = None,
    reduce_op: object = None,
    range_start: int = 0,
    on_false_value: float = _FP32_MIN,
    name: str | None = None,
) -> NkiInstruction:
    """Keep elements whose free index (from ``range_start``) satisfies both bound comparisons, else
    ``on_false_value`` (must be FP32_MIN), with a max-reduction (v3+, isa.md §3.15)."""
    opname = "nisa.range_select"
    c.require_version(opname, 3)
    d = c.tensor(opname, "dst", dst)
    t = c.tensor(opname, "on_true_tile", on_true_tile)
    p, f = c.same_shape2d(opname, dst=d, on_true_tile=t)
    cmps = ("equal", "less", "less_equal", "greater", "greater_equal")
    c0 = c.alu_op(opname, "comp_op0", comp_op0, allowed=cmps)
    c1 = c.alu_op(opname, "comp_op1", comp_op1, allowed=cmps)
    c.alu_op(opname, "reduce_op", reduce_op if reduce_op is not None else "maximum", allowed=("maximum",))
    # The hardware holds on_false_value as FP32: compare there, so the float64 literal -3.4028235e38 (a
    # different double that rounds to the same FP32, as kernels write it) is FP32_MIN too.
    if F32(float(on_false_value)) != F32(_FP32_MIN):
        raise HardwareLimitError(
            f"{opname}: on_false_value must be FP32_MIN (-3.4028235e+38), got {on_false_value}"
        )
    cmd = c.command(opname, reduce_cmd, (Cmd.idle, Cmd.reset, Cmd.reduce, Cmd.reset_reduce))
    b0 = c.scalar_operand(opname, "bound0", bound0, p)
    b1 = c.scalar_operand(opname, "bound1", bound1, p)
    c.reduce_res_tile(opname, reduce_res, p)
    context.issue(
        opname,
        "vector",
        reads={"on_true_tile": t, "bound0": bound0, "bound1": bound1},
        writes={"dst": d, "reduce_res": reduce_res},
        flops=3 * p * f,
    )
    idx = (int(range_start) + np.arange(f, dtype=np.int64)).astype(F32)[None, :]
    mask = (c0.fn(idx, b0) != 0) & (c1.fn(idx, b1) != 0)
    out = np.where(mask, c.mat(t), F32(_FP32_MIN)).astype(F32, copy=False)
    c.store(d, out)
    _max_register(opname, p, cmd, out, reduce_res)
    return c.handle(opname, name)
