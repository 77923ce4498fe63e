"""Before/after identity of the estimated timeline and profile: schedules and estimated profiles of many traces,
computed by this tree and by git revision REV (its ``server`` tree extracted to a temporary directory), must be
equal to the last bit.

Traces: the simulator's own trace of every spec'd example under examples/ (recorded once, by this tree's
simulator), the reference tests' random traces of overlapping footprints and of tiles on two cores
(``tests/estimate``), and the benchmark's generated tiled kernel at three sizes, each on every generation. Every
start and end, and every column of the estimated profile, is compared by digest; the differing ones are named.

Used when a change to ``nki_studio.estimate`` must not change results (a speed-up). Prints what differs and
exits 1 when anything does. Run: ``.venv/bin/python benchmarks/estimate_identity_check.py --baseline main``
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from revisions import server_at

ROOT = Path(__file__).resolve().parents[1]
GENERATIONS = ("trn1", "trn2", "trn3")


def _digest(value: Any) -> Any:
    """A comparable summary of a profile part: arrays by dtype, shape and a hash of their bytes."""
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value)
        return f"{data.dtype}{data.shape}:{hashlib.sha256(data.tobytes()).hexdigest()[:16]}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _digest(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_digest(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _digest(v) for k, v in value.items()}
    return repr(value)


def _flatten(d: Any, prefix: str = "") -> dict[str, str]:
    if isinstance(d, dict):
        return {k: v for key, sub in d.items() for k, v in _flatten(sub, f"{prefix}.{key}").items()}
    if isinstance(d, list):
        return {k: v for i, sub in enumerate(d) for k, v in _flatten(sub, f"{prefix}[{i}]").items()}
    return {prefix: str(d)}


def _worker(folder: str) -> None:
    """Digests of every trace file in ``folder`` on every generation, as one JSON line (run in a fresh process
    on the code under test)."""
    from nki_studio.estimate.profile import profile_from_schedule
    from nki_studio.estimate.schedule import schedule
    from nki_studio.model.targets import Generation, Target
    from nki_studio.sim.trace import read_jsonl
    from nki_studio.sim.trace_columns import CompactTrace

    out: dict[str, Any] = {}
    for path in sorted(Path(folder).glob("*.jsonl")):
        with open(path, encoding="utf-8") as stream:
            trace = CompactTrace.of(read_jsonl(stream))
        for gen in GENERATIONS:
            target = Target(Generation(gen))
            sched = schedule(trace, target.limits)
            profile = profile_from_schedule(sched, target)
            out[f"{path.stem}@{gen}"] = _flatten(
                {"start": _digest(sched.start), "end": _digest(sched.end), "profile": _digest(profile)}
            )
    print(json.dumps(out))


def _record_traces(folder: Path) -> int:
    """Write the traces (see the module docstring) into ``folder`` as JSONL; returns how many."""
    sys.path.insert(0, str(ROOT / "tests" / "estimate"))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from estimate_bench import generated_trace
    from estimate_overhead_bench import _ignore, _jobs
    from nki_studio.sim.trace import TraceEvent, write_jsonl
    from nki_studio.verify.job import run
    from test_compact_trace import _tile_trace
    from test_schedule_reference import _random_trace

    def write(name: str, events: list[TraceEvent]) -> None:
        with open(folder / f"{name}.jsonl", "w", encoding="utf-8") as stream:
            write_jsonl(events, stream)

    count = 0
    for _name, job in _jobs(folder):  # each writes its trace into ``folder``
        run(job, _ignore)
        count += 1
    for seed in range(20):
        write(f"random{seed}", _random_trace(seed, 300 if seed < 15 else 3000))
        write(f"tiles{seed}", _tile_trace(seed, 400 if seed < 15 else 4000))
    for n in (600, 12_000, 120_000):
        write(f"generated{n}", generated_trace(n))
    return count + 43


def main(argv: list[str] | None = None) -> int:
    """Compare this tree with ``--baseline``; print the differences."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--baseline", metavar="REV", required=True)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        traces = Path(tmp) / "traces"
        traces.mkdir()
        count = _record_traces(traces)
        base = server_at(args.baseline, Path(tmp) / "base")
        got = {}
        for label, root in (("before", base), ("after", None)):
            env = dict(os.environ)
            if root is not None:
                env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
            code = f"import sys; sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); import estimate_identity_check as c; "
            code += f"c._worker({str(traces)!r})"
            done = subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
            )
            got[label] = json.loads(done.stdout.strip().splitlines()[-1])
    before, after = got["before"], got["after"]
    differ = [
        f"{run}{part}"
        for run in sorted(before.keys() | after.keys())
        for part in sorted(before.get(run, {}).keys() | after.get(run, {}).keys())
        if before.get(run, {}).get(part) != after.get(run, {}).get(part)
    ]
    print(f"{count} traces x {len(GENERATIONS)} generations = {len(before)} schedules and profiles compared")
    for d in differ:
        print(f"  differs: {d}")
    print("identical" if not differ else f"{len(differ)} differences")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
