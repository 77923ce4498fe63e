"""``nki.compiler`` (NKI 0.7): configuration objects import, are recorded, and the result says what was ignored."""

import numpy as np
from nki_studio.sim import api
from nki_studio.sim.nki_compiler import AddressRotation, CompileConfig, SpecializationConfig, ignored_options

KERNEL = """
import nki
import nki.language as nl
from nki.compiler import AddressRotation, CompileConfig, SpecializationConfig
import nki.compiler as ncomp


@nki.jit(
    compile_config=CompileConfig(barrier_check=True, address_rotation=AddressRotation.DISABLE),
    specialization_config=ncomp.SpecializationConfig(allow_nested_config_override=True),
)
def scaled(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.multiply(nl.load(a), 3.0))
    return out


@nki.jit
def plain(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.load(a))
    return out
"""


def test_configs_keep_what_was_set_and_leave_the_rest_unset():
    config = CompileConfig(prefetch_auto=True)
    assert config.prefetch_auto is True and config.dead_code_elim is ...
    assert config.given() == {"prefetch_auto": True}
    assert SpecializationConfig().given() == {}
    assert {m.name for m in AddressRotation} == {"AUTO", "ENABLE", "DISABLE"}


def test_every_option_set_is_reported_with_a_reason(monkeypatch):
    monkeypatch.delenv("NKI_PREFETCH_RING_SIZE", raising=False)
    notes = ignored_options(
        {"compile_config": CompileConfig(dead_code_elim=False, opt_level=2), "specialization_config": None}
    )
    assert notes[0].startswith("CompileConfig.dead_code_elim=False: ignored (")
    assert notes[1] == "CompileConfig.opt_level=2: not an NKI 0.7 option; ignored"
    monkeypatch.setenv("NKI_PREFETCH_RING_SIZE", "4")
    assert "mutually exclusive" in ignored_options({"compile_config": CompileConfig(prefetch_auto=True)})[-1]
    assert ignored_options({}) == []


def test_a_configured_kernel_runs_and_the_result_lists_the_ignored_options(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    x = np.arange(128 * 4, dtype=np.float32).reshape(128, 4)
    result = api.simulate(str(path), x, kernel_name="scaled")
    assert np.array_equal(result.output, 3 * x)
    assert [n.split(": ")[0] for n in result.report.ignored_config] == [
        "CompileConfig.address_rotation=AddressRotation.DISABLE",
        "CompileConfig.barrier_check=True",
        "SpecializationConfig.allow_nested_config_override=True",
    ]
    assert api.simulate(str(path), x, kernel_name="plain").report.ignored_config == []


def test_drop_in_launches_warn_at_the_kernel_and_record_the_ignored_options(tmp_path):
    import sys

    import pytest
    from nki_studio.sim import dropin, launch_log

    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    module = dropin.load_module(str(path))
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    decorator_line = KERNEL.splitlines().index("@nki.jit(") + 1  # a decorated def's first line
    with dropin.installed(), launch_log.recording() as notes:
        with pytest.warns(launch_log.IgnoredConfigWarning) as caught:
            out = module.scaled(x)
            module.scaled[1](x)  # kernel[lnc] and nki.simulate go the same way
            sys.modules["nki"].simulate(module.scaled)(x)
        plain = module.plain(x)  # nothing ignored: no warning, no note
    np.testing.assert_array_equal(out, 3 * x)
    np.testing.assert_array_equal(plain, x)
    messages = {str(w.message) for w in caught}
    assert any("CompileConfig.barrier_check=True: ignored" in m for m in messages)
    assert any("SpecializationConfig.allow_nested_config_override=True: ignored" in m for m in messages)
    assert {(w.filename, w.lineno) for w in caught} == {(str(path), decorator_line)}
    assert len(caught) == 3 * 3 and len(notes) == 3
    assert all(n.kernel == "scaled" and len(n.ignored_config) == 3 for n in notes)
    assert "  config: CompileConfig.address_rotation=AddressRotation.DISABLE: ignored" in notes[0].text()


def test_a_blanket_error_filter_does_not_fail_the_kernel_but_a_named_one_does(tmp_path):
    import warnings

    import pytest
    from nki_studio.sim import dropin, launch_log

    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    module = dropin.load_module(str(path))
    x = np.ones((2, 4), np.float32)
    with dropin.installed():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("error")  # pytest's `filterwarnings = error`
            np.testing.assert_array_equal(module.scaled(x), 3 * x)
        assert len(caught) == 3 and all(w.category is launch_log.IgnoredConfigWarning for w in caught)
        with warnings.catch_warnings():
            warnings.simplefilter("error", launch_log.IgnoredConfigWarning)
            with pytest.raises(launch_log.IgnoredConfigWarning, match="address_rotation"):
                module.scaled(x)
