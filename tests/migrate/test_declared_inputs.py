"""The corpus benchmark's declared inputs (``benchmarks/declared_inputs.py``): a kernel no test or script launches,
taking an options object of a class its file defines, is proven on the inputs declared for it, and its verdict
names their source."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import migrate_corpus  # noqa: E402
from declared_inputs import DECLARED, Declared  # noqa: E402
from nki_studio.service.settings import Settings  # noqa: E402

# our own legacy kernel with an options dataclass (the shape of nki-samples' rmsnorm_quant_kernel's arguments)
KERNEL = """\
from dataclasses import dataclass

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@dataclass(frozen=True)
class Options:
    factor: float

    def doubled(self) -> float:
        return 2 * self.factor


@nki.jit
def scaled(x, options):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:128, 0:64]
    nl.store(out[i_p, i_f], value=nl.load(x[i_p, i_f]) * options.doubled())
    return out
"""

INPUTS = """\
import numpy as np


def scaled(module, seed):
    return np.random.default_rng(seed).standard_normal((128, 64)).astype(np.float32), module.Options(1.5)
"""


def test_a_declared_kernel_is_proven_on_its_declared_inputs_and_says_their_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "src" / "pkg"
    folder.mkdir(parents=True)
    (folder / "kernels.py").write_text(KERNEL, encoding="utf-8")
    (tmp_path / "src" / "own_inputs.py").write_text(
        INPUTS, encoding="utf-8"
    )  # importable from src, a source root
    rel = "src/pkg/kernels.py"
    declared = Declared("inputs=own_inputs:scaled", "our own test's declaration")
    monkeypatch.setattr(migrate_corpus, "DECLARED", {**DECLARED, f"{rel}::scaled": declared})
    [verdict] = migrate_corpus._file_verdicts(
        folder / "kernels.py", rel, Settings(trusted_workspace=True), {}, {}
    )
    assert verdict.status == "proven", verdict.detail
    assert verdict.detail == (
        "scaled: equivalent on 1 inputs (inputs: declared in benchmarks/declared_inputs.py from our own test's "
        "declaration)"
    )
