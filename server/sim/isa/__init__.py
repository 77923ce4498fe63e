"""``nki.isa`` for the embedded simulator: every public name of NKI 0.6/0.7's ``nki.isa`` (isa.md).

Instructions live in one module per engine (isa.md is organised the same way). Names that NKI has but the
simulator does not implement are present too and raise ``NotImplementedInSimulator`` naming the kernel
line, so a kernel never gets a silent wrong result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nki_studio.sim.errors import HardwareLimitError as NkiValidationError
from nki_studio.sim.errors import NotImplementedInSimulator
from nki_studio.sim.isa.enums import (
    NkiInstruction,
    dge_mode,
    dma_engine,
    engine,
    gpsimd_engine,
    matmul_perf_mode,
    nc_version,
    oob_mode,
    reduce_cmd,
    scalar_engine,
    tensor_engine,
    unknown_engine,
    vector_engine,
)
from nki_studio.sim.isa.scalar_engine import activate2, activation, activation_reduce
from nki_studio.sim.isa.tensor_engine import nc_matmul, nc_matmul_mx, nc_transpose
from nki_studio.sim.isa.vector_engine import (
    exponential,
    memset,
    reciprocal,
    scalar_tensor_tensor,
    tensor_copy,
    tensor_copy_predicated,
    tensor_scalar,
    tensor_tensor,
)
from nki_studio.sim.scalars import NkiScalar, VirtualRegister


def _missing(api: str) -> Callable[..., Any]:
    def instruction(*args: object, **kwargs: object) -> None:
        raise NotImplementedInSimulator(f"nisa.{api}")

    instruction.__name__ = api
    instruction.__qualname__ = api
    instruction.__doc__ = f"``nisa.{api}``: not implemented in the embedded simulator (raises)."
    return instruction


__all__ = [
    "NkiInstruction", "NkiScalar", "NkiValidationError", "VirtualRegister", "activate2", "activation",
    "activation_reduce", "dge_mode", "dma_engine", "engine", "exponential", "gpsimd_engine", "matmul_perf_mode",
    "memset", "nc_matmul", "nc_matmul_mx", "nc_transpose", "nc_version", "oob_mode", "reciprocal", "reduce_cmd",
    "scalar_engine", "scalar_tensor_tensor", "tensor_copy", "tensor_copy_predicated", "tensor_engine",
    "tensor_scalar", "tensor_tensor", "unknown_engine", "vector_engine",
]
