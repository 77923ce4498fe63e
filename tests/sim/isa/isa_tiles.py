"""Tile helpers for the nki.isa instruction tests."""

from __future__ import annotations

import numpy as np
from nki_studio.sim.access import read, write
from nki_studio.sim.memory import MemoryRegion
from nki_studio.sim.tensor import NkiTensor, allocate

SBUF, PSUM, HBM = MemoryRegion.sbuf, MemoryRegion.psum, MemoryRegion.shared_hbm


def tile(values: np.ndarray, dtype: object = np.float32, buffer: MemoryRegion = SBUF) -> NkiTensor:
    """An on-chip (or HBM) tensor holding ``values`` cast to ``dtype``."""
    values = np.asarray(values)
    t = allocate(values.shape, dtype, buffer)
    write(t, values)
    return t


def new(shape: tuple[int, ...], dtype: object = np.float32, buffer: MemoryRegion = SBUF) -> NkiTensor:
    """An uninitialised tensor (NaN / 4 sentinels)."""
    return allocate(shape, dtype, buffer)


def val(t: NkiTensor) -> np.ndarray:
    """float32 copy of the values."""
    return np.array(read(t), dtype=np.float32)


def raw(t: NkiTensor) -> np.ndarray:
    """Copy of the stored values."""
    return np.array(read(t, raw=True))
