"""Shared machinery of the ``nl`` helpers: operand checks, dtype promotion, result tiles, issuing.

The ``nl`` helpers are convenience wrappers the compiler lowers to ISA instructions (language.md intro);
their element-wise maths comes from the ALU/activation tables in ``nki_studio.sim.alu``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from nki_studio.sim import alu, context, dtypes, untaken
from nki_studio.sim.access import read, write
from nki_studio.sim.errors import HardwareLimitError, SimulationError
from nki_studio.sim.memory import MemoryRegion
from nki_studio.sim.tensor import NkiTensor, allocate

# (float16, bfloat16) -> float32 etc.: the legacy promotion table (language.md §2 [OLD]).
_SPECIAL = {
    frozenset({"float16", "bfloat16"}): "float32",
    frozenset({"float8_e4m3", "float8_e5m2"}): "bfloat16",
    frozenset({"float8_e4m3fn", "float8_e5m2"}): "bfloat16",
    frozenset({"int8", "uint8"}): "int16",
    frozenset({"int8", "uint16"}): "int32",
    frozenset({"int16", "uint16"}): "int32",
    frozenset({"int32", "uint32"}): "float32",
}


def promote(a: np.dtype[Any], b: np.dtype[Any]) -> np.dtype[Any]:
    """Result dtype of a binary op on two tiles (language.md §2 type promotion)."""
    na, nb = dtypes.dtype_name(a), dtypes.dtype_name(b)
    if na == nb:
        return a
    special = _SPECIAL.get(frozenset({na, nb}))
    if special:
        return dtypes.NKI_DTYPES[special]
    fa, fb = dtypes.is_float(a), dtypes.is_float(b)
    if fa != fb:
        return a if fa else b
    if "tfloat32" in (na, nb) and "float32" in (na, nb):
        return dtypes.FLOAT32
    return a if a.itemsize >= b.itemsize else b


def tile_arg(name: str, value: object) -> NkiTensor:
    """An on-chip tile operand of an ``nl`` helper."""
    if not isinstance(value, NkiTensor):
        raise SimulationError(f"nl.{name}: expected a tile (NkiTensor), got {type(value).__name__}")
    if not value.buffer.on_chip:
        raise HardwareLimitError(
            f"nl.{name}: operand must be on SBUF or PSUM, not {value.buffer.value} "
            f"(load it with nl.load or nisa.dma_copy first)"
        )
    return value


def value_of(name: str, x: object) -> np.ndarray | float:
    """float32 values of a tile, or a Python scalar unchanged."""
    if isinstance(x, NkiTensor):
        return read(tile_arg(name, x))
    if isinstance(x, (int, float, np.number)) and not isinstance(x, bool):
        return np.float32(x)
    if isinstance(x, bool):
        return np.float32(int(x))
    raise SimulationError(f"nl.{name}: expected a tile or a number, got {type(x).__name__}")


def result_dtype(name: str, operands: Sequence[object], dtype: object) -> np.dtype[Any]:
    """``dtype`` if given, else the promoted dtype of the tile operands."""
    if dtype is not None:
        return dtypes.to_dtype(dtype)
    tiles = [x for x in operands if isinstance(x, NkiTensor)]
    if not tiles:
        raise SimulationError(f"nl.{name}: at least one operand must be a tile")
    out = tiles[0].dtype
    for t in tiles[1:]:
        out = promote(out, t.dtype)
    return out


def broadcast_shape(name: str, operands: Sequence[object]) -> tuple[int, ...]:
    """Result shape: equal shapes, or NumPy broadcasting of (P, 1) / (1, F) tiles (lenient, documented)."""
    shapes = [x.shape for x in operands if isinstance(x, NkiTensor)]
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise HardwareLimitError(
            f"nl.{name}: operand shapes {[list(s) for s in shapes]} do not match"
        ) from None


def new_tile(
    shape: tuple[int, ...], dtype: np.dtype[Any], buffer: MemoryRegion = MemoryRegion.sbuf
) -> NkiTensor:
    """A fresh result tile."""
    return allocate(shape, dtype, buffer)


def _free_size(x: object) -> int:
    return int(np.prod(x.shape[1:])) if isinstance(x, NkiTensor) else 1


def compiler_engine(name: str, engine: str, operands: Sequence[object]) -> str:
    """The engine an element-wise ``nl`` helper runs on: ``engine``, except on NeuronCore-v2, where the compiler
    puts arithmetic with at most one operand of more than one element per partition (a copy, a unary function, a
    tile with a number or a per-partition column: what ``nisa.activation``/``tensor_scalar`` can do) on Scalar.

    Inferred, as the trn1 choice for default-engine ``tensor_scalar`` (``isa.vector_ops.tensor_scalar``): no page
    states it; the trn1 AccelOpt NKIBench profiles (``profile_results.csv`` Scalar/Vector active times) of
    add_rmsnorm_matmul and matmul_add_rmsnorm measure more Scalar than Vector time (275/181 and 448/331 us) where
    a Vector-only pricing of their ``nl.copy``/``nl.square``/tile-times-column ``nl.multiply`` gives Scalar 0, and lora's Scalar time (1,039 us) comes from its ``nl.copy``s alone. Two full tiles stay on
    Vector (the Scalar engine reads one tile per instruction); bitwise operators stay on Vector."""
    if engine != "vector" or context.current().options.target.generation.nc_version != 2:
        return engine
    op = alu.alu_op(name)
    if op is not None and op.kind == alu.BITVEC:
        return engine
    return "scalar" if sum(_free_size(x) > 1 for x in operands) <= 1 else engine


@untaken.tile_instruction
def elementwise(
    name: str,
    engine: str,
    fn: Callable[..., Any],
    operands: Sequence[object],
    dtype: object,
    *,
    raw: bool = False,
) -> NkiTensor:
    """Apply ``fn`` to the operands' values and return a new SBUF tile (one instruction). On the Scalar engine
    the instruction is an activation of the function ``name`` (its table, for the estimate)."""
    out_dtype = result_dtype(name, operands, dtype)
    shape = broadcast_shape(name, operands)
    out = new_tile(shape, out_dtype)
    eng = compiler_engine(name, engine, operands)
    context.issue(
        f"nl.{name}",
        eng,
        reads={f"x{i}": x for i, x in enumerate(operands)},
        writes={"dst": out},
        flops=out.size,
        # An ALU operator on Scalar is priced like tensor_scalar there: no activation table (inferred).
        function=name if eng == "scalar" and alu.activation_fn(name) is not None else "",
    )
    if raw:
        vals = [read(tile_arg(name, x), raw=True) if isinstance(x, NkiTensor) else x for x in operands]
    else:
        vals = [value_of(name, x) for x in operands]
    write(out, fn(*vals))
    return out


def normalise_axis(name: str, t: NkiTensor, axis: object, trailing: bool = True) -> tuple[int, ...]:
    """Reduction axes: free dims only, trailing and contiguous (language.md §9); any free dims when not
    ``trailing`` (the legacy ``nl`` reductions: ``reductions.any_free_axes``)."""
    axes = (axis,) if isinstance(axis, int) else tuple(int(a) for a in axis)  # type: ignore[attr-defined]
    nd = len(t.shape)
    norm = tuple(sorted(a + nd if a < 0 else a for a in axes))
    if not norm or 0 in norm or norm[-1] >= nd:
        raise HardwareLimitError(
            f"nl.{name}: axis {axis} must name free dims (1..{nd - 1}) of shape {list(t.shape)}"
        )
    if trailing and norm != tuple(range(norm[0], nd)):
        raise HardwareLimitError(
            f"nl.{name}: axis {list(norm)} must be the trailing free dims of shape {list(t.shape)}"
        )
    return norm


def reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> tuple[int, ...]:
    """Shape after reducing ``axes``; on-chip results keep at least 2 dims (last reduced dim kept as 1)."""
    if keepdims:
        return tuple(1 if d in axes else n for d, n in enumerate(shape))
    kept = tuple(n for d, n in enumerate(shape) if d not in axes)
    return kept if len(kept) >= 2 else (*kept, 1)
