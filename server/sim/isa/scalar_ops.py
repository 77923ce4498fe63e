"""Scalar (Activation) Engine instructions (isa.md §2): ``activation``, ``activation_reduce``, ``activate2``.

All compute in FP32; the per-partition reduce registers (``reduce_regs``, isa.md §0.7) are shared by the
three instructions and live per core.
"""

from __future__ import annotations

import numpy as np
from nki_studio.sim import alu, context, untaken
from nki_studio.sim.errors import HardwareLimitError
from nki_studio.sim.isa import _common as c
from nki_studio.sim.isa.enums import NkiInstruction
from nki_studio.sim.isa.enums import reduce_cmd as Cmd
from nki_studio.sim.tensor import NkiTensor

_ALL_CMDS = (Cmd.idle, Cmd.reset, Cmd.reduce, Cmd.reset_reduce)


def _bias(op: str, bias: object, p: int) -> c.Values:
    """``bias``: None, a ``(P, 1)`` tile (free size 1, checked since 2.28) or, from v3, a scalar."""
    if bias is None:
        return None
    if not isinstance(bias, NkiTensor):
        c.require_version(op, 3, "scalar bias")
    return c.scalar_operand(op, "bias", bias, p)


def _pre(x: np.ndarray, scale: c.Values, bias: c.Values) -> np.ndarray:
    """``data * scale + bias`` skipping no-op stages (saves full-tile temporaries)."""
    v = x
    if not (np.ndim(scale) == 0 and scale == 1.0):
        v = v * scale
    if bias is not None:
        v = v + bias
    return v


def _reduce_stage(
    op: str, p: int, cmd: Cmd, opr: alu.AluOp | None, out: np.ndarray, reduce_res: object
) -> None:
    """Fold this instruction's per-partition results into the Scalar registers and read them out.

    AMBIGUOUS (isa.md §2.1): the stub's pseudo-code adds the old register value twice; we follow the prose
    ("reduce on top of existing values"), and reduce the FP32 values before the cast to ``dst``.
    """
    acc = c.accumulators("scalar")
    if cmd != Cmd.idle:
        assert opr is not None
        partial = opr.reduce_fn(out, (1,)) if opr.reduce_fn is not None and cmd != Cmd.reset else None
        c.accumulate(acc, p, cmd, opr, partial if partial is not None else np.zeros(p, c.F32))
    elif reduce_res is not None:
        context.warn(f"{op}: reduce_res with reduce_cmd=idle reads the Scalar registers without reducing")
    c.reduce_result(op, reduce_res, p, acc[:p].copy())


@untaken.instruction
def activation(
    dst: NkiTensor,
    op: object,
    data: NkiTensor,
    bias: object = None,
    scale: object = 1.0,
    reduce_op: object = None,
    reduce_res: object = None,
    reduce_cmd: object = Cmd.idle,
    name: str | None = None,
) -> NkiInstruction:
    """``dst = op(data * scale + bias)`` with optional add-reduction into the Scalar registers (isa.md §2.1)."""
    return _activation(
        "nisa.activation", dst, op, data, bias, scale, reduce_op, reduce_res, reduce_cmd, name, ("add",)
    )


@untaken.instruction
def activation_reduce(
    dst: NkiTensor,
    op: object,
    data: NkiTensor,
    reduce_op: object,
    reduce_res: object,
    bias: object = None,
    scale: object = 1.0,
    name: str | None = None,
) -> NkiInstruction:
    """``activation`` with ``reduce_cmd=reset_reduce`` (isa.md §2.2). v2: only ``nl.add``; later
    generations also maximum/minimum *(inferred from "on v2 reduce_op must be nl.add")*."""
    allowed = ("add",) if c.nc_version() < 3 else ("add", "maximum", "minimum")
    return _activation(
        "nisa.activation_reduce",
        dst,
        op,
        data,
        bias,
        scale,
        reduce_op,
        reduce_res,
        Cmd.reset_reduce,
        name,
        allowed,
    )


def _activation(
    opname: str,
    dst: NkiTensor,
    op: object,
    data: NkiTensor,
    bias: object,
    scale: object,
    reduce_op: object,
    reduce_res: object,
    cmd_arg: object,
    name: str | None,
    reduce_ops: tuple[str, ...],
) -> NkiInstruction:
    d = c.tensor(opname, "dst", dst)
    x = c.tensor(opname, "data", data)
    p, f = c.same_shape2d(opname, dst=d, data=x)
    fn = c.activation(opname, op)
    if alu.op_name(op) == "reciprocal" and bias is not None and c.nc_version() < 3:
        raise HardwareLimitError(f"{opname}(op=nl.reciprocal) does not support a bias on NeuronCore-v2")
    scale_v = c.scalar_operand(opname, "scale", scale, p)
    bias_v = _bias(opname, bias, p)
    cmd = c.command(opname, cmd_arg, _ALL_CMDS)
    opr = None
    if reduce_op is not None or cmd != Cmd.idle:
        if reduce_op is None:
            raise HardwareLimitError(f"{opname}: reduce_cmd={cmd.name} needs reduce_op")
        opr = c.alu_op(opname, "reduce_op", reduce_op, reduce=True, allowed=reduce_ops)
    stages = 1 + (bias_v is not None) + (not (np.ndim(scale_v) == 0 and scale_v == 1.0)) + (opr is not None)
    c.reduce_res_tile(opname, reduce_res, p)
    context.issue(
        opname,
        "scalar",
        reads={"data": x, "bias": bias, "scale": scale},
        writes={"dst": d, "reduce_res": reduce_res},
        flops=p * f * stages,
        function=alu.op_name(op),
    )
    with np.errstate(all="ignore"):
        out = np.asarray(fn(_pre(c.mat(x), scale_v, bias_v), None), c.F32)
        c.store(d, out)  # dst first, then reduce_res: an aliasing reduce_res keeps the reduction (0.6.0 fix)
        _reduce_stage(opname, p, cmd, opr, out, reduce_res)
    return c.handle(opname, name)


_ACT2_PAIRS = {
    ("multiply", "add"),
    ("multiply", "subtract"),
    ("multiply", "bypass"),
    ("add", "bypass"),
    ("subtract", "bypass"),
    ("bypass", "bypass"),
}


@untaken.instruction
def activate2(
    dst: NkiTensor,
    op: object,
    data: NkiTensor,
    imm0: object,
    imm1: object,
    op0: object,
    op1: object,
    relu_param: object = 0.0,
    reverse0: bool = False,
    reverse1: bool = False,
    reduce_op: object = None,
    reduce_res: object = None,
    reduce_cmd: object = Cmd.idle,
    name: str | None = None,
) -> NkiInstruction:
    """Two ALU stages, an activation and an optional reduction (v4, isa.md §2.3)."""
    opname = "nisa.activate2"
    c.require_version(opname, 4)
    d = c.tensor(opname, "dst", dst)
    x = c.tensor(opname, "data", data)
    p, f = c.same_shape2d(opname, dst=d, data=x)
    fn = c.activation(opname, op)
    n0 = "bypass" if alu.is_bypass(op0) else alu.op_name(op0)
    n1 = "bypass" if alu.is_bypass(op1) else alu.op_name(op1)
    if (n0, n1) not in _ACT2_PAIRS:
        raise HardwareLimitError(f"{opname}: (op0, op1) = (nl.{n0}, nl.{n1}) is not a supported pair")
    if (reverse0 and n0 == "bypass") or (reverse1 and n1 == "bypass"):
        raise HardwareLimitError(f"{opname}: reverse0/reverse1 need op0/op1")
    cmd = c.command(opname, reduce_cmd, _ALL_CMDS)
    opr = None
    if reduce_op is not None or cmd != Cmd.idle:
        opr = c.alu_op(
            opname,
            "reduce_op",
            reduce_op,
            reduce=True,
            allowed=("add", "maximum", "minimum", "abs_max", "abs_min"),
        )
    stages = [
        (c.alu_op(opname, f"op{stage}", opn), c.scalar_operand(opname, f"imm{stage}", imm, p), rev)
        for stage, opn, imm, rev in ((0, n0, imm0, reverse0), (1, n1, imm1, reverse1))
        if opn != "bypass"
    ]
    relu = c.scalar_operand(opname, "relu_param", relu_param, p)
    c.reduce_res_tile(opname, reduce_res, p)
    context.issue(
        opname,
        "scalar",
        reads={"data": x, "imm0": imm0, "imm1": imm1},
        writes={"dst": d, "reduce_res": reduce_res},
        flops=p * f * 4,
        function=alu.op_name(op),
    )
    v = c.mat(x)
    with np.errstate(all="ignore"):
        for opr_s, imm_v, rev in stages:
            v = c.apply(opr_s, v, imm_v, rev)
        out = np.asarray(fn(v, relu), c.F32)
        c.store(d, out)
        _reduce_stage(opname, p, cmd, opr, out, reduce_res)
    return c.handle(opname, name)


__all__ = ["activate2", "activation", "activation_reduce"]
