"""``nki-studio tune`` end to end in-process: the table, ``--json`` against the declared schema, ``--html`` with
its SVG, ``--apply``, and the usage errors (a refused space, no space, Ray unreachable with and without the
local fallback)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from nki_studio.cli.main import main
from nki_studio.protocol.schema import protocol_schema

SCHEMA = protocol_schema()


def test_json_html_and_apply(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = project / "stream_scale.py"
    page = project / "tune.html"
    code = main(
        ["tune", str(path), "--space", "TILE_F=1024 BUFS=2", "--json", "--html", str(page), "--apply"]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    report = json.loads(out)
    validator = Draft202012Validator(
        SCHEMA["x-cliOutputs"]["nki-studio tune --json"] | {"$defs": SCHEMA["$defs"]}
    )
    assert [e.message for e in validator.iter_errors(report)] == []
    assert report["winner"]["values"] == {"TILE_F": 1024, "BUFS": 2}
    html = page.read_text()
    assert "<svg" in html and "TILE_F=1024 BUFS=2" in html and "estimates" in html
    assert "TILE_F = 1024" in path.read_text() and "BUFS = 2" in path.read_text()
    assert "applied to" in err

    code = main(["tune", str(path), "--space", "TILE_F=1024 BUFS=2"])  # already applied, from the cache
    out, _ = capsys.readouterr()
    assert code == 0 and "rank" in out and "estimated (not measured)" in out and "1 from the cache" in out


def test_usage_errors(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(project / "stream_scale.py")
    assert main(["tune", path, "--space", "TILE_F=1..1000 BUFS=1..1000"]) == 2
    assert "1,000,000 points" in capsys.readouterr().err
    assert main(["tune", path, "--space", "TILE_F=1,2 if open('x')"]) == 2
    assert "Call is not allowed" in capsys.readouterr().err
    assert main(["tune", str(project / "tiled_matmul.py"), "--space", "NOPE=1"]) == 2
    assert "NOPE: not a module-level constant" in capsys.readouterr().err
    no_space = project / "plain.py"
    no_space.write_text((project / "stream_scale.py").read_text().replace("# nki-studio: tune", "# tune"))
    assert main(["tune", str(no_space)]) == 2
    assert "no search space" in capsys.readouterr().err


def test_ray_unreachable(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(project / "stream_scale.py")
    assert main(["tune", path, "--space", "TILE_F=256 BUFS=1", "--ray", "127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert "no Ray cluster answers at '127.0.0.1:9'" in err and "--ray-fallback-local" in err
    code = main(
        ["tune", path, "--space", "TILE_F=256 BUFS=1", "--ray", "127.0.0.1:9", "--ray-fallback-local"]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "on local" in out and "ran on the local pool instead" in out
