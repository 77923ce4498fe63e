"""Estimated-timeline benchmark: scheduling and profile building on a generated trace of a tiled kernel.

The trace imitates what the simulator records for a tiled kernel: per tile two HBM loads (slices of two big
inputs), element-wise Vector/Scalar work, an accumulation chain of matmuls into PSUM, a PSUM->SBUF copy and a
store into a big output, with fresh SBUF tiles per iteration (as ``nl.ndarray`` in a loop allocates them).
Target (issue 15): scheduling <= 1 s per 100k instructions; the estimated profile of 1M instructions <= 5 s
and <= 1 GB peak RSS.

Prints figures; asserts nothing. Run: ``.venv/bin/python benchmarks/estimate_bench.py [--instructions 100000]``
"""

from __future__ import annotations

import argparse
import resource
import time

from nki_studio.estimate.profile import profile_from_schedule
from nki_studio.estimate.schedule import schedule
from nki_studio.model.targets import Target
from nki_studio.sim.trace import Operand, TraceEvent

_PER_TILE = 12  # instructions per generated tile


def generated_trace(n: int) -> list[TraceEvent]:
    """About ``n`` trace events of a tiled kernel (see the module docstring)."""
    events: list[TraceEvent] = []
    storage = 3  # 0, 1: inputs, 2: output

    def sbuf(role: str, sid: int, nbytes: int = 4096, buffer: str = "sbuf") -> Operand:
        return Operand(role, (128, nbytes // 2), "bfloat16", buffer, sid, 0, 128, 0, nbytes, nbytes)

    def hbm(role: str, sid: int, tile: int, name: str) -> Operand:
        b0 = tile * 128 * 4096
        return Operand(role, (128, 2048), "bfloat16", "hbm", sid, 0, 0, b0, b0 + 128 * 4096, 4096, name)

    def add(op: str, engine: str, *ops: Operand, line: int) -> None:
        moved = 128 * 4096
        reads = {o.buffer: moved for o in ops if o.role != "dst"}
        writes = {o.buffer: moved for o in ops if o.role == "dst"}
        events.append(
            TraceEvent(len(events), op, engine, "kernel.py", line, (), ops, 128, 2048, reads, writes, 0, 0)
        )

    tile = 0
    while len(events) + _PER_TILE <= max(n, _PER_TILE):
        a, b, h, y, z, acc, out = (storage + k for k in range(7))
        storage += 7
        add("nisa.dma_copy", "dma", sbuf("dst", a), hbm("src", 0, tile, "arg0"), line=10)
        add("nisa.dma_copy", "dma", sbuf("dst", b), hbm("src", 1, tile, "arg1"), line=11)
        add("nisa.tensor_tensor", "vector", sbuf("dst", h), sbuf("data1", a), sbuf("data2", b), line=12)
        add("nisa.activation", "scalar", sbuf("dst", y), sbuf("data", h), line=13)
        for k in range(4):
            add(
                "nisa.nc_matmul",
                "tensor",
                sbuf("dst", acc, 2048, "psum"),
                sbuf("stationary", y, 256),
                sbuf("moving", h, 1024),
                line=14 + k % 2,
            )
        add("nisa.tensor_copy", "vector", sbuf("dst", z), sbuf("src", acc, 2048, "psum"), line=16)
        add("nisa.tensor_scalar", "vector", sbuf("dst", out), sbuf("data", z), line=17)
        add("nisa.activation", "scalar", sbuf("dst", y), sbuf("data", out), line=18)
        add("nisa.dma_copy", "dma", hbm("dst", 2, tile, "out"), sbuf("src", out), line=19)
        tile += 1
    return events


def main(argv: list[str] | None = None) -> int:
    """Print scheduling and profile-building times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instructions", type=int, default=100_000)
    parser.add_argument("--profile-instructions", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    target = Target()
    trace = generated_trace(args.instructions)
    w0, c0 = time.perf_counter(), time.process_time()
    sched = schedule(trace, target.limits)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    per = 1e5 / len(trace)
    print(
        f"schedule: {len(trace)} instructions in {cpu:.2f} s CPU ({wall:.2f} s wall) = {cpu * per:.2f} s CPU per "
        f"100k (target <= 1 s); estimated kernel time {sched.total_ns / 1e3:.1f} us"
    )
    if args.profile_instructions:
        del trace, sched
        big = generated_trace(args.profile_instructions)
        trace_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        w0, c0 = time.perf_counter(), time.process_time()
        profile = profile_from_schedule(schedule(big, target.limits), target)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"estimated profile: {len(big)} instructions, {len(profile.instructions)} profile rows in {cpu:.2f} s "
            f"CPU ({wall:.2f} s wall; target <= 5 s), peak RSS {rss:.0f} MiB (target <= 1 GB), of which the "
            f"trace's TraceEvent objects alone {trace_rss:.0f} MiB"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
