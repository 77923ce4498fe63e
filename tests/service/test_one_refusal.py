"""One trust decision with one refusal: simulating and remote profiling, from every front end, refuse an
untrusted workspace with the service's message, before any worker or ssh process starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from nki_studio.mcp.config import build_config
from nki_studio.mcp.errors import ToolFailure
from nki_studio.mcp.jobs import Simulator as McpSimulator
from nki_studio.service import remote_profile, simulation
from nki_studio.service.settings import Settings
from nki_studio.service.simulation import REFUSAL, Refused, Simulator

DATA = Path(__file__).resolve().parents[1] / "verify" / "data"


@pytest.fixture()
def kernel() -> simulation.Kernel:
    path = DATA / "add_kernel.py"
    return simulation.prepare(str(path), path.read_text(encoding="utf-8"), Settings(), kernel="add")


def test_the_simulator_refuses_an_untrusted_workspace_and_starts_no_worker(kernel: simulation.Kernel) -> None:
    simulator = Simulator()
    with pytest.raises(Refused) as refused:
        simulator.run(kernel, Settings())
    assert str(refused.value) == REFUSAL and "untrusted" in REFUSAL
    simulator.warm_up(Settings())
    assert simulator._pool is None  # no worker process for an untrusted workspace


def test_remote_profiling_refuses_with_the_same_message(kernel: simulation.Kernel) -> None:
    untrusted = Settings(extra={"remote": {"host": "trn2-box"}})
    with pytest.raises(Refused, match="untrusted workspace"):
        remote_profile.job_for(kernel, untrusted, None)


def test_the_editor_answer_and_the_agent_error_carry_it(kernel: simulation.Kernel, tmp_path: Path) -> None:
    assert simulation.refusal("add") == {"status": "refused", "message": REFUSAL, "kernel": "add"}
    mcp = McpSimulator(build_config([str(tmp_path)], trusted=False))
    with pytest.raises(ToolFailure) as failure:
        mcp.run(kernel)
    assert failure.value.kind == "refused" and failure.value.message == REFUSAL
