"""``nki-studio tune FILE[::KERNEL]``: search the kernel's variants (module constants and keyword defaults),
verify each in the sandboxed simulator against its reference, rank the passing ones by the estimate.

``--confirm-remote K`` then profiles the top K ranked candidates on the Trn2 host (``service.tune_confirm``;
the remote options are ``profile remote``'s, declared once in ``cli.remote_options``).

Exit codes: 0 a winner was found (and applied with ``--apply``), 1 no candidate passed (or ``--apply`` could
not write), 2 usage error (no space, a refused space, no such file or kernel, Ray unreachable, no remote host
for ``--confirm-remote``). A candidate that could not be profiled is reported in the measured table; it does
not change the exit code.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from typing import Any

from nki_studio.cli.limits import add_limits
from nki_studio.cli.remote_options import add_remote_options, remote_object
from nki_studio.cli.simulate import settings_of
from nki_studio.nkilint.config import ConfigError
from nki_studio.service import tune as service
from nki_studio.service import tune_confirm
from nki_studio.service.settings import Settings, strict
from nki_studio.service.simulation import SpecProblem

_DURATION = re.compile(r"(?P<n>\d+(?:\.\d+)?)(?P<unit>[smh]?)")
_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600}


def duration(value: str) -> float:
    """``90``, ``90s``, ``10m``, ``1.5h`` -> seconds (argparse type)."""
    m = _DURATION.fullmatch(value.strip())
    if m is None or float(m["n"]) <= 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not a duration like 90s, 10m or 1h")
    return float(m["n"]) * _SECONDS[m["unit"]]


def register(subparsers: Any) -> None:
    """Add the ``tune`` sub-command."""
    p = subparsers.add_parser(
        "tune",
        help="search a kernel's tile sizes and buffer counts: verify each variant, rank by the estimate",
        description="Search a kernel's variants declared by '# nki-studio: tune NAME=values ...' above it, "
        "[tool.nki-studio.tune] or --space. Each candidate is simulated against the reference, failing ones "
        "are never ranked, passing ones are ranked by the estimate (not a measurement). Exit 0: a winner, "
        "1: none passed, 2: usage error.",
    )
    p.add_argument("target_file", metavar="FILE[::KERNEL]", help="kernel file, optionally ::kernel_name")
    p.add_argument(
        "--space", metavar="SPACE", help="e.g. 'TILE_N=128,256,512 BUFS=1..4' (replaces the file's)"
    )
    p.add_argument(
        "--constraint",
        action="append",
        default=[],
        metavar="EXPR",
        help="a Python expression over the parameters that must hold, e.g. 'TILE_N * BUFS <= 2048' (repeatable)",
    )
    p.add_argument("--budget", type=int, metavar="N", help="points to try at most (TPE beyond N points)")
    p.add_argument(
        "--time", type=duration, metavar="DURATION", help="stop starting candidates after, e.g. 10m"
    )
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="local candidates at once")
    p.add_argument(
        "--ray",
        nargs="?",
        const="auto",
        metavar="ADDRESS",
        help="run candidates as Ray tasks on the cluster at ADDRESS (default: auto, the running local one)",
    )
    p.add_argument(
        "--ray-fallback-local", action="store_true", help="when Ray cannot be reached, run on the local pool"
    )
    p.add_argument("--no-cache", action="store_true", help="simulate every candidate again")
    p.add_argument("--seed", type=int, default=0, help="TPE's seed")
    p.add_argument("--target", help="target generation: trn1, trn2, trn3 (default: pyproject, else trn2)")
    p.add_argument("--nki-version", help="NKI version semantics, e.g. 0.6 or 0.7")
    add_limits(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument(
        "--html", metavar="OUT.html", help="also write the table and a scatter plot (SVG) to a page"
    )
    p.add_argument("--apply", action="store_true", help="write the winner's values into FILE")
    remote = p.add_argument_group(
        "confirm on a Trn2 host",
        "--confirm-remote K profiles the top K ranked candidates on the host (as 'nki-studio profile remote' "
        "does) and reports their measured times next to the estimates",
    )
    remote.add_argument(
        "--confirm-remote",
        type=int,
        metavar="K",
        help="profile the top K ranked candidates on the host given by --host",
    )
    remote.add_argument(
        "--calibrate",
        action="store_true",
        help="with --confirm-remote: fit the estimate to the profiles (nki-studio calibrate)",
    )
    add_remote_options(remote, host_required=False, timeout_flag="--remote-timeout")
    p.set_defaults(func=run)


def _usage(message: str) -> int:
    print(f"nki-studio tune: {message}", file=sys.stderr)
    return 2


class ProgressBar:
    """``[######....] 12/40  3 cached  ETA 1m20s`` on stderr: redrawn on a terminal, a line per tenth
    otherwise (CI logs)."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.last_tenth = -1
        self.drawn = False

    def __call__(self, p: service.Progress) -> None:
        total = max(p.total, 1)
        filled = int(20 * min(p.done, total) / total)
        line = f"[{'#' * filled}{'.' * (20 - filled)}] {p.text}"
        if self.tty:
            print(f"\r\033[K{line}", end="", file=sys.stderr, flush=True)
            self.drawn = True
        elif p.done * 10 // total > self.last_tenth:
            self.last_tenth = p.done * 10 // total
            print(line, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.drawn:
            print("\r\033[K", end="", file=sys.stderr, flush=True)


def _settings(args: argparse.Namespace) -> Settings:
    """The options as settings, with the ``remote`` object when confirming on a host. Raises ValueError
    (a bad --target or --nki-version) and ``tune_confirm.RemoteConfigError`` (no host, a bad remote option)."""
    settings = settings_of(args)
    if args.confirm_remote is None:
        return settings
    settings = strict(settings, {"remote": remote_object(args)})
    tune_confirm.check(settings)  # before the search: no host is a usage error, not an hour's search lost
    return settings


def run(args: argparse.Namespace) -> int:
    """Execute ``tune``; returns the exit code."""
    path, _, kernel = args.target_file.partition("::")
    if not os.path.isfile(path):
        return _usage(f"no such file: {path}")
    limits = (args.timeout, args.memory_mb, args.budget, args.workers, args.confirm_remote)
    if any(v is not None and v <= 0 for v in limits):
        return _usage("--timeout, --memory-mb, --budget, --workers and --confirm-remote must be positive")
    if args.calibrate and args.confirm_remote is None:
        return _usage("--calibrate fits the estimate to the profiles of --confirm-remote K: give it too")
    try:
        settings = _settings(args)
    except tune_confirm.RemoteConfigError as exc:
        return _usage(f"--confirm-remote: {exc} (--host and the other remote options, see --help)")
    except ValueError as exc:  # a bad --target or --nki-version
        return _usage(str(exc))
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    options = service.TuneOptions(
        kernel=kernel or None,
        space=args.space,
        constraints=tuple(args.constraint),
        budget=args.budget,
        time_s=args.time,
        workers=args.workers,
        ray_address=args.ray,
        ray_fallback_local=args.ray_fallback_local,
        cache=not args.no_cache,
        seed=args.seed,
    )
    bar = ProgressBar()
    started = time.perf_counter()
    try:
        report = service.tune(path, source, settings, options, bar)
    except (SpecProblem, ConfigError, service.SpaceError, service.TuneError, service.RayUnavailable) as exc:
        return _usage(str(exc))
    except ValueError as exc:  # a bad --target or --nki-version
        return _usage(str(exc))
    finally:
        bar.close()
    report["elapsedS"] = round(time.perf_counter() - started, 2)
    if args.confirm_remote is not None and report["winner"] is not None:
        report["confirmation"] = tune_confirm.confirm(
            path,
            source,
            report,
            settings,
            tune_confirm.ConfirmOptions(args.confirm_remote, args.calibrate),
            on_progress=lambda line: print(line, file=sys.stderr, flush=True),
        )
    if args.html:
        with open(args.html, "w", encoding="utf-8") as fh:
            fh.write(service.report_html(report))
    print(json.dumps(report, indent=2) if args.json else service.report_text(report))
    if report["winner"] is None:
        return 1
    if args.apply:
        if not service.apply_winner(path, source, report):
            print(
                f"nki-studio tune: {path} not changed (it changed during the search, or already has the "
                "winner's values)",
                file=sys.stderr,
            )
            return 1 if report["diff"] else 0
        print(f"applied to {path}:\n{report['diff']}", file=sys.stderr)
    return 0
