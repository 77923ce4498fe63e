"""Bounds + investigations benchmark (issue 15 parts 3-4). Prints figures; asserts nothing.

What bounds and investigations cost a profile load (``profile.analyze`` computes them when first read):
``compute_bounds`` and ``investigate`` on
1. a generated N-instruction Parquet profile (``fixturegen.big_timeline``, default 1,000,000 instructions over
   a 300-line kernel, Tensor rows with FLOPs, K/M/N and some transposes), read once with ``load_profile``; compared with ``compute_metrics`` on the same profile
   in the same process (so machine load affects both alike);
2. the estimated profile of a purpose-built matmul kernel (``tests/profile/perf_kernels.py``), simulated once.
Best of ``--repeat`` warm runs each. Usage: ``.venv/bin/python benchmarks/bounds_bench.py [--instructions N]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from timing import best_of

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "profile"))


def _with_tensor_columns(tl: Any) -> Any:
    """The timeline with Tensor-engine FLOPs, a transpose every 8th matmul and K/M/N operands text on the
    Tensor rows, so the Tensor-engine investigations have every row to examine."""
    import dataclasses

    import numpy as np

    te = np.array([e == "Tensor" for e in tl.engine])
    k = np.where(np.arange(tl.n) % 3 == 0, 64, 128)
    kinds = ["TRANSPOSE" if t and i % 8 == 0 else "REGULAR" if t else None for i, t in enumerate(te)]
    # one distinct text per row, like the runtime's addresses (the K*M format is inferred, bounds.md §3.3)
    operands = [
        f"K*M={k[i]}*128 N=512 src=0x{i:x}" if t else f"data=0x{i:x} dst=0xffff{i:08x}"
        for i, t in enumerate(te)
    ]
    flops = np.where(te, 2 * k * 128 * 512, 0).astype(np.int64)
    return dataclasses.replace(tl, instr_flops=flops, instr_kind=kinds, instr_operands=operands)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instructions", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    import fixturegen
    import perf_kernels
    from fixturewriters import write_parquet
    from nki_studio.estimate.profile import estimate_profile
    from nki_studio.model.targets import Target
    from nki_studio.profile.bounds import compute_bounds
    from nki_studio.profile.investigations import investigate
    from nki_studio.profile.metrics import compute_metrics
    from nki_studio.profile.readers.detect import load_profile

    with tempfile.TemporaryDirectory() as tmp:
        path = write_parquet(
            _with_tensor_columns(fixturegen.big_timeline(args.instructions)), Path(tmp) / "big"
        )
        prof = load_profile(str(path))
        metrics = best_of(lambda: compute_metrics(prof), args.repeat)[0]
        bounds = best_of(lambda: compute_bounds(prof), args.repeat)[0]
        invs = best_of(lambda: investigate(prof), args.repeat)[0]
        print(
            f"{args.instructions:,} instructions, {len(prof.dma):,} DMA rows (Parquet fixture), best of {args.repeat}:"
        )
        print(f"  compute_metrics {metrics:.3f} s · compute_bounds {bounds:.3f} s · investigate {invs:.3f} s")
        print(f"  bounds + investigations add {(bounds + invs) / metrics:.0%} to the metrics time")

        # analyze_profile computes them when first read (ProfileReport.bounds / .investigations): what a caller
        # that shows only the heat pays, against one that reads them, alternating (same process, same load)
        from nki_studio.profile.analyze import analyze_profile

        def _full() -> None:
            report = analyze_profile(prof)
            _ = report.bounds, report.investigations

        lazy = full = float("inf")
        for _ in range(args.repeat):
            lazy = min(lazy, best_of(lambda: analyze_profile(prof), 1)[0])
            full = min(full, best_of(_full, 1)[0])
        print(
            f"  analyze_profile {lazy:.3f} s without reading bounds/investigations, {full:.3f} s reading them "
            f"({full / lazy:.2f}x)"
        )

        # What reading the detail columns costs load_profile: the same file read with and without them, in
        # alternation (same process, same load), operands text distinct per row as in real profiles.
        from nki_studio.profile.readers import tables

        full = tables.COLUMNS["Instruction"]
        lean = tuple(c for c in full if c not in ("adjusted_flops", "tensor_instruction_type", "operands"))
        times: dict[str, float] = {"without": float("inf"), "with": float("inf")}
        for _ in range(args.repeat):
            for label, cols in (("without", lean), ("with", full)):
                tables.COLUMNS["Instruction"] = cols
                times[label] = min(times[label], best_of(lambda: load_profile(str(path)), 1)[0])
        tables.COLUMNS["Instruction"] = full
        print(
            f"  load_profile without the detail columns {times['without']:.3f} s · with them {times['with']:.3f} s "
            "(adjusted_flops, tensor_instruction_type, operands: K/M/N of the Tensor rows)"
        )

        _, trace = perf_kernels.trace("reload", tmp)
        est = estimate_profile(trace, Target())
        b = best_of(lambda: compute_bounds(est), args.repeat)[0]
        i = best_of(lambda: investigate(est), args.repeat)[0]
        print(
            f"estimated profile of perf_kernels 'reload' ({len(est.instructions):,} instructions, "
            f"{len(est.dma):,} DMA): compute_bounds {b * 1e3:.1f} ms · investigate {i * 1e3:.1f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
