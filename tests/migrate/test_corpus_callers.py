"""The corpus benchmark's verdicts on sub-kernels without inputs of their own (``benchmarks/migrate_corpus.py``):
proven through the callers whose proofs ran them, counted apart; else the callers said."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from migrate_corpus import _file_verdicts  # noqa: E402
from nki_studio.service.settings import Settings  # noqa: E402

# own legacy kernels: `tile_sum` only ever called by `summed` (whose inputs a unit test would give), `orphan_helper`
# only by `orphan` (no inputs), `shared_step` only from the folder's other module
KERNELS = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def tile_sum(x, y, out):
    for i in nl.affine_range(2):
        nl.store(out[i], value=nl.load(x[i]) + nl.load(y[i]))


@nki.jit
def summed(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    tile_sum(a, b, out)
    return out


@nki.jit
def orphan_helper(x, out):
    for i in nl.affine_range(2):
        nl.store(out[i], value=nl.load(x[i]))


@nki.jit
def orphan(a, out):
    orphan_helper(a, out)


@nki.jit
def shared_step(x, out):
    for i in nl.affine_range(2):
        nl.store(out[i], value=nl.load(x[i]) * 2)
"""

OTHER = """\
import neuronxcc.nki as nki
from kernels import shared_step


@nki.jit
def user(a, out):
    shared_step(a, out)
"""


def test_sub_kernels_are_proven_through_their_callers_or_say_why_not(tmp_path: Path) -> None:
    folder = tmp_path / "kernels"
    folder.mkdir()
    (folder / "kernels.py").write_text(KERNELS, encoding="utf-8")
    (folder / "other.py").write_text(OTHER, encoding="utf-8")
    rel = "kernels/kernels.py"
    tested = {f"{rel}::summed": "a=float32[2,128,64] b=float32[2,128,64]"}
    verdicts = _file_verdicts(folder / "kernels.py", rel, Settings(trusted_workspace=True), tested, {})
    by_kernel = {v.kernel.split("::")[1]: v for v in verdicts}
    assert (by_kernel["summed"].status, by_kernel["summed"].through) == ("proven", False)
    assert (by_kernel["tile_sum"].status, by_kernel["tile_sum"].through) == ("proven", True)
    assert by_kernel["tile_sum"].detail == "tile_sum: equivalent through summed on 3 inputs"
    assert by_kernel["orphan_helper"].status == "migrated, not proven"
    assert by_kernel["orphan_helper"].detail == "its callers are not proven: orphan"
    assert by_kernel["shared_step"].status == "migrated, not proven"
    assert by_kernel["shared_step"].detail == (
        "called from other modules only (other.py), whose proofs run its original, not its migration"
    )
    assert by_kernel["orphan"].detail.startswith("no inputs")
