"""``nki-studio migrate FILE [--to 0.7] [--write] [--force] [--json]``: rewrite a legacy ``neuronxcc.nki`` (or NKI
0.5/0.6) file to NKI 0.7 and prove the rewrite by simulating both versions on the same inputs.

Prints the diff by default; ``--write`` writes the file once the proof holds (``--force``: also when it failed
or could not run). Exit codes: 0 proven or nothing to migrate, 1 not proven / proof failed / manual steps left,
2 usage error or a file that cannot be migrated (unparsable, half migrated).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from nki_studio.cli.limits import add_limits
from nki_studio.service.migration import exit_code, migrate, migration_text
from nki_studio.service.settings import Settings, strict
from nki_studio.service.simulation import SpecProblem


def register(subparsers: Any) -> None:
    """Add the ``migrate`` sub-command."""
    p = subparsers.add_parser(
        "migrate",
        help="migrate a legacy NKI kernel file to NKI 0.7, with a simulated equivalence proof",
        description="Rewrite a neuronxcc.nki (or NKI 0.5/0.6) file to NKI 0.7 and simulate both versions on the "
        "same inputs. Exit 0: proven (or nothing to do), 1: not proven, 2: usage error or not migratable.",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("--to", default="0.7", choices=("0.7",), help="the NKI version to migrate to (0.7)")
    p.add_argument("--write", action="store_true", help="write the migrated file once the proof holds")
    p.add_argument("--force", action="store_true", help="with --write: write even when the proof failed")
    p.add_argument("--inputs", metavar="SPEC", help="argument spec for the proof, e.g. 'x=float32[128,512]'")
    p.add_argument("--target", help="target generation: trn1, trn2, trn3 (default: pyproject, else trn2)")
    add_limits(p)
    p.add_argument("--json", action="store_true", help="print the structured result as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Execute ``migrate``; returns the exit code."""
    if not os.path.isfile(args.file):
        print(f"nki-studio migrate: no such file: {args.file}", file=sys.stderr)
        return 2
    options = {
        "target": args.target,
        "simulationTimeout": args.timeout,
        "simulationMemoryLimitMb": args.memory_mb,
    }
    try:
        # running the command is the user's trust decision (as for simulate)
        settings = strict(
            Settings(trusted_workspace=True), {k: v for k, v in options.items() if v is not None}
        )
        result = migrate(
            args.file, settings, to=args.to, inputs=args.inputs, write=args.write, force=args.force
        )
    except (ValueError, SpecProblem) as exc:
        print(f"nki-studio migrate: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=2) if args.json else migration_text(result))
    return exit_code(result)
