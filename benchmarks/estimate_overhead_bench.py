"""What the estimated timeline adds to a simulate-on-save of the examples (issue 15 target: <= 20 %).

Each spec'd kernel under examples/ runs through the worker's own job function (``nki_studio.verify.job.run``,
what a warm worker executes on save: inputs, simulation, reference, oracle, cost report, estimate) in this one
process, a warm-up run first (imports, caches), then ``--repeat`` runs, each followed back to back by the estimate
alone on the trace the job recorded. Figures are CPU seconds of this process (``time.process_time``: the machine
is shared, wall time would count other processes' turns): A = the job without its estimate stage, B = the
estimate stage, C = the part of B that is the bounds and investigations of the estimated profile (timed again on
their own); the medians are printed. A save's round trip also pays the language server and the worker
hand-over, so the ratio to the whole save is smaller than the one printed here.

Prints figures; asserts nothing. Run: ``.venv/bin/python benchmarks/estimate_overhead_bench.py [--repeat 3]``
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from nki_studio.estimate.profile import estimate_profile
from nki_studio.estimate.section import estimate_section
from nki_studio.model.targets import Generation, Target
from nki_studio.profile.bounds import compute_bounds
from nki_studio.profile.investigations import investigate
from nki_studio.sim.trace import TraceEvent, read_jsonl
from nki_studio.verify.job import Job, run
from nki_studio.verify.spec import resolve
from targets import goal

ROOT = Path(__file__).resolve().parents[1]


def _jobs(folder: Path) -> list[tuple[str, Job]]:
    jobs = []
    for path in sorted((ROOT / "examples").glob("*.py")):
        res = resolve(path.read_text(), str(path), None)
        if res.spec is not None:
            trace = str(folder / f"{path.stem}.jsonl")
            jobs.append((path.name, Job(path=str(path), spec=res.spec.to_json(), trace_path=trace)))
    return jobs


def _as_recorded(events: Iterable[TraceEvent]) -> Sequence[TraceEvent]:
    """The trace as the simulator holds it: columns when the code has them (``sim.trace_columns``)."""
    try:
        from nki_studio.sim.trace_columns import CompactTrace
    except ImportError:  # code from before the columnar trace
        return list(events)
    return CompactTrace.of(events)


def _ignore(_message: dict[str, Any]) -> None:
    pass


def main(argv: list[str] | None = None) -> int:
    """Print the per-example and overall ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    total_a = total_b = total_c = 0.0
    with tempfile.TemporaryDirectory() as folder:
        for name, job in _jobs(Path(folder)):
            result = run(job, _ignore)  # warm-up; also writes the trace
            with open(str(job.trace_path), encoding="utf-8") as stream:
                trace = _as_recorded(read_jsonl(stream))
            generation = Generation(job.target)
            a_runs, b_runs, c_runs = [], [], []
            for _ in range(args.repeat):
                c0 = time.process_time()
                result = run(job, _ignore)
                c1 = time.process_time()
                estimate_section(trace, generation)
                c2 = time.process_time()
                a_runs.append(max(c1 - c0 - (c2 - c1), 1e-9))
                b_runs.append(c2 - c1)
                profile = estimate_profile(trace, Target(generation))
                c3 = time.process_time()
                compute_bounds(profile, generation.value)
                investigate(profile, generation.value)
                c_runs.append(time.process_time() - c3)
            a, b, c = statistics.median(a_runs), statistics.median(b_runs), statistics.median(c_runs)
            total_a += a
            total_b += b
            total_c += c
            n = result.get("instructions", 0)
            print(
                f"  {name:28} {result['status']:7} {n:6} instr: job without estimate {a * 1e3:7.1f} ms CPU, "
                f"estimate {b * 1e3:6.1f} ms CPU (bounds + investigations {c * 1e3:4.1f}) -> +{b / a:5.1%}"
            )
    if total_a:
        print(
            f"all examples: the estimate adds {total_b / total_a:.1%} to the job time "
            f"{goal(total_b / total_a * 100, 20, '%')}, of which "
            f"bounds and investigations {total_c / total_a:.1%}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
