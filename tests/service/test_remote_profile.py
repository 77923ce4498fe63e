"""Remote profiling through the service: the job from the kernel the simulation resolves and the ``remote``
settings object, and every front end reaching the ssh round trip through it (a closed port: the run fails at
its first stage, with the flow's message, and nothing is cached)."""

from __future__ import annotations

from pathlib import Path

import pytest
from nki_studio.cli.main import main
from nki_studio.mcp.config import build_config
from nki_studio.mcp.errors import ToolFailure
from nki_studio.mcp.remote_tool import profile_remote
from nki_studio.mcp.workspace import Workspace
from nki_studio.service import remote_profile, simulation
from nki_studio.service.settings import Settings, strict

DATA = Path(__file__).resolve().parents[1] / "verify" / "data"
KERNEL = DATA / "add_kernel.py"
CLOSED = "127.0.0.1:1"  # nothing listens on port 1: ssh is refused at once


@pytest.fixture()
def kernel() -> simulation.Kernel:
    return simulation.prepare(str(KERNEL), KERNEL.read_text(encoding="utf-8"), Settings(), kernel="add")


def _trusted(remote: dict[str, object]) -> Settings:
    return strict(Settings(trusted_workspace=True), {"remote": remote})


def test_the_job_follows_the_remote_settings_and_the_kernel(
    kernel: simulation.Kernel, tmp_path: Path
) -> None:
    job = remote_profile.job_for(kernel, _trusted({"host": "trn2-box", "cacheDir": str(tmp_path)}), tmp_path)
    assert job.cache_root == tmp_path and job.spec == kernel.spec and job.kernel_file == KERNEL.resolve()
    assert job.settings.platform_target == kernel.generation.value  # the kernel's target by default
    explicit = remote_profile.job_for(kernel, _trusted({"host": "trn2-box"}), None, target="trn1")
    assert explicit.settings.platform_target == "trn1"


def test_settings_without_a_host_are_refused_by_name(kernel: simulation.Kernel) -> None:
    with pytest.raises(remote_profile.RemoteConfigError, match=r"remote\.host is not set"):
        remote_profile.job_for(kernel, _trusted({}), None)


def test_the_cli_reaches_ssh_through_the_service(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["profile", "remote", f"{KERNEL}::add", "--host", CLOSED, "--cache-dir", str(tmp_path), "--quiet"]
    assert main(argv) == 1
    assert "host unreachable" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_the_mcp_tool_reaches_ssh_through_the_service(tmp_path: Path) -> None:
    config = build_config(
        [str(DATA)],
        settings={"remote": {"host": CLOSED, "cacheDir": str(tmp_path)}},
        remote_enabled=True,
    )
    with pytest.raises(ToolFailure) as failure:
        profile_remote(Workspace(config.roots), config, {"file": KERNEL.name, "kernel": "add"})
    assert failure.value.kind == "remote_failed" and "host unreachable" in failure.value.message
