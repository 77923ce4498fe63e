"""Embedded simulator per-instruction and per-view overhead: many small instructions on small tiles, the
shape of nki-library's test kernels (token-generation kernels issue thousands of instructions on tiles of a
few hundred elements each, so the simulator's fixed cost per call dominates, not NumPy's arithmetic).

Cases, each one simulation timed best of ``--repeat`` in this process:

* ``instructions``: a loop of DMA, Vector, Scalar and copy instructions on [128, 64] fp32/bf16 tiles;
  printed as microseconds per instruction.
* ``views``: slicing, ``nl.ds`` and ``.ap()`` views of an SBUF tile, each used by one copy; printed as
  microseconds per (view + copy) minus the copy alone is not attempted: the figure is per pair.
* ``matmul``: small PE-array matmuls into PSUM and PSUM-to-SBUF copies, per instruction.

Run: .venv/bin/python benchmarks/sim_overhead_bench.py [--repeat N] [--iterations N]
Times are this process's CPU time (``time.process_time``), which other load on a shared machine disturbs far
less than wall time does; still compare runs made back to back.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from collections.abc import Callable
from typing import Any

import ml_dtypes
import nki_studio.sim.isa as nisa
import nki_studio.sim.language as nl
import numpy as np
from nki_studio.sim import simulate
from timing import best_of

P, F = 128, 64


def instructions_kernel(x: Any, iterations: int) -> Any:
    """``iterations`` rounds of 7 instructions each; returns the last round's tile."""
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    acc = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    for i in range(iterations):
        t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[i % 2 * P : (i % 2 + 1) * P, :])
        h = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=h, data1=t, data2=t, op=nl.add)
        nisa.tensor_scalar(dst=h, data=h, op0=nl.multiply, operand0=0.5, op1=nl.add, operand1=1.0)
        nisa.activation(dst=h, op=nl.exp, data=h, reduce_op=nl.add, reduce_res=acc)
        nisa.tensor_reduce(dst=acc, op=nl.maximum, data=h, axis=1)
        y = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_copy(dst=y, src=h)
        nisa.dma_copy(dst=out, src=y)
    return out


def views_kernel(x: Any, iterations: int) -> Any:
    """``iterations`` rounds of 4 (view, copy) pairs over one SBUF tile."""
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[0:P, :])
    y = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    for i in range(iterations):
        j = i % 4 * 16
        nisa.tensor_copy(dst=y[:, j : j + 16], src=t[:, j : j + 16])
        nisa.tensor_copy(dst=y[:, nl.ds(j, 16)], src=t[:, nl.ds(j, 16)])
        nisa.tensor_copy(dst=y[0:64, j : j + 16], src=t[64:128, j : j + 16])
        nisa.tensor_copy(dst=y[:, j : j + 16], src=t.ap([[F, P], [1, 16]], offset=j))
    nisa.dma_copy(dst=out, src=y)
    return out


def matmul_kernel(x: Any, iterations: int) -> Any:
    """``iterations`` rounds of a [128 x 128] x [128 x 64] matmul into PSUM and its copy out."""
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    a = nl.ndarray((P, P), dtype=x.dtype, buffer=nl.sbuf)
    nisa.memset(dst=a, value=0.25)
    b = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=b, src=x[0:P, :])
    y = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    for _ in range(iterations):
        acc = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=acc, stationary=a, moving=b)
        nisa.tensor_copy(dst=y, src=acc)
    nisa.dma_copy(dst=out, src=y)
    return out


CASES: dict[str, tuple[Callable[..., Any], int, str]] = {
    "instructions": (instructions_kernel, 7, "us/instruction"),
    "views": (views_kernel, 4, "us/(view+copy)"),
    "matmul": (matmul_kernel, 2, "us/instruction"),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--only", choices=sorted(CASES), help="run one case")
    opts = parser.parse_args()
    x = np.random.default_rng(0).standard_normal((2 * P, F)).astype(ml_dtypes.bfloat16)
    n = opts.iterations
    print(f"{'case':<14} {'iterations':>10} {'cpu s':>9} {'per op':>10}")
    for name, (kernel, per_round, unit) in CASES.items():
        if opts.only and name != opts.only:
            continue
        simulate(kernel, x, 2)  # warm-up: lazy imports and the version scan of this file are one-time costs
        seconds, _ = best_of(functools.partial(simulate, kernel, x, n), opts.repeat, time.process_time)
        print(f"{name:<14} {n:>10} {seconds:9.3f} {1e6 * seconds / (n * per_round):8.1f} {unit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
