"""The ``nki_cpu_simulator`` adapter: every import nki-library's simulation harness makes, its own
``nki.*`` aliasing, and ``nki.cpu_simulate(kernel)[lnc](**inputs)``, on the embedded simulator."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from nki_studio.sim import cpu_simulator_adapter, isa, language
from nki_studio.sim.errors import NotImplementedInSimulator


def test_the_harness_imports_alias_and_launch() -> None:
    with cpu_simulator_adapter.installed():
        # The import statements of nki-library's test/utils/simulation_setup.py (`import a.b.c as x` walks
        # the attributes of a, a.b, a.b.c).
        import nki_cpu_simulator.nki.builtin as sim_builtin
        import nki_cpu_simulator.nki.compiler as sim_ncc
        import nki_cpu_simulator.nki.isa as sim_nisa
        import nki_cpu_simulator.nki.isa.constants as sim_nisa_constants
        import nki_cpu_simulator.nki.language as sim_nl
        import nki_cpu_simulator.nki.language.dtypes as sim_dtypes
        import nki_cpu_simulator.nki.tensor as sim_ntensor
        import nki_cpu_simulator.nki.typing as sim_nt
        from nki_cpu_simulator import nki as sim_nki

        sys.modules["nki"] = sim_nki  # the harness's own aliasing
        sys.modules["nki.language"] = sim_nl
        sys.modules["nki.isa.constants"] = sim_nisa_constants
        sys.modules["nki.dtype"] = sim_dtypes

        assert sim_nisa.nc_matmul is isa.nc_matmul and sim_nl.add is language.add
        assert sim_nisa_constants.oob_mode is isa.oob_mode and sim_dtypes.float8_e4m3 is not None
        assert sim_nt.tensor[1, 2] is not None and sim_ntensor.__name__ == "nki_cpu_simulator.nki.tensor"
        for stub in (sim_builtin, sim_ncc):  # no module for these: "not implemented" where used
            with pytest.raises(NotImplementedInSimulator):
                stub.anything  # noqa: B018
        with pytest.raises(AttributeError):
            sim_nki.__wrapped__  # noqa: B018

        import nki
        import nki.language as nl

        @nki.jit
        def double(x):
            out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
            nl.store(out, nl.add(nl.load(x), nl.load(x)))
            return out

        x = np.arange(8, dtype=np.float32).reshape(2, 4)
        for lnc in (1, 2):
            np.testing.assert_array_equal(nki.cpu_simulate(double)[lnc](x=x), 2 * x)
        np.testing.assert_array_equal(nki.cpu_simulate(double)(x), 2 * x)

    assert not any(n.split(".")[0] in ("nki", "nki_cpu_simulator", "neuronxcc") for n in sys.modules)
    with pytest.raises(ModuleNotFoundError):
        import nki_cpu_simulator  # noqa: F401


def test_our_modules_are_left_as_they_were() -> None:
    with cpu_simulator_adapter.installed():
        import nki_cpu_simulator.nki.isa.constants
        import nki_cpu_simulator.nki.language.dtypes  # noqa: F401
    assert "dtypes" not in vars(language)
    assert isa.__spec__ is not None and isa.__spec__.name == "nki_studio.sim.isa"
