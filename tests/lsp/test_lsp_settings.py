"""Unit tests of settings parsing (no server process)."""

from __future__ import annotations

from nki_studio.model.targets import Generation, parse_nki_version
from nki_studio.service.settings import PathMapping, Settings, merge


def test_defaults_are_untrusted() -> None:
    s = Settings()
    assert s.trusted_workspace is False
    assert s.target is None and s.nki_version is None
    assert s.simulation_timeout_s == 60.0 and s.simulation_memory_mb == 4096


def test_nested_and_flat_payloads() -> None:
    nested, problems = merge(
        Settings(), {"nki-studio": {"target": "gen4", "nkiVersion": "0.6", "trustedWorkspace": True}}
    )
    flat, _ = merge(Settings(), {"target": "gen4", "nkiVersion": "0.6", "trustedWorkspace": True})
    assert problems == []
    assert nested == flat
    assert nested.target is Generation.GEN4 and nested.nki_version == parse_nki_version("0.6")
    assert nested.trusted_workspace is True


def test_bad_values_keep_previous_and_are_reported() -> None:
    base, _ = merge(Settings(), {"simulationTimeout": 5, "heatmapMetric": "wait"})
    s, problems = merge(base, {"simulationTimeout": -1, "heatmapMetric": "heat", "trustedWorkspace": "yes"})
    assert s.simulation_timeout_s == 5 and s.heatmap_metric == "wait" and s.trusted_workspace is False
    assert len(problems) == 3 and all("keeping" in p for p in problems)


def test_auto_clears_target_and_version() -> None:
    s, _ = merge(Settings(), {"target": "trn1", "nkiVersion": "0.6"})
    s, _ = merge(s, {"target": "auto", "nkiVersion": ""})
    assert s.target is None and s.nki_version is None


def test_path_mappings_both_forms() -> None:
    a, _ = merge(Settings(), {"pathMappings": {"/home/ubuntu/src": "/work/src"}})
    b, _ = merge(Settings(), {"pathMappings": [{"remote": "/home/ubuntu/src", "local": "/work/src"}]})
    assert a.path_mappings == b.path_mappings == (PathMapping("/home/ubuntu/src", "/work/src"),)
    _, problems = merge(Settings(), {"pathMappings": [{"remote": "/x"}]})
    assert problems


def test_unknown_keys_are_kept_for_features() -> None:
    s, problems = merge(Settings(), {"completionDocs": "full"})
    assert problems == [] and s.extra["completionDocs"] == "full"
