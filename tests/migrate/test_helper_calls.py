"""``migrate.helper_calls``: masks and indices computed by helpers (of the file, or of another module of the
package, nki-samples' rmsnorm_quant pattern) are inlined, so their masks become bounded slices."""

from __future__ import annotations

import textwrap
from pathlib import Path

from nki_studio.migrate.rewrite import migrate_source
from nki_studio.service.migration import migrate, package_sources
from nki_studio.service.settings import Settings

# A plain-Python helper module of the package (our own, in the shape of nki-samples' util/tile_info.py).
TILING = """\
from dataclasses import dataclass


@dataclass(frozen=True)
class Tiled:
    size: int
    tile: int

    def indices(self, n, offset):
        return n * self.tile + offset

    def mask(self, n, offset, *, lower=None, limit=None):
        \"\"\"Keep the indices of tile n within [lower, limit).\"\"\"
        assert lower is not None or limit is not None
        index = self.indices(n, offset)
        if lower is not None and limit is not None:
            return (index >= lower) & (index < limit)
        elif lower is not None:
            return index >= lower
        else:
            return index < limit
"""

KERNEL = """\
import math

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

from .tiling import Tiled


# nki-studio: simulate a=float32[200,64]
@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    rows = Tiled(a.shape[0], 128)
    for i in nl.affine_range(math.ceil(a.shape[0] / 128)):
        ip, jf = nl.mgrid[0:128, 0:64]
        buf = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(
            dst=buf[ip, jf],
            src=a[rows.indices(i, ip), jf],
            mask=rows.mask(i, ip, limit=a.shape[0]),
        )
        valid = rows.mask(i, ip, limit=a.shape[0])
        buf[ip, jf] = nisa.activation(op=nl.exp, data=buf[ip, jf], mask=valid)
        nl.store(out[rows.indices(i, ip), jf], value=buf[ip, jf], mask=valid)
    return out
"""


def test_helper_masks_of_another_module_become_bounded_slices() -> None:
    m = migrate_source(KERNEL, helpers=[TILING])
    assert not m.manual, m.manual
    assert "mask" not in m.text and "mgrid" not in m.text and "valid" not in m.text
    assert len(m.text.splitlines()) < len(KERNEL.splitlines())  # definitions deleted; the rest kept its lines
    # the HBM side keeps its offset, the SBUF side (unshifted tile) stops at the same bound moved by the offset
    assert "src=a[i * rows.tile:min(i * rows.tile + 128, a.shape[0]), 0:64]" in m.text
    assert "dst=buf[0:min(128, (a.shape[0]) - (i * rows.tile)), 0:64]" in m.text
    # the target of a masked value-returning call is bounded too (it was written only where the mask held)
    assert "nisa.activation(dst=buf[0:min(128, (a.shape[0]) - (i * rows.tile)), 0:64]" in m.text
    assert any(c.construct == "helper call" for c in m.changes)


def test_without_the_module_the_helper_mask_stays_listed() -> None:
    m = migrate_source(KERNEL)
    assert any(s.construct == "mask=" and "comes from a call" in s.recipe for s in m.manual)


def test_a_helper_of_the_file_whose_test_depends_on_more_is_left_listed() -> None:
    text = textwrap.dedent(
        """\
        import neuronxcc.nki as nki
        import neuronxcc.nki.language as nl


        def bound(offset, n, strict):
            if strict:
                return offset < n
            return offset <= n


        def below(offset, n):
            return offset < n


        @nki.jit
        def k(a, n, strict):
            ip = nl.arange(128)[:, None]
            jf = nl.arange(64)[None, :]
            x = nl.load(a[ip, jf], mask=bound(ip, n, strict))
            return nl.load(a[ip, jf], mask=below(ip, a.shape[0]))
        """
    )
    m = migrate_source(text)
    assert [(s.line, s.construct) for s in m.manual if s.construct == "mask="] == [(19, "mask=")]
    assert "return nl.load(a[0:min(128, a.shape[0]), 0:64])" in m.text


def test_a_mask_from_a_helper_of_another_module_of_the_package_is_proven(tmp_path: Path) -> None:
    # our own package: the plain-Python tiling helper beside the legacy kernel, imported relatively
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "tiling.py").write_text(TILING, encoding="utf-8")
    path = package / "kern.py"
    path.write_text(KERNEL, encoding="utf-8")
    result = migrate(str(path), Settings(trusted_workspace=True))
    assert result["status"] == "proven", result["message"]
    assert "mask" not in result["migrated"] and "mgrid" not in result["migrated"]


def test_a_helper_computing_with_instructions_is_not_inlined() -> None:
    text = textwrap.dedent(
        """\
        import neuronxcc.nki as nki
        import neuronxcc.nki.language as nl


        def load_rows(a, ip, jf):
            return nl.load(a[ip, jf])


        @nki.jit
        def k(a):
            ip = nl.arange(128)[:, None]
            jf = nl.arange(64)[None, :]
            return load_rows(a, ip, jf)
        """
    )
    assert "return load_rows(a, ip, jf)" in migrate_source(text).text


def test_package_sources_reach_the_package_above_a_folder_without_init(tmp_path: Path) -> None:
    # nki-samples' layout: reference/__init__.py, reference/util/tiling.py, reference/norm/kern.py (no __init__.py)
    (tmp_path / "reference" / "util").mkdir(parents=True)
    (tmp_path / "reference" / "norm").mkdir()
    (tmp_path / "reference" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "reference" / "util" / "tiling.py").write_text(TILING, encoding="utf-8")
    kernel = tmp_path / "reference" / "norm" / "kern.py"
    kernel.write_text(KERNEL, encoding="utf-8")
    assert package_sources(str(kernel)) == ("", TILING)
    assert package_sources(str(tmp_path / "loose.py")) == ()
