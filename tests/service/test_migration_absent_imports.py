"""``service.migration`` on a legacy kernel file importing modules not installed here (nki-samples' softmax
kernel imports torch_xla, its SD attention tutorial scipy, for code outside the kernel): the proof binds
stand-ins for them when the kernel does not use them, says so, and still fails a kernel that does."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from nki_studio.service.absent_imports import stand_in
from nki_studio.service.migration import migrate
from nki_studio.service.settings import Settings

TRUSTED = Settings(trusted_workspace=True)
ABSENT = "nki_studio_absent_module_for_tests"  # installed nowhere

KERNEL = f"""\
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import {ABSENT}.core.model as xm
from {ABSENT}.special import (
    softmax,
)


# nki-studio: simulate x=float32[128,64]
@nki.jit
def row_softmax(x):
    # out = softmax(x) over each row, with the legacy index tiles
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    t = nl.load(x[i_p, i_f])
    e = nl.exp(nl.subtract(t, nl.max(t, axis=[1], keepdims=True)))
    nl.store(out[i_p, i_f], value=nl.divide(e, nl.sum(e, axis=[1], keepdims=True)))
    return out


def reference(x):
    return softmax(x, axis=-1)
"""


def test_the_absent_module_is_really_absent() -> None:
    assert importlib.util.find_spec(ABSENT) is None


def test_imports_the_kernel_does_not_use_become_stand_ins_and_the_kernel_is_proven(tmp_path: Path) -> None:
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL, encoding="utf-8")
    result = migrate(str(path), TRUSTED)
    assert result["status"] == "proven", result["message"]
    (proof,) = result["proofs"]
    assert proof["equivalent"] and proof["inputs"] == 3
    assert f"stand-ins for {ABSENT}: not installed here, unused by the kernel" in proof["message"]
    # the written migration keeps the imports as they were: only the proof's copies stand in
    assert f"import {ABSENT}.core.model as xm" in result["migrated"]


def test_stand_ins_keep_line_numbers_and_present_imports() -> None:
    text, absent = stand_in(KERNEL, "kernel.py", "row_softmax")
    assert absent == (ABSENT,)
    assert len(text.splitlines()) == len(KERNEL.splitlines())
    lines = text.splitlines()
    assert lines[0] == "import numpy as np" and lines[1] == "import neuronxcc.nki as nki"
    assert lines[3].endswith(f"xm = _nki_studio_absent.Absent('{ABSENT}.core.model')")
    assert lines[4].endswith(f"softmax = _nki_studio_absent.Absent('{ABSENT}.special.softmax')")


def test_a_kernel_using_an_absent_module_keeps_its_import(tmp_path: Path) -> None:
    uses = KERNEL.replace("    return out\n", "    xm.mark_step()\n    return out\n", 1)
    assert stand_in(uses, "kernel.py", "row_softmax") == (uses, ())
    path = tmp_path / "kernel.py"
    path.write_text(uses, encoding="utf-8")
    result = migrate(str(path), TRUSTED)
    (proof,) = result["proofs"]
    assert not proof["equivalent"]
    assert f"No module named '{ABSENT}'" in proof["message"]


def test_a_stand_in_used_anyway_fails_naming_the_module() -> None:
    from nki_studio.sim.absent import Absent
    from nki_studio.sim.errors import SimulationError

    with pytest.raises(SimulationError, match=f"{ABSENT} is not installed here"):
        Absent(f"{ABSENT}.special").softmax([1.0])
