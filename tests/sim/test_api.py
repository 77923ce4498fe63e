"""nki_studio.sim.simulate end to end: drop-in imports, errors at the kernel line, bounds, LNC=2, backends."""

import sys
import textwrap
import threading
import types
from pathlib import Path

import numpy as np
import pytest
from nki_studio.nkilint.api import check_python_subset
from nki_studio.sim import api, dropin
from nki_studio.sim.errors import (
    HardwareLimitError,
    KernelError,
    NotImplementedInSimulator,
    ResourceLimitError,
    SimulationError,
    SimulationTimeout,
)

KERNELS = """
import nki
import nki.language as nl


@nki.jit
def add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in range(a.shape[0] // 128):
        x = nl.load(a[i * 128:(i + 1) * 128, :])
        y = nl.load(b[nl.ds(i * 128, 128), :])
        nl.store(out[i * 128:(i + 1) * 128, :], nl.add(x, y))
    return out


@nki.jit
def crash(a):
    x = nl.load(a)
    return helper(x)


def helper(x):
    return 1 / 0


@nki.jit
def legacy(a):
    return nl.mgrid[0:128, 0:4]


@nki.jit
def spin(a):
    while True:
        pass


@nki.jit
def hog(a):
    keep = []
    while True:
        keep.append(nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.shared_hbm))


@nki.jit
def split(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    rows = a.shape[0] // nl.num_programs(0)
    r0 = nl.program_id(0) * rows
    for t in range(rows // 128):
        r = r0 + t * 128
        nl.store(out[r:r + 128, :], nl.add(nl.load(a[r:r + 128, :]), nl.load(b[r:r + 128, :])))
    return out


@nki.jit
def inplace(a):
    nl.store(a[0:128, :], nl.multiply(nl.load(a[0:128, :]), 2.0))
    nl.device_print("first row:", a[0:1, 0:2])
    return a


@nki.jit
def too_wide(a):
    return nl.load(a)


@nki.jit
def loops(a):
    out = nl.ndarray((128, 4), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 4), dtype=nl.float32)

    def body(i):
        nl.store(out[:, nl.ds(i, 1)], nl.add(acc[:, 0:1], 1.0))

    nl.fori_loop(0, 4, body)
    return out
"""


@pytest.fixture
def kfile(tmp_path):
    path = tmp_path / "kernels.py"
    path.write_text(KERNELS)
    return str(path)


def line_of(path, text):
    return next(i for i, line in enumerate(open(path).read().splitlines(), 1) if text in line)


def test_simulate_a_file_returns_outputs_report_and_trace(kfile):
    a = np.random.default_rng(0).random((256, 32), dtype=np.float32)
    b = np.ones((256, 32), np.float32)
    res = api.simulate(kfile, a, b, kernel_name="add", trace=True, target="trn2")
    assert np.array_equal(res.output, a + b) and res.backend == "embedded"
    assert res.report.target == "trn2" and res.report.instructions == 8
    loads = [
        e for e in res.trace if e.op == "nisa.dma_copy" and e.bytes_written.get("sbuf")
    ]  # nl.load lowers to it
    assert loads[0].file == kfile and loads[0].line == line_of(kfile, "x = nl.load")
    assert loads[0].bytes_read == {"hbm": 128 * 32 * 4} and loads[0].bytes_written == {"sbuf": 128 * 32 * 4}
    assert res.report.sbuf.peak_bytes > 0 and res.peak_json()["sbuf"]["live"][0]["file"] == kfile


def test_kernel_exception_surfaces_with_the_kernel_line_and_helper_stack(kfile):
    with pytest.raises(KernelError) as info:
        api.simulate(kfile, np.zeros((128, 4), np.float32), kernel_name="crash")
    err = info.value
    assert err.file == kfile and err.line == line_of(kfile, "return 1 / 0")
    assert "ZeroDivisionError" in str(err)
    assert err.stack and err.stack[-1].endswith(f":{line_of(kfile, 'return helper(x)')}:crash")


def test_hardware_limit_names_the_line(kfile):
    with pytest.raises(HardwareLimitError) as info:
        api.simulate(kfile, np.zeros((256, 4), np.float32), kernel_name="too_wide")
    assert info.value.line == line_of(kfile, "return nl.load(a)") and "exceeds maximum 128" in str(info.value)


def test_unimplemented_api_is_named(kfile):
    with pytest.raises(NotImplementedInSimulator) as info:
        api.simulate(kfile, np.zeros((128, 4), np.float32), kernel_name="legacy")
    assert str(info.value).startswith(
        f"not implemented in the embedded simulator: nl.mgrid ({kfile}:{line_of(kfile, 'nl.mgrid')})"
    )


def test_deadline_stops_an_infinite_loop_and_leaves_nothing_behind(kfile):
    threads = threading.active_count()
    with pytest.raises(SimulationTimeout) as info:
        api.simulate(kfile, np.zeros((128, 4), np.float32), kernel_name="spin", deadline_s=0.3)
    spin_loop = line_of(kfile, "def spin")
    assert info.value.file == kfile and info.value.line in (spin_loop + 1, spin_loop + 2)  # `while` or `pass`
    assert threading.active_count() == threads
    assert "nki" not in sys.modules and "nki.language" not in sys.modules


def test_deadline_also_stops_lnc2_threads(kfile):
    threads = threading.active_count()
    with pytest.raises(SimulationTimeout):
        api.simulate(kfile, np.zeros((128, 4), np.float32), kernel_name="spin", deadline_s=0.3, lnc=2)
    assert threading.active_count() == threads


def test_allocation_budget_stops_unbounded_allocation(kfile):
    with pytest.raises(ResourceLimitError, match="allocation budget exceeded"):
        api.simulate(kfile, np.zeros((128, 4), np.float32), kernel_name="hog", allocation_budget=64 << 20)


def test_instruction_budget_and_checkin_hook(kfile):
    a = np.zeros((512, 4), np.float32)
    with pytest.raises(ResourceLimitError, match="instruction budget"):
        api.simulate(kfile, a, a, kernel_name="add", max_instructions=5)
    calls = []
    api.simulate(kfile, a, a, kernel_name="add", checkin=lambda: calls.append(1))
    assert len(calls) == 16


def test_lnc2_runs_two_cores_sharing_the_output(kfile):
    a = np.arange(512 * 8, dtype=np.float32).reshape(512, 8)
    res = api.simulate(kfile, a, a, kernel_name="split", lnc=2, trace=True)
    assert np.array_equal(res.output, 2 * a) and res.report.lnc == 2
    assert {e.core for e in res.trace} == {0, 1}


def test_launch_bracket_sets_lnc(kfile):
    module = api.load_kernel_module(kfile)
    a = np.ones((256, 8), np.float32)
    res = api.simulate(module.split[2], a, a)
    assert res.report.lnc == 2 and np.array_equal(res.output, 2 * a)


def test_inputs_written_by_the_kernel_are_reported_and_updated(kfile, capsys):
    a = np.ones((128, 4), np.float32)
    res = api.simulate(kfile, a, kernel_name="inplace")
    assert res.report.inputs_modified == [0] and (a == 2).all()
    assert res.report.device_prints == ["first row: [[2. 2.]]"]
    assert "first row:" in capsys.readouterr().out


def test_float32_mode_does_not_round_bfloat16(kfile):
    import ml_dtypes

    a = np.full((128, 4), 1.0, ml_dtypes.bfloat16)
    b = np.full((128, 4), 2**-9, ml_dtypes.bfloat16)
    precise = api.simulate(kfile, a, b, kernel_name="add").output
    loose = api.simulate(kfile, a, b, kernel_name="add", precise=False).output
    assert precise.dtype == ml_dtypes.bfloat16 and (precise.astype(np.float32) == 1.0).all()
    assert (loose == np.float32(1 + 2**-9)).all()


def test_fori_loop_runs_its_body_per_index(kfile):
    out = api.simulate(kfile, np.zeros((128, 4), np.float32), kernel_name="loops").output
    assert (out == 1.0).all()


def test_missing_kernel_name_lists_candidates(kfile):
    with pytest.raises(SimulationError, match="several"):
        api.simulate(kfile, np.zeros((128, 4), np.float32))


def test_dropin_restores_a_preexisting_nki_module(kfile):
    sentinel = types.ModuleType("nki")
    sys.modules["nki"] = sentinel
    try:
        a = np.ones((128, 4), np.float32)
        api.simulate(kfile, a, a, kernel_name="add")
        assert sys.modules["nki"] is sentinel
    finally:
        del sys.modules["nki"]


def test_nki_simulate_inside_a_script_uses_the_embedded_backend(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(
        textwrap.dedent("""
        import numpy as np
        import nki
        import nki.language as nl

        @nki.jit
        def double(a):
            out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
            nl.store(out, nl.multiply(nl.load(a), 2.0))
            return out

        RESULT = nki.simulate(double)(np.ones((128, 2), np.float32))
        DIRECT = double(np.ones((128, 2), np.float32))
    """)
    )
    module = dropin.load_module(str(script))
    assert (module.RESULT == 2).all() and (module.DIRECT == 2).all()


def test_python_subset_mode_rejects_constructs_the_target_does_not_compile(tmp_path):
    path = tmp_path / "subset.py"
    path.write_text(
        "import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef k(a):\n    try:\n        n = 1\n"
        "    except Exception:\n        n = 2\n    return a\n"
    )
    a = np.zeros((128, 4), np.float32)
    with pytest.raises(SimulationError, match="NKI101") as info:
        api.simulate(str(path), a, nki_version="0.6", python_subset=check_python_subset)
    assert info.value.line == 7
    api.simulate(
        str(path), a, nki_version="0.7", python_subset=check_python_subset
    )  # NKI 0.7 traces Python: accepted
    api.simulate(str(path), a, nki_version="0.6")  # the mode is optional


def test_official_backend_uses_the_sdk_when_importable(tmp_path, monkeypatch, kfile):
    # Test double of the Neuron SDK's ``nki`` package following the documented API (simulator.md §1-§3):
    # the real SDK cannot be installed here. It records the call and the environment it ran under.
    pkg = tmp_path / "sdk" / "nki"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        textwrap.dedent("""
        import os
        CALLS = []

        class _Kernel:
            def __init__(self, f, lnc=1):
                self.f, self.lnc = f, lnc
            def __getitem__(self, lnc):
                return _Kernel(self.f, lnc)
            def __call__(self, *args):
                raise RuntimeError("needs a Neuron device")

        def jit(f=None, **kw):
            return _Kernel(f) if f is not None else (lambda g: _Kernel(g))

        def simulate(kernel):
            def run(*args):
                CALLS.append((kernel.f.__name__, kernel.lnc, os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE"),
                              os.environ.get("NKI_PRECISE_FP")))
                return args[0] + args[1]
            return run
    """)
    )
    (tmp_path / "sdk" / "nki" / "language.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "sdk"))
    monkeypatch.delitem(sys.modules, "nki", raising=False)
    from nki_studio.sim import official

    assert official.available()
    a = np.ones((2, 2), np.float32)
    res = api.simulate(kfile, a, a, kernel_name="add", backend="auto", target="trn1", lnc=2)
    assert res.backend == "official" and (res.output == 2).all()
    sdk = sys.modules["nki"]
    assert sdk.CALLS == [("add", 2, "trn1", "1")]
    assert res.report.sbuf is None and res.peak_json() is None
    # Plain pops: monkeypatch.delitem would put the fake SDK back into sys.modules at teardown, and later
    # tests would then see an "installed" Neuron SDK.
    sys.modules.pop("nki", None)
    sys.modules.pop("nki.language", None)


def test_official_backend_requested_without_sdk_is_a_clear_error(kfile, monkeypatch):
    monkeypatch.setattr("nki_studio.sim.official._real_nki", lambda: None)
    with pytest.raises(SimulationError, match="not importable"):
        api.simulate(kfile, np.ones((128, 4), np.float32), kernel_name="too_wide", backend="official")


def test_legacy_and_library_import_forms_resolve(tmp_path):
    path = tmp_path / "forms.py"
    path.write_text(
        textwrap.dedent("""
        import neuronxcc.nki.typing as nt
        import nki
        import nki.dtype as nkd
        from neuronxcc import nki as legacy_nki
        from nki.isa import constants, oob_mode
        import nki.language as nl

        FORMS = (nkd.float8_e4m3, legacy_nki.jit, constants.oob_mode is oob_mode, nt.tensor[1, 2])

        @nki.jit
        def k(a: nt.tensor):
            out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
            nl.store(out, nl.load(a))
            return out
    """)
    )
    module = api.load_kernel_module(str(path))
    assert module.FORMS[2] is True
    assert (api.simulate(module.k, np.ones((2, 2), np.float32)).output == 1).all()
    assert "neuronxcc" not in sys.modules and "nki.dtype" not in sys.modules


def test_collective_ranks_get_their_own_inputs():
    example = str(Path(__file__).resolve().parents[2] / "examples" / "collective_allreduce.py")
    xs = [np.full((128, 512), float(r + 1), np.float32) for r in range(3)]
    res = api.simulate(example, xs[0], 3, ranks=3, rank_args=[(x, 3) for x in xs])
    assert (res.output == 6).all() and all((o == 6).all() for o in res.rank_outputs)
    with pytest.raises(SimulationError, match="ranks"):
        api.simulate(example, xs[0], 3)  # the group names 3 ranks, the run has 1


def test_strict_mode_stops_at_the_first_read_of_unwritten_memory(tmp_path):
    path = tmp_path / "partial.py"
    path.write_text(
        textwrap.dedent("""
        import nki
        import nki.isa as nisa
        import nki.language as nl

        @nki.jit
        def partial(a):
            out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
            t = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=t[:, 0:4], src=a[:, 0:4])
            nisa.dma_copy(dst=out, src=t)
            return out
    """)
    )
    a = np.ones((128, 8), np.float32)
    loose = api.simulate(str(path), a)
    assert np.isnan(loose.output[:, 4:]).all() and (loose.output[:, :4] == 1).all()  # official NaN sentinels
    with pytest.raises(SimulationError, match="never written") as info:
        api.simulate(str(path), a, strict=True)
    assert info.value.line == 11


def test_python_subset_mode_checks_against_the_inferred_version(tmp_path):
    path = tmp_path / "subset06.py"
    path.write_text(
        "import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef k(a):\n    for _ in nl.dynamic_range(1):\n"
        "        pass\n    try:\n        n = 1\n    except Exception:\n        n = 2\n    return a\n"
    )
    a = np.zeros((128, 4), np.float32)
    with pytest.raises(SimulationError, match=r"NKI 0\.6 does not compile.*NKI101") as info:
        api.simulate(str(path), a, python_subset=check_python_subset)  # 0.6 inferred from nl.dynamic_range
    assert info.value.line == 9


ACTIVATIONS = """import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def acts(a):
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    e = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=e, op=nl.exp, data=t)
    s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation_reduce(dst=e, op=nl.square, data=e, reduce_op=nl.add, reduce_res=s)
    h = nl.tanh(e)
    y = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=y, src=h)
    nisa.dma_copy(dst=out, src=y)
    return out
"""


def test_the_trace_records_each_activations_function(tmp_path):
    """The estimate's activation-table loads need the function of every activation; nothing else has one."""
    path = tmp_path / "acts.py"
    path.write_text(ACTIVATIONS)
    res = api.simulate(str(path), np.zeros((128, 64), np.float32), trace=True)
    assert [(e.op, e.engine, e.function) for e in res.trace if e.function] == [
        ("nisa.activation", "scalar", "exp"),
        ("nisa.activation_reduce", "scalar", "square"),
        ("nl.tanh", "scalar", "tanh"),
    ]
    assert {e.function for e in res.trace if e.engine != "scalar"} == {""}
