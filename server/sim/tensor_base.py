"""What the modules below ``tensor`` know of a tensor: its storage (``Storage``) and the view's attributes
(``TensorBase``, the base class of ``tensor.NkiTensor``).

The session (``context``), the race table (``races``), reads and writes (``access``) and the view methods
(``views``) sit below ``tensor``, which imports them; they recognise and type a tensor through ``TensorBase``
instead of importing ``tensor`` back. ``NkiTensor.__init__`` sets the attributes declared here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from nki_studio.sim.memory import LiveRange, MemoryRegion


class Storage:
    """One allocation: a flat NumPy buffer in a memory region, plus a written-mask in strict mode."""

    __slots__ = (
        "__weakref__",
        "block_elements",
        "data",
        "dirty",
        "dtype",
        "live",
        "name",
        "precise",
        "region",
        "shape",
        "written",
    )

    def __init__(
        self,
        data: np.ndarray,
        dtype: np.dtype[Any],
        region: MemoryRegion,
        name: str,
        shape: tuple[int, ...],
        precise: bool,
        written: np.ndarray | None,
    ) -> None:
        self.data = data  # 1-D, storage dtype
        self.dtype = dtype  # the declared NKI dtype
        self.region = region
        self.name = name
        self.shape = shape
        self.precise = precise
        self.written = written  # bool per element, strict mode only
        self.dirty = False  # set by every write (tells which kernel arguments were modified)
        # On-chip storages: touched by every read and write (capacity comes from liveness).
        self.live: LiveRange | None = None
        # A legacy block-dimension tensor (``nl.par_dim`` not first): elements per partition of one block, each
        # block a tile the compiler allocates on its own (``sim.legacy.indexing``); 0 for any other storage.
        self.block_elements = 0


class TensorBase:
    """A view over a ``Storage``; every instance is an ``NkiTensor``."""

    __slots__ = ()

    if TYPE_CHECKING:
        _st: Storage
        _data: np.ndarray
        _index: np.ndarray | None
        dtype: np.dtype[Any]
        shape: tuple[int, ...]
        strides: tuple[int, ...]
        offset: int
        name: str

        @property
        def buffer(self) -> MemoryRegion: ...
        @property
        def size(self) -> int: ...
        @property
        def dtype_name(self) -> str: ...
        @property
        def storage(self) -> Storage: ...
