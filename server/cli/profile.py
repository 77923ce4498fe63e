"""``nki-studio profile``: Neuron Explorer profiles on the command line.

``profile report PROFILE`` prints the kernel summary and each mapped source file with a heat bar per line;
``profile summary PROFILE`` prints the kernel summary only; ``profile analyze PROFILE`` the bounds and the
line-level investigations (profile-formats/bounds.md); ``profile compare A B`` two profiles side by side,
``profile compare PROFILE --estimate FILE::KERNEL`` a measured profile against the kernel's estimate. PROFILE is a Parquet output directory, a legacy
JSON or summary-json file, a CSV export directory or a ``.pftrace`` (detected). Exit codes: 0 ok, 2 unreadable
profile, bad arguments, or (report) nothing that maps to a source line. Further actions (e.g. ``remote``) add
their own sub-parser in ``register``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nki_studio.cli import profile_remote
from nki_studio.service import profiles
from nki_studio.service.profiles import LoadOptions, ProfileError

if TYPE_CHECKING:
    from nki_studio.service.profiles import ProfileReport, SourceText


def _positive(text: str) -> float:
    """A finite number above 0 (a rate); argparse reports anything else as a usage error."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "profile",
        metavar="PROFILE",
        help="Parquet directory, .json, summary-json, CSV export dir or .pftrace",
    )
    _options(p)


def _options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--input-format", choices=profiles.formats(), help="skip detection and use this reader")
    p.add_argument("--execution", type=int, help="ExecutionInfo execution_index to show (default: the first)")
    p.add_argument(
        "--trace", metavar="TRACE.jsonl", help="simulator trace of the same kernel: FLOPs for the roofline"
    )
    p.add_argument(
        "--dma-ceiling",
        type=_positive,
        metavar="GB/s",
        help="DMA bandwidth ceiling (default: profile Metadata)",
    )
    p.add_argument(
        "--vector-peak",
        type=_positive,
        default=1.0,
        metavar="TFLOP/s",
        help="Vector Engine peak (default 1.0)",
    )
    p.add_argument(
        "--target", default="trn2", help="generation for ceilings missing from the profile (default trn2)"
    )
    p.add_argument(
        "--ignore-schema-version",
        action="store_true",
        help="read a Parquet profile of a different schema MAJOR version anyway, by column names",
    )
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format")


def register(subparsers: Any) -> None:
    """Add ``profile`` with its ``report`` and ``summary`` actions."""
    prof = subparsers.add_parser(
        "profile",
        help="Neuron Explorer profiles: per-line heat and kernel summary",
        description="Read a Neuron Explorer profile and put measured time on source lines.",
    )
    actions = prof.add_subparsers(dest="profile_action", metavar="ACTION")
    rep = actions.add_parser(
        "report", help="kernel summary + annotated source listing with a heat bar per line"
    )
    _common(rep)
    _mapping_options(rep)
    rep.add_argument(
        "--metric", choices=("busy", "instr", "wait", "dma"), default="busy", help="what the bars show"
    )
    rep.add_argument("--color", choices=("auto", "always", "never"), default="auto", help="terminal colours")
    rep.set_defaults(func=run_report)
    summ = actions.add_parser("summary", help="kernel summary only")
    _common(summ)
    summ.set_defaults(func=run_summary)
    ana = actions.add_parser(
        "analyze",
        help="bounds (memory, compute, pipeline) and line-level investigations",
        description="Bound families, gaps, bottleneck engine and speedups, and the four investigations "
        "(DMA efficiency, redundant DMA, Tensor-engine tiles, transposes) with their source lines.",
    )
    _common(ana)
    _mapping_options(ana)
    ana.add_argument("--json", action="store_true", help="same as --format json")
    ana.set_defaults(func=run_analyze)
    cmp = actions.add_parser(
        "compare",
        help="two profiles (measured or estimated) before/after: bounds side by side, per-line deltas",
    )
    cmp.add_argument("profile", metavar="A", help="the 'before' profile")
    cmp.add_argument("profile_b", metavar="B", nargs="?", help="the 'after' profile (or give --estimate)")
    cmp.add_argument(
        "--estimate",
        metavar="FILE[::KERNEL]",
        help="instead of B: simulate this kernel with its spec and compare A (measured) with the estimate: "
        "per engine, per line and for the kernel, measured, estimated and estimated / measured",
    )
    cmp.add_argument(
        "--inputs", metavar="SPEC", help="with --estimate: the kernel's argument spec (as simulate)"
    )
    _options(cmp)
    _mapping_options(cmp)
    for side in ("a", "b"):
        cmp.add_argument(
            f"--text-{side}",
            metavar="FILE",
            action="append",
            default=[],
            help=f"the kernel file as it was when {side.upper()} was captured (e.g. `git show REV:k.py > old.py`), "
            "so lines are followed across the edit; default: the source snapshot stored with the profile "
            f"({profiles.snapshot_name()}); without one, lines are matched by number",
        )
    cmp.add_argument("--json", action="store_true", help="same as --format json")
    cmp.set_defaults(func=run_compare)
    profile_remote.register(actions)
    prof.set_defaults(
        func=lambda args: _usage("choose an action: report, summary, analyze, compare or remote")
    )


def _mapping_options(rep: argparse.ArgumentParser) -> None:
    rep.add_argument(
        "--source",
        action="append",
        default=[],
        metavar="FILE",
        help="kernel source file(s) to map the profile's paths to (searched before --root)",
    )
    rep.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="DIR",
        help="directory searched for the kernel files (default: current directory)",
    )
    rep.add_argument(
        "--path-map",
        action="append",
        default=[],
        metavar="REMOTE=LOCAL",
        help="map a compile-host path prefix to a local one (repeatable)",
    )


def _usage(message: str) -> int:
    print(f"nki-studio profile: {message}", file=sys.stderr)
    return 2


def _analyze(
    args: argparse.Namespace, roots: list[Path], mappings: dict[str, str], explicit: list[Path]
) -> ProfileReport:
    return profiles.load(
        args.profile,
        LoadOptions(
            fmt=args.input_format,
            roots=roots,
            mappings=mappings,
            explicit=explicit,
            execution=args.execution,
            trace=args.trace,
            dma_ceiling_gbps=args.dma_ceiling,
            vector_peak_tflops=args.vector_peak,
            generation=args.target,
            ignore_schema_version=args.ignore_schema_version,
        ),
    )


def run_summary(args: argparse.Namespace) -> int:
    """``profile summary``."""
    from nki_studio.service.reports import kernel_text

    try:
        report = _analyze(args, [], {}, [])
    except ProfileError as exc:  # anything else is a bug: run_guarded reports it
        return _usage(str(exc))
    if args.format == "json":
        print(
            json.dumps(
                {"profile": report.profile_info(), "kernel": report.metrics.kernel.to_dict()}, indent=1
            )
        )
    else:
        print("\n".join(kernel_text(report)))
    return 0


def _mapped(args: argparse.Namespace, path: str | None = None) -> ProfileReport:
    """``_analyze`` with the --source/--root/--path-map options; ValueError names a bad option."""
    mappings: dict[str, str] = {}
    for item in args.path_map:
        remote, sep, local = item.partition("=")
        if not sep or not remote or not local:
            raise ValueError(f"--path-map expects REMOTE=LOCAL, got {item!r}")
        mappings[remote] = local
    explicit = [Path(s) for s in args.source]
    missing = [str(s) for s in explicit if not s.is_file()]
    if missing:
        raise ValueError(f"--source: no such file: {', '.join(missing)}")
    roots = [Path(r) for r in args.root] or ([] if explicit else [Path.cwd()])
    if path is not None:
        args = argparse.Namespace(**{**vars(args), "profile": path})
    return _analyze(args, roots, mappings, explicit)


def run_analyze(args: argparse.Namespace) -> int:
    """``profile analyze``: bounds and investigations."""
    from nki_studio.service.reports import bounds_text, investigations_text

    try:
        report = _mapped(args)
    except (ProfileError, ValueError) as exc:
        return _usage(str(exc))
    analysis = report.analysis()
    if args.json or args.format == "json":
        print(json.dumps({"profile": report.profile_info(), **analysis}, indent=1, default=str))
    else:
        invs = investigations_text(report.profile.provenance, analysis["investigations"], report.local_path)
        print("\n".join([*bounds_text(analysis["bounds"]), "", *invs]))
    return 0


def _texts(profile: str, files: list[str]) -> dict[str, SourceText]:
    """One side's source versions: the snapshot stored with the profile, overridden by ``--text-*`` files
    (keyed by their own path; ``line_align.source_for`` matches them to the profile's files by name).
    ValueError names an unreadable file."""
    out = profiles.snapshot(profile)
    for f in files:
        try:
            out[str(Path(f).resolve())] = profiles.source_text(f)
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"--text-a/--text-b: cannot read {f}: {exc}") from exc
    return out


def run_compare(args: argparse.Namespace) -> int:
    """``profile compare A B`` or ``profile compare PROFILE --estimate FILE::KERNEL``."""
    from nki_studio.service.reports import compare_text

    if (args.profile_b is None) == (args.estimate is None):
        return _usage("compare: give B or --estimate FILE::KERNEL (one of them)")
    if args.estimate is not None:
        return _compare_estimate(args)
    try:
        a, b = _mapped(args), _mapped(args, args.profile_b)
        texts = [
            _texts(path, files)
            for path, files in ((args.profile, args.text_a), (args.profile_b, args.text_b))
        ]
    except (ProfileError, ValueError) as exc:
        return _usage(str(exc))
    result = profiles.compare(a, b, *texts)
    if args.json or args.format == "json":
        print(json.dumps(result, indent=1, default=str))
    else:
        print("\n".join(compare_text(result)))
    return 0


def _compare_estimate(args: argparse.Namespace) -> int:
    from nki_studio.cli import profile_estimate
    from nki_studio.service import measured_estimated

    try:
        got = profile_estimate.compare(args, _mapped(args), _texts(args.profile, args.text_a))
    except (ProfileError, ValueError) as exc:  # SpecProblem, ConfigError: no estimate
        return _usage(str(exc))
    if args.json or args.format == "json":
        print(json.dumps(got, indent=1))
    else:
        print("\n".join(measured_estimated.text(got)))
    return 0


def run_report(args: argparse.Namespace) -> int:
    """``profile report``."""
    from nki_studio.service.reports import kernel_text, listing_text, report_json

    try:
        report = _mapped(args)
    except (ProfileError, ValueError) as exc:
        return _usage(str(exc))
    if args.format == "json":
        print(json.dumps(report_json(report), indent=1))
    else:
        tty = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        color = args.color == "always" or (args.color == "auto" and tty)
        print("\n".join([*kernel_text(report), "", *listing_text(report, args.metric, color)]))
    problem = report.problem()
    if problem:
        print(f"nki-studio profile: {problem}", file=sys.stderr)
        return 2
    return 0
