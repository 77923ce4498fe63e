"""Estimated-timeline benchmark: scheduling and profile building on a generated trace of a tiled kernel.

The trace imitates what the simulator records for a tiled kernel: per tile two HBM loads (slices of two big
inputs), element-wise Vector/Scalar work, an accumulation chain of matmuls into PSUM, a PSUM->SBUF copy and a
store into a big output, with fresh SBUF tiles per iteration (as ``nl.ndarray`` in a loop allocates them).
Target (issue 15): scheduling <= 1 s per 100k instructions; the estimated profile of 1M instructions <= 5 s
and <= 1 GB peak RSS.

Each figure is measured in a fresh process (peak RSS is per process). ``--baseline REV`` measures the same on
the code of git revision REV too (its ``server`` tree extracted to a temporary directory), alternating the
two, and prints the ratios: the machine's load then affects both alike. The trace is built as the simulator
builds it: columns (``sim.trace_columns``) when the code has them, else a list of ``TraceEvent`` objects.

Prints figures; asserts nothing. Run: ``.venv/bin/python benchmarks/estimate_bench.py [--baseline 931ca20]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from nki_studio.sim.trace import Operand, TraceEvent
from revisions import server_at
from targets import goal

ROOT = Path(__file__).resolve().parents[1]
_PER_TILE = 12  # instructions per generated tile


def generated_events(n: int) -> Iterator[TraceEvent]:
    """About ``n`` trace events of a tiled kernel (see the module docstring), one at a time."""
    storage = 3  # 0, 1: inputs, 2: output
    seq = 0

    def sbuf(role: str, sid: int, nbytes: int = 4096, buffer: str = "sbuf") -> Operand:
        return Operand(role, (128, nbytes // 2), "bfloat16", buffer, sid, 0, 128, 0, nbytes, nbytes)

    def hbm(role: str, sid: int, tile: int, name: str) -> Operand:
        b0 = tile * 128 * 4096
        return Operand(role, (128, 2048), "bfloat16", "hbm", sid, 0, 0, b0, b0 + 128 * 4096, 4096, name)

    def event(op: str, engine: str, *ops: Operand, line: int) -> TraceEvent:
        nonlocal seq
        moved = 128 * 4096
        reads = {o.buffer: moved for o in ops if o.role != "dst"}
        writes = {o.buffer: moved for o in ops if o.role == "dst"}
        seq += 1
        return TraceEvent(seq - 1, op, engine, "kernel.py", line, (), ops, 128, 2048, reads, writes, 0, 0)

    tile = 0
    while seq + _PER_TILE <= max(n, _PER_TILE):
        a, b, h, y, z, acc, out = (storage + k for k in range(7))
        storage += 7
        yield event("nisa.dma_copy", "dma", sbuf("dst", a), hbm("src", 0, tile, "arg0"), line=10)
        yield event("nisa.dma_copy", "dma", sbuf("dst", b), hbm("src", 1, tile, "arg1"), line=11)
        yield event(
            "nisa.tensor_tensor", "vector", sbuf("dst", h), sbuf("data1", a), sbuf("data2", b), line=12
        )
        yield event("nisa.activation", "scalar", sbuf("dst", y), sbuf("data", h), line=13)
        for k in range(4):
            yield event(
                "nisa.nc_matmul",
                "tensor",
                sbuf("dst", acc, 2048, "psum"),
                sbuf("stationary", y, 256),
                sbuf("moving", h, 1024),
                line=14 + k % 2,
            )
        yield event("nisa.tensor_copy", "vector", sbuf("dst", z), sbuf("src", acc, 2048, "psum"), line=16)
        yield event("nisa.tensor_scalar", "vector", sbuf("dst", out), sbuf("data", z), line=17)
        yield event("nisa.activation", "scalar", sbuf("dst", y), sbuf("data", out), line=18)
        yield event("nisa.dma_copy", "dma", hbm("dst", 2, tile, "out"), sbuf("src", out), line=19)
        tile += 1


def generated_trace(n: int) -> list[TraceEvent]:
    """About ``n`` trace events of a tiled kernel, as a list of records."""
    return list(generated_events(n))


def _trace(n: int) -> Any:
    """The generated trace as the code under test's simulator would hold it."""
    try:
        from nki_studio.sim.trace_columns import TraceBuilder
    except ImportError:  # code from before the columnar trace
        return generated_trace(n)
    builder = TraceBuilder()
    builder.extend(generated_events(n))
    return builder.build()


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _worker(what: str, n: int) -> dict[str, float]:
    """One measurement in this process (run in a fresh one by ``_run``)."""
    from nki_studio.estimate.profile import profile_from_schedule
    from nki_studio.estimate.schedule import schedule
    from nki_studio.model.targets import Target

    try:  # what the simulation job process does before it simulates (code before it had the import-time form)
        from nki_studio.estimate.heap import prefer_heap_for_large_arrays

        prefer_heap_for_large_arrays()
    except ImportError:
        pass
    target = Target()
    trace = _trace(n)
    out: dict[str, float] = {"instructions": len(trace), "trace_mib": _peak_mib()}
    c0 = time.process_time()
    sched = schedule(trace, target.limits)
    out["schedule_s"] = time.process_time() - c0
    out["total_us"] = sched.total_ns / 1e3
    if what == "profile":
        c1 = time.process_time()
        profile = profile_from_schedule(sched, target)
        out["profile_s"] = time.process_time() - c1
        out["rows"] = len(profile.instructions)
    out["peak_mib"] = _peak_mib()
    return out


def _run(root: str | None, what: str, n: int) -> dict[str, float]:
    """``_worker`` in a fresh interpreter, on the code under ``root`` (None: this tree)."""
    env = dict(os.environ)
    if root is not None:  # ahead of the editable install of this tree
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    code = f"import sys, json; sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); import estimate_bench as b; "
    code += f"print(json.dumps(b._worker({what!r}, {n})))"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    """Print scheduling and profile-building times and peak RSS (with ``--baseline``: before and after)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--instructions", type=int, default=100_000)
    parser.add_argument("--profile-instructions", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3, help="scheduling runs per variant (best counts)")
    parser.add_argument("--baseline", metavar="REV", help="also measure git revision REV and print ratios")
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        variants: dict[str, str | None] = {"after": None}
        if args.baseline:
            variants = {"before": server_at(args.baseline, tmp), **variants}
        best: dict[str, dict[str, float]] = {}
        for _ in range(args.repeat):  # alternate, so load changes affect both alike
            for label, root in variants.items():
                got = _run(root, "schedule", args.instructions)
                if label not in best or got["schedule_s"] < best[label]["schedule_s"]:
                    best[label] = got
        for label, got in best.items():
            per = 1e5 / got["instructions"]
            print(
                f"{label:6} schedule: {got['instructions']:.0f} instructions in {got['schedule_s']:.2f} s CPU = "
                f"{got['schedule_s'] * per:.2f} s per 100k {goal(got['schedule_s'] * per, 1, 's')}, best of {args.repeat}; estimated "
                f"kernel time {got['total_us']:.1f} us"
            )
        if "before" in best:
            print(
                f"       schedule after/before {best['after']['schedule_s'] / best['before']['schedule_s']:.2f}"
            )
        if args.profile_instructions:
            prof = {
                label: _run(root, "profile", args.profile_instructions) for label, root in variants.items()
            }
            for label, got in prof.items():
                total = got["schedule_s"] + got["profile_s"]
                print(
                    f"{label:6} estimated profile: {got['instructions']:.0f} instructions, {got['rows']:.0f} profile "
                    f"rows in {total:.2f} s CPU (schedule {got['schedule_s']:.2f} + profile {got['profile_s']:.2f}) "
                    f"{goal(total, 5, 's')}, peak RSS {got['peak_mib']:.0f} MiB {goal(got['peak_mib'], 1024, 'MiB')}, of which the trace "
                    f"alone {got['trace_mib']:.0f} MiB"
                )
            if "before" in prof:
                a, b = prof["after"], prof["before"]
                print(
                    f"       profile time after/before {(a['schedule_s'] + a['profile_s']) / (b['schedule_s'] + b['profile_s']):.2f}"
                    f", peak RSS after/before {a['peak_mib'] / b['peak_mib']:.2f}"
                )
    print(f"load average {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
