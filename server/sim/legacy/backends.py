"""Legacy ``neuronxcc.nki.compiler.backends.neuron`` modules: the compiler's own internals, imported by some
kernels' helpers for type annotations.

No Neuron documentation page names these modules (searched: the v2.26-v2.29 docs, the aws-neuron-sdk stubs); what
they hold is inferred from the code importing them. nki-samples' ``reference/util/tile_info.py`` annotates
``nl.mgrid`` tiles and their arithmetic as ``TileIndex`` (``backends.neuron.indexing``), so it is the legacy index
tile type here (``isinstance`` and ``Union[int, TileIndex]`` work); ``reference/util/kernel_helpers.py`` imports
``local_tile`` (``backends.neuron.tensor``) and never uses it, so it is a name that loads and fails when called,
naming itself: a kernel that does use it stops instead of computing something else.
"""

from __future__ import annotations

from typing import Any, NoReturn

from nki_studio.sim.errors import NotImplementedInSimulator
from nki_studio.sim.legacy.index_tiles import IndexTile

TileIndex = IndexTile

__all__ = ["TileIndex", "local_tile"]


def local_tile(*args: Any, **kwargs: Any) -> NoReturn:
    """Undocumented compiler internal: importable (an unused import never stops a kernel), not simulated."""
    raise NotImplementedInSimulator(
        "neuronxcc.nki.compiler.backends.neuron.tensor.local_tile",
        "a compiler internal no Neuron documentation describes",
    )
