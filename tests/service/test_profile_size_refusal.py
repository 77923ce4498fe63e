"""The oversized-profile refusal (a profile that cannot fit in the memory available is not read) applies to
the CLI and the MCP server as it does to the language server: all load through ``service.profiles``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from nki_studio.cli.main import main
from nki_studio.mcp.errors import ToolFailure
from nki_studio.mcp.profile_tools import analyze_profile
from nki_studio.mcp.workspace import Workspace
from nki_studio.profile.readers import detect
from nki_studio.service import profiles

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "profile"))
import fixturegen

REFUSED = "GiB is available"


@pytest.fixture()
def profile(tmp_path: Path) -> Path:
    return fixturegen.write_all(fixturegen.walkthrough_timeline(), tmp_path, "rmsnorm")["json"]


@pytest.fixture()
def little_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine with 1 KiB available: the profile's estimated load no longer fits."""
    monkeypatch.setattr(detect, "available_memory", lambda: 1024)


def test_it_loads_when_it_fits(profile: Path) -> None:
    assert profiles.load(profile).metrics.kernel.latency_ns > 0


@pytest.mark.usefixtures("little_memory")
def test_the_service_refuses_before_reading(profile: Path) -> None:
    with pytest.raises(profiles.ProfileError, match=REFUSED):
        profiles.load(profile)


@pytest.mark.usefixtures("little_memory")
def test_the_cli_refuses(profile: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profile", "summary", str(profile)]) == 2
    assert REFUSED in capsys.readouterr().err


@pytest.mark.usefixtures("little_memory")
def test_the_mcp_server_refuses(profile: Path) -> None:
    with pytest.raises(ToolFailure) as failure:
        analyze_profile(Workspace([profile.parent]), {"profile": profile.name})
    assert failure.value.kind == "unreadable_profile" and REFUSED in failure.value.message
