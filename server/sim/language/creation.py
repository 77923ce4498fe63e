"""Creation operations (language.md §6): ndarray, zeros, ones, full, *_like, rand, shared constants."""

from __future__ import annotations

import os

import numpy as np
from nki_studio.model import toolchain_rejections as rejects
from nki_studio.sim import context, dtypes, untaken
from nki_studio.sim.access import read, write
from nki_studio.sim.errors import HardwareLimitError, SimulationError
from nki_studio.sim.memory import MemoryRegion
from nki_studio.sim.rejections import toolchain_rejects
from nki_studio.sim.tensor import NkiTensor, allocate


def _buffer(buffer: object) -> MemoryRegion:
    if isinstance(buffer, MemoryRegion):
        return buffer
    if isinstance(buffer, str):
        toolchain_rejects(rejects.STRING_BUFFER, f"buffer={buffer!r}", f"use nl.{buffer}")
        # Before NKI 0.3 the names were accepted (deprecations.md §B); "hbm" is private_hbm's other name.
        region = MemoryRegion.__members__.get("private_hbm" if buffer == "hbm" else buffer)
        if region is not None:
            return region
    raise SimulationError(
        f"buffer must be nl.sbuf, nl.psum, nl.hbm, nl.private_hbm or nl.shared_hbm, not {buffer!r}"
    )


def _check_address(buffer: MemoryRegion, address: object) -> None:
    if address is None:
        return
    if not isinstance(address, (tuple, list)) or len(address) != 2:
        raise SimulationError(f"address must be (partition_offset, free_offset_bytes), not {address!r}")
    free_offset = address[1]
    if buffer is MemoryRegion.psum and int(free_offset) % 2048:
        raise HardwareLimitError(f"PSUM address {address!r} must start at a 2 KiB bank boundary")


def ndarray(
    shape: object, dtype: object, buffer: object = MemoryRegion.sbuf, name: str = "", address: object = None
) -> NkiTensor:
    """Allocate an uninitialised tensor (NaN / 4 sentinels, simulator.md §4)."""
    region = _buffer(buffer)
    _check_address(region, address)
    placed = (
        (int(address[0]), int(address[1])) if isinstance(address, (tuple, list)) and region.on_chip else None
    )
    return allocate(shape, dtype, region, name, address=placed)


def zeros(shape: object, dtype: object, buffer: object = MemoryRegion.sbuf, name: str = "") -> NkiTensor:
    """A tensor filled with 0."""
    return allocate(shape, dtype, _buffer(buffer), name, fill=0)


def ones(shape: object, dtype: object, buffer: object = MemoryRegion.sbuf, name: str = "") -> NkiTensor:
    """A tensor filled with 1."""
    return allocate(shape, dtype, _buffer(buffer), name, fill=1)


def full(
    shape: object, fill_value: object, dtype: object, buffer: object = MemoryRegion.sbuf, name: str = ""
) -> NkiTensor:
    """A tensor filled with ``fill_value``."""
    return allocate(shape, dtype, _buffer(buffer), name, fill=float(fill_value))  # type: ignore[arg-type]


def zeros_like(x: NkiTensor, dtype: object = None, buffer: object = None, name: str = "") -> NkiTensor:
    """Zeros with ``x``'s shape (dtype defaults to ``x.dtype``, buffer to SBUF)."""
    return zeros(
        x.shape, x.dtype if dtype is None else dtype, MemoryRegion.sbuf if buffer is None else buffer, name
    )


def _rng() -> np.random.Generator:
    core = context.current_core()
    gen = core.registers.get("nl.rng")
    if gen is None:
        gen = np.random.default_rng(core.core_id)
        core.registers["nl.rng"] = gen
    return gen


@untaken.tile_instruction
def rand(shape: object, dtype: object, buffer: object = MemoryRegion.sbuf, name: str = "") -> NkiTensor:
    """Uniform [0, 1) values. Deterministic NumPy PCG64 stream per core (not the hardware generator)."""
    out = allocate(shape, dtype, _buffer(buffer), name)
    context.issue("nl.rand", "vector", writes={"dst": out})
    write(out, _rng().random(out.shape, dtype=np.float32))
    return out


@untaken.effect_instruction
def random_seed(seed: NkiTensor) -> None:
    """Seed ``nl.rand``/``nl.dropout`` from a (1, 1) on-chip tensor (a Python int is rejected)."""
    if not isinstance(seed, NkiTensor) or not seed.buffer.on_chip or seed.size != 1:
        raise SimulationError("nl.random_seed: seed must be a (1, 1) tensor on SBUF/PSUM, not a Python value")
    context.issue("nl.random_seed", "vector", reads={"seed": seed})
    context.current_core().registers["nl.rng"] = np.random.default_rng(
        int(read(seed, raw=True).reshape(-1)[0])
    )


def shared_constant(constant: object, dtype: object = None) -> NkiTensor:
    """A shared-HBM tensor initialised from a NumPy array or a ``.npy`` path."""
    if isinstance(constant, (str, os.PathLike)):
        arr = np.load(constant)
    else:
        arr = np.asarray(constant)
    if dtype is not None:
        arr = arr.astype(dtypes.to_dtype(dtype))
    t = allocate(arr.shape, arr.dtype, MemoryRegion.shared_hbm, "shared_constant")
    write(t, arr)
    return t


@untaken.tile_instruction
def shared_identity_matrix(n: int, dtype: object = np.uint8, dst: NkiTensor | None = None) -> NkiTensor:
    """An ``n x n`` identity matrix in SBUF (written into ``dst`` when given)."""
    out = dst if dst is not None else allocate((n, n), dtype, MemoryRegion.sbuf, "identity")
    context.issue("nl.shared_identity_matrix", "gpsimd", writes={"dst": out})
    write(out, np.eye(n, dtype=np.float32))
    return out
