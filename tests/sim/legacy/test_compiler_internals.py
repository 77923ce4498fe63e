"""Legacy imports of the compiler's internals and of ``nl.constants`` (undocumented modules helpers import), and an
operand view subscripted by a mask (``t[i_p, i_f][mask]``), on our own legacy kernels."""

from __future__ import annotations

import numpy as np
import pytest
from nki_studio.sim.errors import NotImplementedInSimulator

# A helper module's imports (nki-samples' reference helpers import these): TileIndex annotates index tiles, local_tile
# is never used, sizeinbytes sizes a packed output.
INTERNALS = """
from typing import Union
from neuronxcc.nki.compiler.backends.neuron.indexing import TileIndex
from neuronxcc.nki.compiler.backends.neuron.tensor import local_tile
from neuronxcc.nki.language.constants import sizeinbytes


def shifted(start: int, offset: Union[int, TileIndex]) -> Union[int, TileIndex]:
    return start + offset


@nki.jit
def packed(x):
    ratio = sizeinbytes(np.float32) // sizeinbytes(nl.float8_e4m3)
    out = nl.ndarray((128, 8 * ratio), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:128, 0:8 * ratio]
    assert isinstance(i_p, TileIndex)
    nl.store(out[i_p, i_f], value=nl.load(x[i_p, shifted(4, i_f)]))
    return out


@nki.jit
def uses_local_tile(x):
    return local_tile(x)
"""


def test_internal_imports_load_and_sizeinbytes_is_the_element_size(legacy):
    x = np.arange(128 * 40, dtype=np.float32).reshape(128, 40)
    result = legacy(INTERNALS, x, kernel_name="packed")
    np.testing.assert_array_equal(result.outputs[0], x[:, 4:36])


def test_local_tile_fails_naming_itself_when_used(legacy):
    with pytest.raises(NotImplementedInSimulator, match=r"backends\.neuron\.tensor\.local_tile"):
        legacy(INTERNALS, np.zeros((128, 8), np.float32), kernel_name="uses_local_tile")


# The ones-vector broadcast of one row of gamma through the PE, its moving operand bounded by a mask of its own
# (nki-samples' rmsnorm_quant writes it so); `n` columns of the row are in bounds.
OPERAND_MASK = """
@nki.jit
def broadcast(g, n):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    ones = nl.ones((1, 128), dtype=nl.float32, buffer=nl.sbuf)
    row = nl.load(g)
    i_p, i_f = nl.mgrid[0:1, 0:512]
    o_p, o_f = nl.mgrid[0:128, 0:512]
    in_bounds = i_f < n
    acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    acc[o_p, o_f] = nisa.nc_matmul(ones, row[i_p, i_f][in_bounds])
    nl.store(out[o_p, o_f], value=nl.copy(acc[o_p, o_f]))
    return out
"""


def test_an_operand_mask_holding_on_the_whole_view_selects_it(legacy):
    g = np.random.default_rng(0).standard_normal((1, 512)).astype(np.float32)
    result = legacy(OPERAND_MASK, g, 512, kernel_name="broadcast")
    np.testing.assert_allclose(result.outputs[0], np.broadcast_to(g, (128, 512)), rtol=1e-6)


def test_an_operand_mask_excluding_elements_is_not_simulated(legacy):
    g = np.zeros((1, 512), np.float32)
    with pytest.raises(NotImplementedInSimulator, match=r"t\[\.\.\.\]\[mask\]"):
        legacy(OPERAND_MASK, g, 300, kernel_name="broadcast")
