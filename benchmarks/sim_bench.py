"""Embedded simulator speed and memory against vectorised NumPy doing the same maths, in one process.

Cases (issue 3): residual-add RMSNorm [1024, 4096] bf16, and a tiled bf16 matmul 1024 x 1024 x 1024.
Prints, per case, simulated time / NumPy time (target <= 3x) and, measured in a fresh child process,
peak RSS growth during the simulation / the arrays' own footprint (inputs + outputs; target <= 2x), after a
warm-up run on small slices so that one-time costs (lazy imports, BLAS buffers) are not counted.

Run: .venv/bin/python benchmarks/sim_bench.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import ml_dtypes
import nki_studio.sim.isa as nisa
import nki_studio.sim.language as nl
import numpy as np
from nki_studio.sim import simulate
from targets import goal, verdict
from timing import best_of

BF16 = ml_dtypes.bfloat16
EPS = 1e-6


def rmsnorm_kernel(x: Any, residual: Any, weight: Any) -> Any:
    """out = (x + residual) / sqrt(mean((x + residual)^2) + eps) * weight, 128 rows per tile."""
    n, d = x.shape
    p = nl.tile_size.pmax
    out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
    w = nl.ndarray((p, d), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=w, src=weight.broadcast(0, p))
    for i in range(n // p):
        xt = nl.ndarray((p, d), dtype=x.dtype, buffer=nl.sbuf)
        rt = nl.ndarray((p, d), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=xt, src=x[i * p : (i + 1) * p, :])
        nisa.dma_copy(dst=rt, src=residual[i * p : (i + 1) * p, :])
        h = nl.ndarray((p, d), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=h, data1=xt, data2=rt, op=nl.add)
        sq = nl.ndarray((p, d), dtype=nl.float32, buffer=nl.sbuf)
        ss = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(
            dst=sq,
            op=nl.square,
            data=h,
            reduce_op=nl.add,
            reduce_res=ss,
            reduce_cmd=nisa.reduce_cmd.reset_reduce,
        )
        rstd = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=rstd, data=ss, op0=nl.multiply, operand0=1.0 / d, op1=nl.add, operand1=EPS)
        nisa.activation(dst=rstd, op=nl.rsqrt, data=rstd)
        nisa.tensor_scalar(dst=h, data=h, op0=nl.multiply, operand0=rstd)
        yt = nl.ndarray((p, d), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=yt, data1=h, data2=w, op=nl.multiply)
        nisa.dma_copy(dst=out[i * p : (i + 1) * p, :], src=yt)
    return out


def rmsnorm_numpy(x: np.ndarray, residual: np.ndarray, weight: np.ndarray) -> np.ndarray:
    h = x.astype(np.float32) + residual.astype(np.float32)
    ms = np.mean(h * h, axis=1, keepdims=True, dtype=np.float32)
    return (h * (1.0 / np.sqrt(ms + np.float32(EPS))) * weight.astype(np.float32)).astype(x.dtype)


def matmul_kernel(lhs_t: Any, rhs: Any) -> Any:
    """out[M, N] = lhs_t[K, M].T @ rhs[K, N]: 128 x 512 PSUM tiles accumulated over 128-deep K tiles."""
    k, m = lhs_t.shape
    _, n = rhs.shape
    tk, tm, tn = 128, 128, 512
    out = nl.ndarray((m, n), dtype=lhs_t.dtype, buffer=nl.shared_hbm)
    for mi in range(m // tm):
        a = nl.ndarray((tk, k // tk, tm), dtype=lhs_t.dtype, buffer=nl.sbuf)
        for ki in range(k // tk):
            nisa.dma_copy(dst=a[:, ki, :], src=lhs_t[ki * tk : (ki + 1) * tk, mi * tm : (mi + 1) * tm])
        for ni in range(n // tn):
            acc = nl.ndarray((tm, tn), dtype=nl.float32, buffer=nl.psum)
            for ki in range(k // tk):
                b = nl.ndarray((tk, tn), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=b, src=rhs[ki * tk : (ki + 1) * tk, ni * tn : (ni + 1) * tn])
                nisa.nc_matmul(dst=acc, stationary=a[:, ki, :], moving=b, accumulate=ki > 0)
            res = nl.ndarray((tm, tn), dtype=lhs_t.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res, src=acc)
            nisa.dma_copy(dst=out[mi * tm : (mi + 1) * tm, ni * tn : (ni + 1) * tn], src=res)
    return out


def matmul_numpy(lhs_t: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    return (lhs_t.astype(np.float32).T @ rhs.astype(np.float32)).astype(lhs_t.dtype)


def _inputs(case: str) -> tuple[Callable[..., Any], Callable[..., Any], tuple[np.ndarray, ...]]:
    rng = np.random.default_rng(0)
    if case == "rmsnorm":
        args = (
            rng.standard_normal((1024, 4096)).astype(BF16),
            rng.standard_normal((1024, 4096)).astype(BF16),
            rng.standard_normal((1, 4096)).astype(BF16),
        )
        return rmsnorm_kernel, rmsnorm_numpy, args
    args = (rng.standard_normal((1024, 1024)).astype(BF16), rng.standard_normal((1024, 1024)).astype(BF16))
    return matmul_kernel, matmul_numpy, args


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _reset_peak_rss() -> None:
    """Reset VmHWM to the current RSS (Linux: writing 5 to /proc/self/clear_refs), so the peak below is the
    simulation's, not that of generating the inputs."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _peak_rss_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child(case: str) -> None:
    """Measure peak RSS growth of one simulation in this (fresh) process and print it as JSON."""
    kernel, _, args = _inputs(case)
    # Warm-up on small slices: one-time costs (lazy imports, BLAS thread buffers) are not data overhead.
    simulate(kernel, *(np.ascontiguousarray(a[:128, :512]) for a in args))
    base = _rss_bytes()
    _reset_peak_rss()
    result = simulate(kernel, *args)
    peak = _peak_rss_bytes()
    footprint = sum(a.nbytes for a in args) + result.output.nbytes
    print(json.dumps({"growth": max(peak - base, 0), "footprint": footprint}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", choices=("rmsnorm", "matmul"), help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child:
        child(opts.child)
        return 0
    print(
        f"{'case':<34} {'numpy s':>9} {'sim s':>9} {'ratio':>7} {'<=3x':>7}   {'RSS growth/footprint':>22}"
        f"   {'trace on/off':>12}"
    )
    for case, label in (
        ("rmsnorm", "residual-add RMSNorm [1024,4096] bf16"),
        ("matmul", "tiled matmul 1024^3 bf16"),
    ):
        kernel, reference, args = _inputs(case)
        t_np, expected = best_of(lambda reference=reference, args=args: reference(*args), opts.repeat)
        t_sim, result = best_of(lambda kernel=kernel, args=args: simulate(kernel, *args), opts.repeat)
        t_traced, _ = best_of(
            lambda kernel=kernel, args=args: simulate(kernel, *args, trace=True), opts.repeat
        )
        err = float(np.max(np.abs(result.output.astype(np.float32) - expected.astype(np.float32))))
        proc = subprocess.run(
            [sys.executable, __file__, "--child", case], capture_output=True, text=True, check=True
        )
        mem = json.loads(proc.stdout.strip().splitlines()[-1])
        rss_ratio = mem["growth"] / mem["footprint"]
        print(
            f"{label:<34} {t_np:9.4f} {t_sim:9.4f} {t_sim / t_np:6.2f}x {verdict(t_sim / t_np, 3):>7}   "
            f"{mem['growth'] / 2**20:7.1f} MiB / {mem['footprint'] / 2**20:5.1f} MiB = {rss_ratio:4.2f}x "
            f"{goal(rss_ratio, 2, 'x')}"
            f"   {t_traced / t_sim:11.2f}x   max|sim-numpy|={err:.3g}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
