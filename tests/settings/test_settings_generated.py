"""package.json settings, the extension's key lists and the settings table of docs/settings.md match the
declaration (regenerate with ``python -m nki_studio.settings.generate``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from nki_studio.settings.declaration import SECTION, SETTINGS
from nki_studio.settings.generate import generated_files, page_with_settings

ROOT = Path(__file__).resolve().parents[2]
HINT = "run `python -m nki_studio.settings.generate` (or `bash scripts/generate.sh`) from the repository root"


@pytest.mark.parametrize("name", sorted(str(Path(p).relative_to(ROOT)) for p in generated_files(str(ROOT))))
def test_generated_file_is_current(name: str) -> None:
    expected = generated_files(str(ROOT))[str(ROOT / name)]
    assert (ROOT / name).read_text(encoding="utf-8") == expected, f"{name} is stale: {HINT}"


def test_package_json_declares_every_user_setting_with_its_default() -> None:
    manifest = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))
    properties = manifest["contributes"]["configuration"]["properties"]
    user = {f"{SECTION}.{s.key}": s for s in SETTINGS if s.user_setting}
    assert list(properties) == list(user)
    assert {k: p["default"] for k, p in properties.items()} == {k: s.default for k, s in user.items()}
    assert "nki-studio.remote.transfer" in properties  # the setting that had drifted out of package.json


def test_settings_page_without_markers_is_refused() -> None:
    with pytest.raises(ValueError, match="markers"):
        page_with_settings("# no table here\n")
