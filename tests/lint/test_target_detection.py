"""The default NKI version comes from an installed ``nki`` wheel, else from ``neuronx-cc`` (nki-0.7.md §5)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from nki_studio.model.targets import NkiVersion, detect_installed_nki_version


def _install(site: Path, package: str, dist: str, version: str) -> None:
    """A minimal installed distribution: the importable package and its dist-info metadata."""
    (site / package).mkdir()
    (site / package / "__init__.py").write_text("")
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("NKI_COMPILER_FRONTEND", raising=False)
    for name in ("nki", "neuronxcc"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return tmp_path


def test_nothing_installed_means_no_version(site: Path) -> None:
    assert detect_installed_nki_version() is None


def test_an_nki_wheel_gives_its_version(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _install(site, "nki", "nki", "0.7.0")
    assert detect_installed_nki_version() == NkiVersion(0, 7)
    monkeypatch.setenv("NKI_COMPILER_FRONTEND", "custom")  # 0.7 install asked for 0.6 semantics
    assert detect_installed_nki_version() == NkiVersion(0, 6)


def test_neuronx_cc_alone_implies_the_version(site: Path) -> None:
    _install(site, "neuronxcc", "neuronx-cc", "2.27.1")
    assert detect_installed_nki_version() == NkiVersion(0, 6)
