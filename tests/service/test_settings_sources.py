"""One reader of configuration: the editor's options, the MCP server's ``--settings`` JSON and options, the CLI's
options and ``[tool.nki-studio]`` all give the same ``Settings``."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from nki_studio.cli.main import build_parser
from nki_studio.cli.simulate import settings_of
from nki_studio.mcp.config import build_config
from nki_studio.model.targets import Generation, parse_nki_version
from nki_studio.service.settings import Settings, merge, project_config, read_json, strict

EDITOR = {
    "nki-studio": {
        "trustedWorkspace": True,
        "target": "trn1",
        "nkiVersion": "0.6",
        "simulationTimeout": 30,
        "simulationMemoryLimitMb": 1024,
    }
}


def _cli(*argv: str) -> argparse.Namespace:
    return build_parser(["simulate"]).parse_args(["simulate", "k.py", *argv])


def test_every_source_gives_the_same_settings(tmp_path: Path) -> None:
    from_editor, problems = merge(Settings(), EDITOR)
    assert problems == []
    flat = (
        '{"nki-studio.target": "trn1", "nki-studio.nkiVersion": "0.6", "nki-studio.simulationTimeout": 30, '
        '"nki-studio.simulationMemoryLimitMb": 1024}'
    )
    from_mcp_file = build_config([str(tmp_path)], settings=read_json(flat)).settings
    from_mcp_options = build_config(
        [str(tmp_path)], settings={"target": "trn1", "nkiVersion": "0.6"}, timeout_s=30, memory_mb=1024
    ).settings
    from_cli = settings_of(
        _cli("--target", "trn1", "--nki-version", "0.6", "--timeout", "30", "--memory-mb", "1024")
    )
    assert from_editor == from_mcp_file == from_mcp_options == from_cli
    assert from_editor.target is Generation.GEN2 and from_editor.simulation_memory_mb == 1024


def test_a_settings_file_and_its_nested_form_agree(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text('{"remote": {"host": "trn2-box"}, "simulationTimeout": 5}', encoding="utf-8")
    assert read_json(str(settings)) == read_json(
        '{"nki-studio.remote.host": "trn2-box", "simulationTimeout": 5}'
    )
    config = build_config([str(tmp_path)], settings=read_json(str(settings)), remote_enabled=True)
    assert config.settings.remote == {"host": "trn2-box"} and config.remote_available


def test_the_editor_keeps_a_bad_value_the_command_line_refuses_it() -> None:
    kept, problems = merge(Settings(), {"simulationTimeout": -1})
    assert kept.simulation_timeout_s == Settings().simulation_timeout_s and "simulationTimeout" in problems[0]
    with pytest.raises(ValueError, match="simulationTimeout: expected a positive number"):
        strict(Settings(), {"simulationTimeout": -1})
    with pytest.raises(ValueError, match="simulationTimeout"):
        build_config(["."], settings={"simulationTimeout": 0})


def test_untrusted_wins_over_every_source(tmp_path: Path) -> None:
    assert build_config([str(tmp_path)]).trusted
    assert not build_config([str(tmp_path)], trusted=False, settings={"trustedWorkspace": True}).trusted
    assert not build_config([str(tmp_path)], settings={"trustedWorkspace": False}).trusted
    assert not Settings().trusted_workspace  # an editor must say so


def test_pyproject_applies_under_the_explicit_settings(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.nki-studio]\ntarget = "trn1"\nnki-version = "0.6"\n', encoding="utf-8"
    )
    kernel = str(tmp_path / "k.py")
    configured = project_config(kernel, Settings())
    assert configured.target.generation is Generation.GEN2
    assert configured.named_nki_version == parse_nki_version("0.6")
    explicit = project_config(kernel, strict(Settings(), {"target": "trn3"}))
    assert explicit.target.generation is Generation.GEN4
    assert explicit.named_nki_version == parse_nki_version("0.6")
