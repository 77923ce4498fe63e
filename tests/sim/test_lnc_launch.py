"""LNC launches: NEURON_LOGICAL_NC_CONFIG sets the degree, a kernel/compiler mismatch is reported as NCC_EVRF066
words, and the cores run in a fixed order (an unsynchronised overlapping write resolves the same way every run)."""

import numpy as np
import pytest
from nki_studio.sim import api, dropin
from nki_studio.sim.errors import SimulationError
from nki_studio.sim.lnc_config import compiler_lnc, configured_lnc, lnc_mismatch

KERNELS = """
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def cores(a):
    out = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=t, value=float(nl.num_programs()))
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def zero_fill_race(a):
    # Both cores zero-fill the whole output, then write their row: no barrier between (a real bug that
    # hardware timing hides: both zero-fills happen before either result).
    out = nl.ndarray((2, 4), dtype=nl.float32, buffer=nl.shared_hbm)
    me = nl.program_id(0)
    zero = nl.ndarray((2, 4), dtype=nl.float32, buffer=nl.sbuf)
    mine = nl.ndarray((1, 4), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=zero, value=0.0)
    nisa.dma_copy(dst=out, src=zero)
    nisa.memset(dst=mine, value=float(me + 1))
    nisa.dma_copy(dst=out[me : me + 1, :], src=mine)
    return out
"""


@pytest.fixture
def kfile(tmp_path, monkeypatch):
    monkeypatch.delenv("NEURON_LOGICAL_NC_CONFIG", raising=False)
    monkeypatch.delenv("NEURON_CC_FLAGS", raising=False)
    path = tmp_path / "k.py"
    path.write_text(KERNELS)
    return str(path)


def test_the_environment_sets_the_degree_of_a_plain_launch(kfile, monkeypatch):
    x = np.zeros((1, 1), np.float32)
    assert api.simulate(kfile, x, kernel_name="cores").output.item() == 1.0
    monkeypatch.setenv("NEURON_LOGICAL_NC_CONFIG", "2")
    result = api.simulate(kfile, x, kernel_name="cores")
    assert result.report.lnc == 2 and result.output.item() == 2.0
    module = dropin.load_module(kfile)
    with dropin.installed():
        assert module.cores(x).item() == 2.0  # direct call (NKI_SIMULATOR style)
    assert not any("NCC_EVRF066" in w for w in result.warnings)


def test_a_bracket_disagreeing_with_the_compiler_is_reported_in_its_words(kfile, monkeypatch):
    monkeypatch.setenv("NEURON_LOGICAL_NC_CONFIG", "2")
    module = dropin.load_module(kfile)
    result = api.simulate(module.cores[1], np.zeros((1, 1), np.float32))
    assert result.output.item() == 1.0  # the kernel's own degree runs
    assert any(
        w.startswith("NKI kernel 'cores' is configured with LNC=1, but neuronx-cc is using LNC=2")
        for w in result.warnings
    )
    monkeypatch.setenv("NEURON_CC_FLAGS", "-O1 --lnc=1")
    assert compiler_lnc() == 1 and lnc_mismatch("k", 2) is not None and lnc_mismatch("k", 1) is None
    monkeypatch.setenv("NEURON_LOGICAL_NC_CONFIG", "3")
    with pytest.raises(SimulationError, match="must be 1 or 2"):
        configured_lnc()


def test_lnc2_cores_run_in_lockstep(kfile):
    outs = []
    for _ in range(3):
        result = api.simulate(kfile, np.zeros((1, 1), np.float32), kernel_name="zero_fill_race", lnc=2)
        outs.append(result.output.tolist())
    # one instruction per core in turn: both zero-fills precede both rows, as on hardware, on every run (a
    # thread schedule or one core after the other lets core 1's zero-fill erase core 0's row)
    assert outs == [[[1.0] * 4, [2.0] * 4]] * 3
    assert any("race" in w.lower() or "overlap" in w.lower() for w in result.warnings)
