"""Lint and the simulator agree on what the toolchain rejects (issue 30, part 1).

Every entry of ``model.toolchain_rejections`` is checked on both sides: linting its example reports its code, and
simulating it does what the entry says (fails with its message, or runs and warns with it). An entry one side does
not honour fails here, as does a simulator refusal that names no lint rule.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from nki_studio.model.targets import NEWEST_VERSION, NkiVersion, Target
from nki_studio.model.toolchain_rejections import (
    JIT_PLATFORM_TARGET,
    REJECTIONS,
    Behaviour,
    Rejection,
)
from nki_studio.nkilint.api import lint_source
from nki_studio.nkilint.config import LintConfig
from nki_studio.nkilint.rule import all_rules
from nki_studio.sim import simulate
from nki_studio.sim.errors import SimulationError
from nki_studio.verify.inputs import make_value
from nki_studio.verify.spec import parse_fields


def _version(entry: Rejection) -> NkiVersion:
    """The newest NKI version that rejects the entry."""
    return NEWEST_VERSION if entry.applies(NEWEST_VERSION) else entry.until or entry.since


def _name(entry: Rejection) -> str:
    return f"{entry.code}-{entry.simulation.value}-{_version(entry)}"


def _kernel(tmp_path: Path, entry: Rejection) -> Path:
    path = tmp_path / "kernel.py"
    path.write_text(entry.example)
    return path


def _simulate(path: Path, entry: Rejection, version: NkiVersion) -> list[str]:
    """Simulate the entry's example under ``version``; its warnings."""
    fields, errors = parse_fields(entry.inputs)
    assert not errors
    rng = np.random.default_rng(0)
    args = [make_value(value, rng) for value in fields.values()]
    return simulate(str(path), *args, nki_version=version).warnings


@pytest.mark.parametrize("entry", REJECTIONS, ids=_name)
def test_lint_reports_the_entry(tmp_path: Path, entry: Rejection) -> None:
    assert entry.code in all_rules(), f"{entry.code} is not a lint rule"
    path = _kernel(tmp_path, entry)
    version = _version(entry)
    config = LintConfig(target=Target(nki_version=version))
    codes = [f.code for f in lint_source(entry.example, str(path), config)]
    assert entry.code in codes, f"lint under NKI {version} reports {codes}, not {entry.code}"


@pytest.mark.parametrize("entry", REJECTIONS, ids=_name)
def test_simulator_does_what_the_entry_says(tmp_path: Path, entry: Rejection) -> None:
    path = _kernel(tmp_path, entry)
    version = _version(entry)
    if entry.simulation is Behaviour.ERROR:
        with pytest.raises(SimulationError, match=entry.message.replace("(", r"\(").replace(")", r"\)")):
            _simulate(path, entry, version)
    else:
        warnings = _simulate(path, entry, version)
        assert any(entry.message in w for w in warnings), warnings


@pytest.mark.parametrize("entry", [e for e in REJECTIONS if e.since > NkiVersion(0, 1)], ids=_name)
def test_simulator_runs_the_example_before_the_rejection(tmp_path: Path, entry: Rejection) -> None:
    """Before ``since`` the toolchain took the construct: the simulator neither refuses nor warns with the entry."""
    before = NkiVersion(entry.since.major, entry.since.minor - 1)
    if "scalar_load" in entry.example:  # an NkiScalar, the subject of the entry, is a 0.7 API
        pytest.skip("no NkiScalar before NKI 0.7")
    warnings = _simulate(_kernel(tmp_path, entry), entry, before)
    assert not any(entry.message in w for w in warnings)


def test_the_cli_says_platform_target_is_rejected_under_0_7(tmp_path: Path) -> None:
    """The case of the issue, end to end: ``nki-studio simulate --nki-version 0.7`` no longer says PASSED."""
    path = _kernel(tmp_path, JIT_PLATFORM_TARGET)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "nki_studio",
            "simulate",
            str(path),
            "--nki-version",
            "0.7",
            "--backend",
            "embedded",
            "--inputs",
            JIT_PLATFORM_TARGET.inputs,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "PASSED" not in done.stdout and "platform_target" in done.stdout
