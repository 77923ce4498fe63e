"""Every setting key the server or the extension reads is declared in ``nki_studio.settings.declaration``,
with the reader the declaration names (and no declared setting is read by nobody)."""

from __future__ import annotations

import re
from pathlib import Path

from nki_studio.service import settings as lsp_settings
from nki_studio.settings.declaration import SETTINGS

ROOT = Path(__file__).resolve().parents[2]


def _found(pattern: str, paths: list[Path]) -> set[str]:
    keys = {key for path in paths for key in re.findall(pattern, path.read_text(encoding="utf-8"))}
    assert keys, f"{pattern!r} found nothing in {paths}: the test no longer sees the code it checks"
    return keys


def _declared(readers: tuple[str, ...], *, remote: bool) -> set[str]:
    return {s.server_key for s in SETTINGS if s.reader in readers and s.remote == remote}


def test_top_level_keys_the_server_reads_are_declared() -> None:
    parsed = set(lsp_settings._KEYS)  # parsed into Settings
    # read by feature modules from Settings.extra (keys without a Settings field)
    front = [*(ROOT / "server" / "lsp").rglob("*.py"), *(ROOT / "server" / "service").rglob("*.py")]
    extra = _found(r'extra\.get\("(\w+)"', sorted(front))
    assert "remote" in extra  # the nested object of the remote.* settings
    assert parsed | (extra - {"remote"}) == _declared(("server", "both"), remote=False)


def test_remote_keys_the_server_reads_are_declared() -> None:
    config = _found(r'_value\(values, "(\w+)"\)', [ROOT / "server" / "remote" / "config.py"])
    feature = _found(r'raw\.get\("(\w+)"\)', [ROOT / "server" / "service" / "remote_profile.py"])
    assert config | feature == _declared(("server", "both"), remote=True)


def test_keys_the_extension_reads_itself_are_declared() -> None:
    sources = [
        p for p in sorted((ROOT / "extension" / "src").rglob("*.ts")) if not p.name.endswith(".generated.ts")
    ]
    read = _found(r"\.get<.*?>\('([\w.]+)'\)", sources)
    changed = _found(r"affectsConfiguration\('nki-studio\.([\w.]+)'\)", sources)
    written = _found(r"\.update\('([\w.]+)'", sources)
    direct = {s.key for s in SETTINGS if s.reader in ("extension", "both")}
    assert read | changed | written == direct


def test_the_heatmap_style_default_comes_first() -> None:
    """The extension falls back to ``HEAT_STYLES[0]`` (generated from the enum) for a value it does not know."""
    style = next(s for s in SETTINGS if s.key == "heatmap.style")
    assert style.enum[0] == style.default == "compact"
