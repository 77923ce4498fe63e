"""NKI version inference from a kernel's own code (``model.version_signals``, ``sim.versioning``)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
from nki_studio.model.targets import NkiVersion
from nki_studio.model.version_signals import version_signals
from nki_studio.sim import simulate


def test_signals_follow_import_aliases_and_report_the_first_use():
    old, new = version_signals(
        "from nki.language import dynamic_range\nimport nki.isa as I\n\n"
        "def k(r):\n    for i in dynamic_range(r):\n        I.scalar_load(r)\n"
    )
    assert old is not None and (old.version, old.api, old.line) == (NkiVersion(0, 6), "nl.dynamic_range", 5)
    assert new is not None and (new.api, new.line) == ("nisa.scalar_load", 6)
    assert version_signals("def k(:\n") == (None, None)
    assert version_signals("import nki.language as nl\nx = nl.fori_loop\n") == (None, None)


MIXED = """\
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def mixed(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=x)
    return out


def legacy_helper(n):
    return [i for i in nl.dynamic_range(n)]


def new_helper(t):
    return nisa.scalar_load(t)
"""


def test_conflicting_signals_keep_the_default_and_say_so(tmp_path: Path):
    path = tmp_path / "mixed.py"
    path.write_text(textwrap.dedent(MIXED))
    result = simulate(path, np.ones((2, 2), np.float32))
    assert result.report.nki_version == "0.7"
    assert "kept although the code uses the 0.6-only nl.dynamic_range" in result.warnings[0]


def test_code_without_signals_runs_with_the_default_and_no_note(tmp_path: Path):
    path = tmp_path / "plain.py"
    path.write_text(textwrap.dedent(MIXED.split("\n\ndef legacy_helper")[0]) + "\n")
    result = simulate(path, np.ones((2, 2), np.float32))
    assert result.report.nki_version == "0.7" and not result.warnings


def test_the_custom_frontend_environment_names_0_6(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "plain.py"
    path.write_text(textwrap.dedent(MIXED.split("\n\ndef legacy_helper")[0]) + "\n")
    monkeypatch.setenv("NKI_COMPILER_FRONTEND", "custom")
    result = simulate(path, np.ones((2, 2), np.float32))
    assert result.report.nki_version == "0.6" and "NKI_COMPILER_FRONTEND" in result.warnings[0]


LEGACY_ONLY = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def old_copy(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.load(a))
    return out
"""

# The legacy kernel beside a current one: the current API under other names, the same copy kernel.
LEGACY_AND_CURRENT = (
    "import nki as current\nimport nki.language as cnl\n"
    + LEGACY_ONLY
    + "\n\n@current.jit\ndef new_copy(a):\n"
    + "    out = cnl.ndarray(a.shape, dtype=a.dtype, buffer=cnl.shared_hbm)\n"
    + "    cnl.store(out, cnl.load(a))\n    return out\n"
)


def test_legacy_imports_mean_legacy_semantics_per_kernel(tmp_path: Path):
    only_legacy = tmp_path / "old.py"
    only_legacy.write_text(LEGACY_ONLY)
    result = simulate(only_legacy, np.ones((4, 4), np.float32))
    assert result.report.nki_version == "legacy" and (result.output == 1).all()
    assert (
        "inferred from `import neuronxcc.nki as nki` at" in result.warnings[0] and ":1 " in result.warnings[0]
    )
    both = tmp_path / "both.py"
    both.write_text(LEGACY_AND_CURRENT)
    assert simulate(both, np.ones((4, 4), np.float32), kernel_name="old_copy").report.nki_version == "legacy"
    assert simulate(both, np.ones((4, 4), np.float32), kernel_name="new_copy").report.nki_version == "0.7"
    named = simulate(only_legacy, np.ones((4, 4), np.float32), nki_version="0.7")
    assert named.report.nki_version == "0.7" and not named.warnings
