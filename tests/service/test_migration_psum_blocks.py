"""``service.migration`` on a legacy kernel keeping more matmul tiles in a PSUM block tensor than PSUM holds at
once (nki-samples' attention tutorial v3 keeps 256): the legacy compiler allocated each block apart, the
migrated kernel keeps a list of tiles, and the proof simulates both."""

from __future__ import annotations

from pathlib import Path

from nki_studio.service.migration import migrate
from nki_studio.service.settings import Settings

TRUSTED = Settings(trusted_workspace=True)

# 16 tiles of 2 KiB per partition (32 KiB of 16): out[i] = row max of (i + 1) * a.T @ b, the products all made
# before any is read
KERNEL = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


# nki-studio: simulate a=float32[128,128] b=float32[128,512]
@nki.jit
def row_maxima(a, b):
    out = nl.ndarray((16, 128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    products = nl.ndarray((16, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
    sa = nl.load(a)
    sb = nl.load(b)
    for i in nl.affine_range(16):
        products[i, :, :] = nisa.nc_matmul(nl.multiply(sa, i + 1.0), sb)
    for i in nl.affine_range(16):
        nl.store(out[i], value=nisa.tensor_reduce(op=nl.max, data=products[i], axis=1, keepdims=True))
    return out
"""


def test_psum_blocks_beyond_psum_migrate_to_a_list_of_tiles_and_are_proven(tmp_path: Path) -> None:
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL, encoding="utf-8")
    result = migrate(str(path), TRUSTED)
    assert result["status"] == "proven", result["message"]
    assert (
        "products = [nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum) for _ in range(16)]"
        in (result["migrated"])
    )
    (proof,) = result["proofs"]
    assert proof["equivalent"] and proof["inputs"] == 3
