"""Legacy value-returning ISA calls in the value interpreter: ``t = nisa.nc_matmul(stationary, moving)``.

In the legacy ``neuronxcc.nki.isa`` API (NKI 0.1) an ISA call has no ``dst``: it returns its result tile,
and its parameters are today's without the leading ``dst`` (isa.md §0.1; v2.26.1 ``nki.isa.nc_matmul`` page:
``nc_matmul(stationary, moving, *, ...)``, stationary and moving SBUF tiles with the same partition size,
``stationary.shape = (128, 126)`` and ``moving.shape = (128, 512)`` give a ``(126, 512)`` PSUM tile, always
float32; v2.26.1 ``nki.isa.activation`` page: ``activation(op, data, *, bias=None, scale=1.0, ..., mask=None,
dtype=None)``). The call is recorded with a ``dst`` standing for that result, so the NKI5xx operand rules and
the partition/capacity rules check legacy calls as they check ``dst=`` calls. The element-wise calls return a
tile of their input's shape (element-wise by definition) with their ``dtype`` argument, else the input's
dtype (inferred where the page leaves it open), in SBUF (inferred: the legacy examples store or reuse the
result from SBUF).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING

from nki_studio.model.api_signatures import ISA_PARAMS, bind_arguments
from nki_studio.model.tensors import ApiCall
from nki_studio.model.values import UNKNOWN, DType, TensorVal, Value

if TYPE_CHECKING:
    from nki_studio.model.evaluator import Evaluator

# value-returning call -> the operand whose shape the result has
_SHAPED_LIKE = {
    "activation": "data",
    "tensor_tensor": "data1",
    "tensor_scalar": "data",
    "scalar_tensor_tensor": "data",
    "tensor_copy": "src",
    "reciprocal": "data",
    "dropout": "data",
}
LEGACY_VALUE_CALLS = frozenset({"nc_matmul", *_SHAPED_LIKE})


NewTensor = Callable[
    ["Evaluator", str, "tuple[Value, ...] | None", "DType | None", "str | None", ast.AST], TensorVal
]


def legacy_result(
    interp: Evaluator,
    name: str,
    args: list[Value],
    kwargs: dict[str, Value],
    node: ast.Call,
    new_tensor: NewTensor,
) -> Value:
    """The result tile of a legacy value-returning ISA call, with the call recorded for the operand rules.
    ``new_tensor`` records the result's allocation (``nki_semantics.new_tensor``, passed in: that module
    dispatches here)."""
    bound = bind_arguments(ISA_PARAMS[name][1:], args, kwargs)
    operands = {k: v for k, v in bound.items() if isinstance(v, Value)}
    if name == "nc_matmul":
        result = new_tensor(interp, "nisa.nc_matmul", _matmul_shape(operands), DType("float32"), "psum", node)
        if result.storage is not None:
            result.storage.is_matmul_dst = True
    else:
        like = operands.get(_SHAPED_LIKE[name])
        if not isinstance(like, TensorVal):
            return UNKNOWN
        dtype = operands.get("dtype")
        result = new_tensor(
            interp,
            f"nisa.{name}",
            like.shape,
            dtype if isinstance(dtype, DType) else like.dtype,
            "sbuf",
            node,
        )
    interp.facts.calls.append(
        ApiCall(
            name,
            "isa",
            interp.span(node),
            interp.module.path,
            {**operands, "dst": result},
            interp.call_chain,
            interp.seq,
        )
    )
    return result


def _matmul_shape(operands: dict[str, Value]) -> tuple[Value, ...] | None:
    """``(M, N)``: the stationary and moving free sizes (2-D operands only)."""
    stationary, moving = operands.get("stationary"), operands.get("moving")
    if not (isinstance(stationary, TensorVal) and isinstance(moving, TensorVal)):
        return None
    if (
        stationary.shape is None
        or moving.shape is None
        or len(stationary.shape) != 2
        or len(moving.shape) != 2
    ):
        return None
    return (stationary.shape[1], moving.shape[1])
