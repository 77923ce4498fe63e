"""``nki.language`` (``nl``) for the embedded simulator: every public name of language.md §15.

Legacy ``neuronxcc``-era names (and documented names not simulated) import, and raise ``NotImplementedInSimulator``
with a pointer to their replacement where used (deprecations.md); unknown names raise ``MissingName``.
"""

from __future__ import annotations

from typing import Any

from nki_studio.sim.dtypes import NKI_DTYPES
from nki_studio.sim.language.control import (
    affine_range,
    device_print,
    dynamic_range,
    fori_loop,
    if_else,
    no_reorder,
    num_programs,
    program_id,
    program_ndim,
    sequential_range,
    static_range,
    while_loop,
)
from nki_studio.sim.language.creation import (
    full,
    ndarray,
    ones,
    rand,
    random_seed,
    shared_constant,
    shared_identity_matrix,
    zeros,
    zeros_like,
)
from nki_studio.sim.language.elementwise import FUNCTIONS as _ELEMENTWISE
from nki_studio.sim.language.grids import (
    NkiBlockGrid,
    NkiGrid,
    NkiTileGrid,
    alloc_blocks,
    alloc_tiles,
    blocks,
    empty_like,
    tiles,
)
from nki_studio.sim.language.movement import (
    broadcast_to,
    copy,
    dropout,
    expand_dims,
    gather_flattened,
    load,
    load_transpose2d,
    matmul,
    store,
    transpose,
    where,
)
from nki_studio.sim.language.reductions import REDUCTIONS as _REDUCTIONS
from nki_studio.sim.language.reductions import rms_norm, softmax
from nki_studio.sim.language.tile_size import tile_size
from nki_studio.sim.memory import MemoryRegion
from nki_studio.sim.tensor import DynSlice, NkiTensor, ds
from nki_studio.sim.unimplemented import module_getattr


def _nki_object_init(self: Any, *args: Any, **kwargs: Any) -> None:
    """Keyword (and positional, in annotation order) attribute construction of NKIObject subclasses."""
    fields: list[str] = []
    for klass in reversed(type(self).__mro__):
        fields.extend(f for f in getattr(klass, "__annotations__", {}) if f not in fields)
    if len(args) > len(fields):
        raise TypeError(f"{type(self).__name__}() takes at most {len(fields)} positional arguments")
    for key, value in (*zip(fields, args, strict=False), *kwargs.items()):
        object.__setattr__(self, key, value)  # also for @dataclass(frozen=True) subclasses
    post_init = getattr(self, "__post_init__", None)
    if post_init is not None:
        post_init()


class NKIObject:
    """Base class for user classes used inside kernels (language.md §4); the constructor takes keyword attributes.

    Every subclass gets this constructor in its own namespace, so ``@dataclass`` (which never replaces an
    ``__init__`` defined on the class) keeps it: nki-library builds ``@dataclass`` NKIObjects with unannotated
    attributes by keyword, which plain dataclasses reject (*inferred* from that usage; see docs/simulator.md).
    """

    __init__ = _nki_object_init

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" not in cls.__dict__:
            cls.__init__ = _nki_object_init  # type: ignore[misc]


sbuf = MemoryRegion.sbuf
psum = MemoryRegion.psum
private_hbm = MemoryRegion.private_hbm
hbm = MemoryRegion.private_hbm
shared_hbm = MemoryRegion.shared_hbm


def _region(b: object) -> MemoryRegion | None:
    if isinstance(b, NkiTensor):
        return b.buffer
    return b if isinstance(b, MemoryRegion) else None


def is_hbm(b: object) -> bool:
    """Any HBM kind."""
    r = _region(b)
    return r is not None and not r.on_chip


def is_on_chip(b: object) -> bool:
    """SBUF or PSUM."""
    r = _region(b)
    return r is not None and r.on_chip


def is_psum(b: object) -> bool:
    """PSUM."""
    return _region(b) is MemoryRegion.psum


def is_sbuf(b: object) -> bool:
    """SBUF."""
    return _region(b) is MemoryRegion.sbuf


globals().update(NKI_DTYPES)
globals().update(_ELEMENTWISE)
globals().update(_REDUCTIONS)
globals()["bool"] = NKI_DTYPES["bool_"]  # undocumented `nl.bool`, used by nki-library (usage-stats.md)

_LEGACY = {
    "par_dim": "partition dims are always dim 0 now (removed); drop nl.par_dim",
    "mgrid": "use slices / nl.ds instead of nl.mgrid index grids",
    "arange": "use slices / nl.ds instead of nl.arange",
    "static_cast": "use nl.copy(x, dtype=...) or nisa.tensor_copy",
    "loop_reduce": "removed; accumulate explicitly",
    "spmd_dim": "SPMD grids were replaced by LNC launches kernel[2]",
    "nc": "SPMD grids were replaced by LNC launches kernel[2]",
    "atomic_rmw": "use nisa.dma_compute",
    "all_reduce": "use nki.collectives.all_reduce",
    "fp32": "use nl.float32",
}
__getattr__ = module_getattr("nl", _LEGACY, "not a documented nki.language name")


__all__ = [
    "DynSlice",
    "MemoryRegion",
    "NKIObject",
    "NkiBlockGrid",
    "NkiGrid",
    "NkiTensor",
    "NkiTileGrid",
    "affine_range",
    "alloc_blocks",
    "alloc_tiles",
    "blocks",
    "broadcast_to",
    "copy",
    "device_print",
    "dropout",
    "ds",
    "dynamic_range",
    "empty_like",
    "expand_dims",
    "fori_loop",
    "full",
    "gather_flattened",
    "if_else",
    "hbm",
    "is_hbm",
    "is_on_chip",
    "is_psum",
    "is_sbuf",
    "load",
    "load_transpose2d",
    "matmul",
    "ndarray",
    "no_reorder",
    "num_programs",
    "ones",
    "private_hbm",
    "program_id",
    "program_ndim",
    "psum",
    "rand",
    "random_seed",
    "rms_norm",
    "sbuf",
    "sequential_range",
    "shared_constant",
    "shared_hbm",
    "shared_identity_matrix",
    "softmax",
    "static_range",
    "store",
    "tile_size",
    "tiles",
    "transpose",
    "where",
    "while_loop",
    "zeros",
    "zeros_like",
    *NKI_DTYPES,
    "bool",  # the undocumented alias above; the stubs declare it too
    *_ELEMENTWISE,
    *_REDUCTIONS,
]
