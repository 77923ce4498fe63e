"""``benchmarks/launch_inputs_plugin.py`` as a script runner: a script's launches and its kernels' siblings'."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from migrate_corpus import _preferred  # noqa: E402

KERNELS = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def small(a, b):
    return a


@nki.jit
def tiled(a, b):
    return a


@nki.jit
def other(a):
    return a
"""

# Checks only the first kernel of the family, picking its shapes by the kernel, then fails (no torch here):
# the runner goes on with the next statement.
SCRIPT = """\
import numpy as np
from kernels import small, tiled, other


def check(kernel):
    rows = 128 if kernel is small else 256
    kernel(np.zeros((rows, 4), np.float32), np.zeros((rows, 4), np.float16))


check(small)
import torch
other(np.zeros((2, 2), np.int32))
"""


def test_a_scripts_launches_and_its_kernels_siblings_are_recorded(tmp_path: Path) -> None:
    (tmp_path / "kernels.py").write_text(KERNELS, encoding="utf-8")
    (tmp_path / "script.py").write_text(textwrap.dedent(SCRIPT), encoding="utf-8")
    log = tmp_path / "inputs.jsonl"
    env = {**os.environ, "NKI_STUDIO_LAUNCH_INPUTS": str(log), "PYTHONPATH": str(tmp_path)}
    runner = ROOT / "benchmarks" / "launch_inputs_plugin.py"
    subprocess.run([sys.executable, str(runner), "script.py"], cwd=tmp_path, env=env, check=True, timeout=120)
    launches = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [(x["kernel"], x["spec"]) for x in launches] == [
        ("small", "a=float32[128,4] b=float16[128,4]"),
        ("other", "a=int32[2,2]"),
        (
            "tiled",
            "a=float32[256,4] b=float16[256,4]",
        ),  # small's sibling, after the script; other: other parameters
    ]
    assert {Path(x["file"]).name for x in launches} == {"kernels.py"}


def test_a_legacy_grid_launch_records_its_extents(tmp_path: Path) -> None:
    # flash attention's unit tests launch baremetal(flash_fwd)[b, h](...): the grid is part of the inputs
    (tmp_path / "kernels.py").write_text(KERNELS, encoding="utf-8")
    script = "import numpy as np\nfrom kernels import other\n\nother[2, 3](np.zeros((2, 2), np.int32))\n"
    (tmp_path / "script.py").write_text(script + "other(np.zeros((4, 2), np.int32))\n", encoding="utf-8")
    log = tmp_path / "inputs.jsonl"
    env = {**os.environ, "NKI_STUDIO_LAUNCH_INPUTS": str(log), "PYTHONPATH": str(tmp_path)}
    runner = ROOT / "benchmarks" / "launch_inputs_plugin.py"
    subprocess.run([sys.executable, str(runner), "script.py"], cwd=tmp_path, env=env, check=True, timeout=120)
    launches = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [(x["spec"], x["grid"]) for x in launches] == [("a=int32[2,2]", [2, 3]), ("a=int32[4,2]", [])]


# A unit test importing its reference from a package this machine lacks (the corpus's scipy.special.softmax).
UNIT_TEST = """\
import numpy as np
from kernels import small
from missing_reference_package.special import softmax


def test_small():
    a = np.zeros((128, 4), np.float32)
    assert np.allclose(small(a, a.astype(np.float16)), softmax(a))
"""


def _recorded(tmp_path: Path, unit_test: str) -> list[tuple[str, str]]:
    """(kernel, spec) of each launch ``unit_test`` (a test file beside KERNELS) makes under the plugin."""
    (tmp_path / "kernels.py").write_text(KERNELS, encoding="utf-8")
    (tmp_path / "test_small.py").write_text(unit_test, encoding="utf-8")
    log = tmp_path / "inputs.jsonl"
    pythonpath = os.pathsep.join([str(tmp_path), str(ROOT / "benchmarks")])
    env = {**os.environ, "NKI_STUDIO_LAUNCH_INPUTS": str(log), "PYTHONPATH": pythonpath}
    pytest = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "nki_studio.pytest_plugin",
    ]
    subprocess.run(
        [*pytest, "-p", "launch_inputs_plugin", "test_small.py"], cwd=tmp_path, env=env, timeout=120
    )
    return [(x["kernel"], x["spec"]) for x in _launches(log)]


def _launches(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def test_a_unit_tests_missing_reference_module_does_not_hide_its_launch(tmp_path: Path) -> None:
    assert _recorded(tmp_path, UNIT_TEST) == [("small", "a=float32[128,4] b=float16[128,4]")]


# A unit test that launches only on a trn2 host, read from the DMI product name (the corpus's double_row_matmul).
TRN2_ONLY = """\
import numpy as np
from kernels import small


def test_small():
    try:
        with open('/sys/devices/virtual/dmi/id/product_name', 'r') as f:
            host = f.readline().split('.')[0]
    except IOError:
        host = ""
    if host != "trn2":
        return
    a = np.zeros((128, 4), np.float32)
    small(a, a)
"""


def test_a_unit_test_launching_on_trn2_only_records_its_launch(tmp_path: Path) -> None:
    assert _recorded(tmp_path, TRN2_ONLY) == [("small", "a=float32[128,4] b=float32[128,4]")]


# nki-samples' flash attention test: parametrised from six heads on three programs down to one head on one, launched
# with seed=None
CASES = """\
import numpy as np
import pytest
from kernels import small


@pytest.mark.parametrize("rows, grid", [(128, 3), (64, 3), (128, 1), (64, 1), (128, 1)])
def test_small(rows, grid):
    a = np.zeros((rows, 4), np.float32)
    small[grid](a, None)
"""


def test_a_tests_smallest_case_gives_the_inputs_and_is_named(tmp_path: Path) -> None:
    (tmp_path / "kernels.py").write_text(KERNELS, encoding="utf-8")
    _recorded(tmp_path, CASES)
    launches = _launches(tmp_path / "inputs.jsonl")
    assert [(x["spec"], x["grid"]) for x in launches] == [
        ("a=float32[128,4] b=none", [3]),
        ("a=float32[64,4] b=none", [3]),
        ("a=float32[128,4] b=none", [1]),
        ("a=float32[64,4] b=none", [1]),
        ("a=float32[128,4] b=none", [1]),
    ]
    script = {"kernel": "small", "spec": "a=float32[8,4] b=none", "grid": [], "test": ""}
    recorded = [("k.py::small", script), *(("k.py::small", x) for x in launches), ("k.py::other", script)]
    chosen = _preferred(recorded)  # a test's launch over a script's, the smallest, the first of equals
    assert chosen["k.py::small"]["test"] == "test_small.py::test_small[64-1]"
    assert chosen["k.py::other"] is script  # no test launches it
