"""``nki-studio calibrate PROFILE... [--kernel FILE::KERNEL] [--target trn1|trn2] [--out PATH] [--json]``: fit the
estimate's per-target costs to your measured profiles and store them for every later estimate
(``service.calibration``). Running the command is the user's trust decision (it simulates the kernels).

Exit codes: 0 a calibration was written, 1 no profile could be used (each skipped with its reason), 2 bad
arguments.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from nki_studio.service import calibration
from nki_studio.service.calibration import CalibrateOptions
from nki_studio.service.profiles import LoadOptions
from nki_studio.service.settings import Settings


def register(sub: Any) -> None:
    """Add ``calibrate`` to the sub-commands."""
    p = sub.add_parser(
        "calibrate",
        help="fit the estimate's costs to your measured profiles (.nki-studio/calibration.json)",
        description="Simulate the kernel of each measured profile, match its instructions to the measured "
        "ones and fit per-engine, per-opcode and dtype and DMA costs; every later estimate uses them and says so.",
    )
    p.add_argument("profiles", nargs="+", metavar="PROFILE", help="Neuron Explorer profile (folder or file)")
    p.add_argument(
        "--kernel", metavar="FILE::KERNEL", help="the kernel every profile is of (default: what each names)"
    )
    p.add_argument(
        "--target", choices=("trn1", "trn2", "trn3"), help="target generation (default: the kernel's)"
    )
    p.add_argument(
        "--out", metavar="PATH", help="calibration file (default: the project's .nki-studio/calibration.json)"
    )
    p.add_argument(
        "--source", action="append", default=[], metavar="FILE", help="kernel file the profiles' paths map to"
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """``calibrate``."""
    options = CalibrateOptions(
        kernel=args.kernel,
        target=args.target,
        out=args.out,
        load=LoadOptions(explicit=[Path(s) for s in args.source], roots=[Path.cwd()]),
    )
    result = calibration.calibrate(
        args.profiles,
        Settings(trusted_workspace=True),
        options,
        on_progress=lambda m: print(m, file=sys.stderr),
    )
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print("\n".join(calibration.text(result)))
    return 0 if result["file"] else 1
