"""An operand view bounded by a mask of its own (``t[i_p, k + i_f][mask]`` on a matmul's moving operand, the
pattern of nki-samples' rmsnorm_quant) -> bounded slices, and a value-returning call writing a tile passed in
from a tile of another dtype -> through a result of the data's dtype (the legacy result was rounded to it before the
assignment cast it); rewritten and proven on our own legacy kernel."""

from __future__ import annotations

from collections.abc import Callable

from nki_studio.migrate.rewrite import migrate_source
from nki_studio.protocol.migration import MigrationResult

# Our own: gamma (one row of h) broadcast over 128 partitions through the PE in 256-column tiles, each tile's moving
# operand bounded by its mask; then the product with x quantized to float8 by a helper that receives both tiles.
KERNEL = """\
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


def quantize(x_tile, scale, q_tile):
    i_p, i_f = nl.mgrid[0:128, 0:512]
    q_tile[i_p, i_f] = nisa.tensor_scalar(data=x_tile[i_p, i_f], op0=nl.multiply, operand0=scale)


# nki-studio: simulate x=bfloat16[128,512] g=bfloat16[1,512] s=float32[128,1]
@nki.jit
def k(x, g, s):
    h = 512
    out = nl.ndarray((128, h), dtype=nl.float8_e4m3, buffer=nl.shared_hbm)
    ones = nl.ones((1, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
    row = nl.load(g)
    xt = nl.load(x)
    scale = nl.load(s)
    i_p, i_f = nl.mgrid[0:1, 0:256]
    o_p, o_f = nl.mgrid[0:128, 0:256]
    for t in nl.affine_range(h // 256):
        columns = t * 256 + i_f
        in_bounds = t * 256 + i_f < h
        acc = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.psum)
        acc[o_p, o_f] = nisa.nc_matmul(ones, row[i_p, columns][in_bounds])
        xt[o_p, t * 256 + o_f] = nisa.tensor_tensor(xt[o_p, t * 256 + o_f], acc[o_p, o_f], op=nl.multiply)
    q = nl.ndarray((128, h), dtype=nl.float8_e4m3, buffer=nl.sbuf)
    quantize(xt, scale, q)
    nl.store(out, value=q)
    return out
"""


def test_the_operand_mask_bounds_the_view_and_the_passed_tile_is_written_through_a_result() -> None:
    m = migrate_source(KERNEL)
    assert not m.manual, m.manual
    assert "stationary=ones, moving=row[0:1, t * 256:min(t * 256 + 256, h)])" in m.text
    assert "in_bounds" not in m.text
    # the legacy result had x_tile's dtype (bfloat16), then the assignment cast it to q_tile's (float8)
    assert (
        "tensor_scalar_value = nl.ndarray(x_tile[0:128, 0:512].shape, dtype=x_tile[0:128, 0:512].dtype"
        in m.text
    )
    assert "nisa.tensor_copy(dst=q_tile[0:128, 0:512], src=tensor_scalar_value)" in m.text


def test_the_kernel_is_proven(prove_migration: Callable[..., MigrationResult]) -> None:
    prove_migration(KERNEL, "operand_masks.py")
