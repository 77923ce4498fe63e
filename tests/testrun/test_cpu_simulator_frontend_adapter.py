"""The ``nki_cpu_simulator.nki.compiler.frontend`` stand-in: reached as nki-library's trace-only path reaches it
(``from nki.compiler.frontend import ...`` after the harness aliased ``nki.compiler``), and ``compile`` checks a
kernel by simulating it: accepts what the simulator accepts, raises what it rejects, on the named target."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from nki_studio.sim import cpu_simulator_adapter
from nki_studio.sim.errors import NotImplementedInSimulator


@pytest.fixture
def frontend() -> Iterator[Any]:
    """The ``nki.compiler.frontend`` module the harness's kernel_tracer imports, after the harness's aliasing."""
    with cpu_simulator_adapter.installed():
        import nki_cpu_simulator.nki.compiler as sim_ncc  # type: ignore[import-not-found]
        from nki_cpu_simulator import nki as sim_nki

        sys.modules["nki"] = sim_nki  # simulation_setup.setup_simulation_mode's aliasing
        sys.modules["nki.compiler"] = sim_ncc
        from nki.compiler.frontend import NKIFrontend, ParserFrontend, TracerFrontend

        assert isinstance(ParserFrontend(), NKIFrontend) and isinstance(TracerFrontend(), NKIFrontend)
        yield sys.modules["nki.compiler.frontend"]
    assert not any(n.split(".")[0] in ("nki", "nki_cpu_simulator") for n in sys.modules)


def _compile(frontend: Any, kernel: Any, front: str = "ParserFrontend", **inputs: Any) -> Any:
    return getattr(frontend, front)().compile(
        kernel, inputs=inputs, target=inputs.pop("target", "trn2"), lnc=1, artifacts_dir="/nonexistent"
    )


def test_compile_runs_the_kernel_and_has_no_mlir(frontend: Any) -> None:
    import nki
    import nki.language as nl

    @nki.jit
    def double(x: Any) -> Any:
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.add(nl.load(x), nl.load(x)))
        return out

    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    result = _compile(frontend, double, x=x)
    np.testing.assert_array_equal(result.outputs, 2 * x)
    with pytest.raises(NotImplementedInSimulator, match="no MLIR module"):
        result.module  # noqa: B018  (printed by the harness only under --debug-kernels)


def test_compile_raises_what_the_kernel_and_the_simulator_reject(frontend: Any) -> None:
    import nki
    import nki.language as nl

    @nki.jit
    def checked(dummy: Any, size: int) -> Any:
        assert size % 2 == 0, f"size mismatch: {size}"  # the pattern of a kernel_assert
        t = nl.ndarray((size, 4), dtype=nl.float32, buffer=nl.sbuf)
        nl.store(dummy, nl.load(dummy))
        del t
        return dummy

    dummy = np.zeros((1, 1), np.float32)
    _compile(frontend, checked, dummy=dummy, size=128)
    with pytest.raises(Exception, match="size mismatch: 127"):
        _compile(frontend, checked, dummy=dummy, size=127)
    with pytest.raises(Exception, match="partition"):  # 256 partitions: the simulator's own check
        _compile(frontend, checked, dummy=dummy, size=256)


def test_compile_targets_the_named_generation(frontend: Any) -> None:
    import nki
    import nki.isa as nisa

    @nki.jit
    def generation(dummy: Any, expected: Any) -> Any:
        assert nisa.get_nc_version() == expected, "wrong generation"
        return dummy

    dummy = np.zeros((1, 1), np.float32)
    _compile(frontend, generation, dummy=dummy, expected=nisa.nc_version.gen3, target="trn2")
    _compile(frontend, generation, dummy=dummy, expected=nisa.nc_version.gen4, target="trn3")
    with pytest.raises(Exception, match="wrong generation"):
        _compile(frontend, generation, dummy=dummy, expected=nisa.nc_version.gen4, target="trn2")


def test_the_parser_front_end_specialises_as_nki_06(frontend: Any) -> None:
    import nki
    import nki.isa as nisa
    import nki.language as nl

    @nki.jit
    def scalar(src: Any) -> Any:
        nisa.scalar_load(src)  # NkiScalar APIs: tracer front end only (nki-0.7.md §2.1)
        out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.load(src))
        return out

    src = np.ones((1, 1), np.int32)
    _compile(frontend, scalar, "TracerFrontend", src=src)
    with pytest.raises(Exception, match="tracer front end"):
        _compile(frontend, scalar, "ParserFrontend", src=src)
