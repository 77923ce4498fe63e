"""parso's disk cache as nki_studio.lsp.features.parso_cache leaves it: a truncated entry is a miss, and a
write that fails midway leaves the previous entry whole."""

from __future__ import annotations

import pickle
from pathlib import Path

import parso
import parso.cache as cache
import pytest
from nki_studio.lsp.features import parso_cache


def _parse(module: Path, cache_dir: Path) -> str:
    tree = parso.parse(path=str(module), cache=True, cache_path=cache_dir)
    return tree.get_code()


def test_a_truncated_cache_entry_is_parsed_again(tmp_path: Path) -> None:
    parso_cache.install()
    module = tmp_path / "m.py"
    module.write_text("x = 1\n", encoding="utf-8")
    cache_dir = tmp_path / "cache"
    _parse(module, cache_dir)
    cache.parser_cache.clear()  # force the disk read
    entries = [p for p in cache_dir.rglob("*.pkl")]
    assert entries, "parso wrote no cache entry"
    data = entries[0].read_bytes()
    entries[0].write_bytes(data[: len(data) // 2])
    assert _parse(module, cache_dir) == "x = 1\n"


def test_a_failed_write_leaves_the_previous_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parso_cache.install()
    module = tmp_path / "m.py"
    module.write_text("x = 1\n", encoding="utf-8")
    cache_dir = tmp_path / "cache"
    _parse(module, cache_dir)
    (entry,) = list(cache_dir.rglob("*.pkl"))
    before = entry.read_bytes()

    def dump_half(item: object, f: object, protocol: int) -> None:
        f.write(pickle.dumps(item, protocol)[:10])  # type: ignore[attr-defined]
        raise KeyboardInterrupt  # the process stopped mid-write

    monkeypatch.setattr(pickle, "dump", dump_half)
    with pytest.raises(KeyboardInterrupt):
        cache._save_to_file_system(parso.load_grammar()._hashed, str(module), object(), cache_path=cache_dir)
    assert entry.read_bytes() == before
    assert [p.name for p in cache_dir.rglob("*.tmp")] == []
