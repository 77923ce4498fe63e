"""``nki-studio profile remote FILE[::KERNEL] --host HOST``: profile a kernel on a Trn2 host over ssh and print
the measured per-line heat (see ``nki_studio.remote``). Running the command is the user's trust decision.

Exit codes: 0 ok, 1 the remote run failed (message says why and what to do), 2 bad arguments or no spec.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from nki_studio.cli.remote_options import add_remote_options, remote_object
from nki_studio.service import remote_profile, simulation
from nki_studio.service.remote_profile import RemoteConfigError, RemoteError
from nki_studio.service.settings import Settings, strict
from nki_studio.service.simulation import SpecProblem


def register(actions: Any) -> None:
    """Add ``remote`` to the ``profile`` actions."""
    p = actions.add_parser(
        "remote",
        help="profile a kernel on a remote Trn2 host over ssh and show per-line heat",
        description="Upload, compile, capture (second execution), view, download and map a "
        "Neuron Explorer profile of one kernel; uses your ssh config and agent.",
    )
    p.add_argument("target_file", metavar="FILE[::KERNEL]", help="kernel file, optionally ::kernel_name")
    add_remote_options(p, host_required=True)
    p.add_argument("--target", default="trn2", help="NEURON_PLATFORM_TARGET_OVERRIDE (default trn2)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    p.add_argument("--quiet", action="store_true", help="do not echo remote output to stderr")
    p.set_defaults(func=run_remote)


def run_remote(args: argparse.Namespace) -> int:
    """``profile remote``."""
    from nki_studio.service.reports import kernel_text, listing_text, report_json

    path_text, _, kernel = args.target_file.partition("::")
    path = Path(path_text)
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as exc:
        print(f"nki-studio profile remote: {path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    # Running the command is the user's trust decision; the options are the ``remote`` settings object.
    settings = strict(Settings(trusted_workspace=True), {"remote": remote_object(args)})
    try:
        kernel_job = simulation.prepare(str(path), source, settings, kernel=kernel or None, lenient=True)
    except SpecProblem as exc:
        print(
            "nki-studio profile remote: no inputs for the kernel: " + "; ".join(exc.problems), file=sys.stderr
        )
        return 2
    kernel_file = path.resolve()
    cwd = Path.cwd().resolve()
    # mirror the layout under the current directory (when the kernel is inside it) on the host
    root = cwd if kernel_file.is_relative_to(cwd) else kernel_file.parent
    try:
        job = remote_profile.job_for(kernel_job, settings, root, target=args.target)
    except RemoteConfigError as exc:
        print(f"nki-studio profile remote: {exc}", file=sys.stderr)
        return 2

    def log(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr, flush=True)

    def progress(stage: str, message: str) -> None:
        print(f"[{stage}] {message}", file=sys.stderr, flush=True)

    try:
        profile = remote_profile.run(job, log=log, progress=progress)
        progress("load", f"reading {profile.path}")
        report = remote_profile.load(profile)
    except RemoteError as exc:
        print(f"nki-studio profile remote: {exc}", file=sys.stderr)
        return 1
    if args.format == "json":
        print(json.dumps({**report_json(report), "downloaded": str(profile.path)}, indent=1))
    else:
        print(
            "\n".join(
                [
                    f"profile: {profile.path} (measured on {profile.host})",
                    *kernel_text(report),
                    "",
                    *listing_text(report, "busy", False),
                ]
            )
        )
    return 0
