"""``nki-studio tune`` figures: candidates per minute on the local pool by worker count (wall-time scaling),
the same search on a Ray cluster (``--ray ADDRESS``: start one as docs/tune.md says), and the cache hit rate
of a rerun. Prints figures, asserts nothing.

The search: the streamed element-wise test kernel (tests/tune/kernels/stream_scale.py) over
``TILE_F=128,256,512,1024 BUFS=1..3`` (12 points, the baseline among them), in a temporary project so the
cache starts empty.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from nki_studio.service.settings import Settings
from nki_studio.service.tune import TuneOptions, tune

KERNEL = Path(__file__).resolve().parents[1] / "tests" / "tune" / "kernels" / "stream_scale.py"
SPACE = "TILE_F=128,256,512,1024 BUFS=1..3"


def _search(path: Path, **options: object) -> tuple[float, dict[str, object]]:
    started = time.perf_counter()
    report = tune(
        str(path), path.read_text(), Settings(trusted_workspace=True), TuneOptions(space=SPACE, **options)
    )  # type: ignore[arg-type]
    return time.perf_counter() - started, dict(report)


def _line(label: str, seconds: float, report: dict[str, object]) -> str:
    simulated = int(report["evaluated"])  # type: ignore[call-overload]
    hits = int(report["cacheHits"])  # type: ignore[call-overload]
    total = simulated + hits
    rate = total / seconds * 60 if seconds else float("nan")
    return (
        f"{label:<28} {seconds:7.1f} s  {total:3d} candidates ({simulated} simulated, {hits} cached)  "
        f"{rate:6.1f} candidates/min"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workers", default="1,2", help="local worker counts to time (default 1,2)")
    parser.add_argument("--ray", metavar="ADDRESS", help="also run the search on the Ray cluster at ADDRESS")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; space {SPACE}")
    with tempfile.TemporaryDirectory(prefix="tune-bench-") as folder:
        path = Path(folder) / KERNEL.name
        shutil.copy(KERNEL, path)
        (Path(folder) / "pyproject.toml").write_text("[tool.nki-studio]\n")
        for workers in (int(w) for w in args.workers.split(",")):
            seconds, report = _search(path, workers=workers, cache=False)
            print(_line(f"local pool, {workers} worker(s)", seconds, report))
        if args.ray:
            seconds, report = _search(path, ray_address=args.ray, cache=False)
            print(_line(f"ray {report['executor']}", seconds, report))
        _search(path, workers=2)  # fills the cache
        seconds, report = _search(path, workers=2)
        hits, simulated = int(report["cacheHits"]), int(report["evaluated"])  # type: ignore[call-overload]
        print(_line("rerun from the cache", seconds, report))
        print(f"cache hit rate on the rerun: {hits / max(1, hits + simulated):.0%}")
        print(f"load average after: {os.getloadavg()[0]:.2f} (the machine is shared: figures vary with it)")


if __name__ == "__main__":
    main()
