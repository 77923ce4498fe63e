"""The wire protocol declared once (``nki_studio.protocol``): the generated files are current, the commands the
extension contributes are the declared ones, the server and the extension spell no method or command name
themselves, and the TypedDicts built from dataclass fields name exactly those fields."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from nki_studio.profile.metrics import KernelMetrics
from nki_studio.profile.roofline import Roofline
from nki_studio.protocol import schema
from nki_studio.protocol.commands import CLIENT_COMMANDS, SERVER_COMMANDS
from nki_studio.protocol.notifications import NOTIFICATIONS
from nki_studio.protocol.profile import KernelMetricsJson
from nki_studio.protocol.simulation import Roofline as RooflineJson

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))
NAMES = [c.id for c in (*SERVER_COMMANDS, *CLIENT_COMMANDS)] + [n.method for n in NOTIFICATIONS]


@pytest.mark.parametrize("path", sorted(schema.generated()))
def test_generated_file_is_current(path: str) -> None:
    """``python -m nki_studio.protocol.schema`` (``scripts/generate.sh``) rewrites it."""
    assert (ROOT / path).read_text(encoding="utf-8") == schema.generated()[path], f"{path} is stale"


def test_names_are_declared_once() -> None:
    assert len(NAMES) == len(set(NAMES))
    keys = (
        [c.key for c in SERVER_COMMANDS] + [c.key for c in CLIENT_COMMANDS] + [n.key for n in NOTIFICATIONS]
    )
    assert all(re.fullmatch(r"[a-z][A-Za-z]*", k) for k in keys)


def test_package_json_contributes_the_declared_client_commands() -> None:
    """Every contributed command is declared (contributed), and every declared contributed one is listed."""
    contributed = [c["command"] for c in PACKAGE["contributes"]["commands"]]
    assert sorted(contributed) == sorted(c.id for c in CLIENT_COMMANDS if c.contributed)


def test_menus_and_keybindings_name_declared_commands() -> None:
    declared = {c.id for c in CLIENT_COMMANDS}
    contributes = PACKAGE["contributes"]
    used = {item["command"] for items in contributes["menus"].values() for item in items}
    used |= {k["command"] for k in contributes["keybindings"]}
    assert used <= declared, used - declared


def _literals(folder: str, pattern: str, skip: tuple[str, ...]) -> list[str]:
    # a string of its own, not a name in ``docs`` or `docs` inside a longer string
    names = "|".join(map(re.escape, NAMES))
    quoted = re.compile(rf"""["']({names})["']""")
    found = []
    for path in sorted((ROOT / folder).rglob(pattern)):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(skip):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if quoted.search(line) and not line.lstrip().startswith(("#", "*", "//")):
                found.append(f"{rel}:{n}: {line.strip()}")
    return found


def test_no_literal_names_in_the_server_or_the_extension() -> None:
    """Both sides use the declarations (Python) and the generated constants (TypeScript), never the string."""
    found = _literals("server", "*.py", ("server/protocol/",))
    found += _literals("extension/src", "*.ts", ("extension/src/protocol.generated.ts",))
    assert found == []


def test_the_check_finds_a_literal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The literal check can fail."""
    (tmp_path / "server").mkdir()
    (tmp_path / "server" / "x.py").write_text('server.notify_client("nki/heatmap", payload)\n')
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert _literals("server", "*.py", ()) == ['server/x.py:1: server.notify_client("nki/heatmap", payload)']


@pytest.mark.parametrize(
    ("dataclass", "typed"), [(KernelMetrics, KernelMetricsJson), (Roofline, RooflineJson)]
)
def test_to_dict_keys_are_the_fields(dataclass: type, typed: type) -> None:
    """``to_dict`` returns the fields as they are (a cast): the TypedDict must name exactly those."""
    assert [f.name for f in dataclasses.fields(dataclass)] == list(typed.__annotations__)
