"""The tune cache: keyed by everything the outcome depends on; outcomes cut short by a limit are not kept."""

from __future__ import annotations

from pathlib import Path

from nki_studio.protocol.calibration import CalibrationTable
from nki_studio.tune.cache import Cache, cache_dir, cache_key
from nki_studio.tune.calibration import calibration_key
from nki_studio.tune.evaluate import blank

CONTEXT = {
    "spec": {"kernel": "k"},
    "target": "trn2",
    "nkiVersion": None,
    "backend": "auto",
    "calibration": "c1",
}


def test_key_changes_with_each_input() -> None:
    base = cache_key("src", {"N": 1}, CONTEXT)
    assert base == cache_key("src", {"N": 1}, dict(CONTEXT))
    assert base != cache_key("src2", {"N": 1}, CONTEXT)
    assert base != cache_key("src", {"N": 2}, CONTEXT)
    for field, value in (("target", "trn1"), ("calibration", "c2"), ("spec", {"kernel": "k", "seed": 1})):
        assert base != cache_key("src", {"N": 1}, {**CONTEXT, field: value})


def test_calibration_key_is_stable_and_short() -> None:
    assert calibration_key() == calibration_key() and len(calibration_key()) == 16


def test_calibration_key_follows_the_users_calibration() -> None:
    table: CalibrationTable = {
        "target": "trn2",
        "compute": [],
        "engine_scale": {"Vector": 1.5},
        "dma": [],
        "held_out": {"kernels": 0, "before": None, "after": None},
        "profiles": [],
    }
    refit: CalibrationTable = {**table, "engine_scale": {"Vector": 1.25}}
    assert calibration_key(table) == calibration_key(dict(table))  # type: ignore[arg-type]
    assert len({calibration_key(), calibration_key(table), calibration_key(refit)}) == 3


def test_put_get_and_what_is_not_kept(tmp_path: Path) -> None:
    cache = Cache(str(tmp_path / "c"))
    row = blank({"N": 1}, "failed", "out: allclose = 3 (needs 0)")
    cache.put("k1", row)
    hit = cache.get("k1")
    assert hit is not None and hit["cached"] and hit["reason"] == row["reason"]
    cache.put("k2", blank({"N": 2}, "failed", "timeout: the kernel ran longer than 5 s"))
    cache.put("k3", blank({"N": 3}, "failed", "memory_limit: ..."))
    assert cache.get("k2") is None and cache.get("k3") is None
    (tmp_path / "c" / "k4.json").write_text("{torn")
    assert cache.get("k4") is None
    assert Cache(None).get("k1") is None


def test_cache_dir_is_the_projects(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.nki-studio]\n")
    (tmp_path / "sub").mkdir()
    assert cache_dir(str(tmp_path / "sub" / "k.py")) == str(tmp_path / ".nki-studio" / "tune-cache")
