"""Profile fixtures: every format written at test time from the generators in ``fixturegen``."""

from __future__ import annotations

import sys
from pathlib import Path

# The helpers next to this file (fixturegen, fixturewriters, corrupt) must import under any pytest import mode.
sys.path.insert(0, str(Path(__file__).parent))

import fixturegen
import pytest

# A small kernel whose lines drive the synthetic timeline (line number → source text).
KERNEL_SOURCE = """import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def add_act_kernel(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        x = nl.load(a[i])
        y = nl.load(b[i])
        z = nl.add(x, y)
        w = nisa.activation(op=nl.exp, data=z)
        s = nl.sum(w, axis=1)
        nl.store(out[i], value=w)
    return out
"""


@pytest.fixture(scope="session")
def kernel_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ws") / "kernels" / "add_act.py"
    path.parent.mkdir(parents=True)
    path.write_text(KERNEL_SOURCE, encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def kernel_timeline(kernel_file: Path) -> fixturegen.Timeline:
    return fixturegen.kernel_file_timeline(kernel_file, n_instructions=600, seed=11, iterations=True)


@pytest.fixture(scope="session")
def kernel_files(
    tmp_path_factory: pytest.TempPathFactory, kernel_timeline: fixturegen.Timeline
) -> dict[str, Path]:
    return fixturegen.write_all(kernel_timeline, tmp_path_factory.mktemp("kernel_profile"), "add_act")


@pytest.fixture(scope="session")
def walkthrough_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return fixturegen.write_all(
        fixturegen.walkthrough_timeline(), tmp_path_factory.mktemp("walkthrough"), "rmsnorm"
    )
