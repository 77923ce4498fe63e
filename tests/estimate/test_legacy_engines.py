"""The trn1 engine of legacy ``nl.copy`` and element-wise ``nl.*`` (issue 27, calibration gap 4): the Scalar
engine for a copy and for arithmetic on one tile (with a number or a per-partition column), the Vector engine for
two full tiles and for bitwise operators; later generations keep the Vector engine."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
from nki_studio.sim.api import simulate

KERNEL = textwrap.dedent(
    """
    import {package} as nki
    import {package}.language as nl


    @nki.jit
    def kernel(x):
        out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(x)
        sq = nl.square(t)
        col = nl.sum(sq, axis=[1])
        scaled = nl.multiply(t, col)
        both = nl.add(scaled, t)
        copied = nl.copy(both)
        nl.store(out, value=copied)
        return out
    """
)


def _engines(tmp_path: Path, package: str, generation: str) -> dict[str, str]:
    path = tmp_path / "k.py"
    path.write_text(KERNEL.format(package=package), encoding="utf-8")
    x = np.ones((128, 512), np.float32)
    trace = simulate(str(path), x, target=generation, trace=True).trace
    assert trace is not None
    return {e.op: e.engine for e in trace if e.engine != "dma"}


def test_trn1_runs_legacy_copy_and_one_tile_elementwise_on_scalar(tmp_path: Path) -> None:
    assert _engines(tmp_path, "neuronxcc.nki", "trn1") == {
        "nl.square": "scalar",
        "nl.sum": "vector",
        "nl.multiply": "scalar",  # a tile times a per-partition column
        "nl.add": "vector",  # two full tiles
        "nisa.activation": "scalar",  # nl.copy as activation(op=copy)
    }


def test_trn2_keeps_elementwise_and_copy_on_vector(tmp_path: Path) -> None:
    assert _engines(tmp_path, "nki", "trn2") == {
        "nl.square": "vector",
        "nl.sum": "vector",
        "nl.multiply": "vector",
        "nl.add": "vector",
        "nisa.tensor_copy": "vector",
    }
