"""``nki-studio lint PATH...``: run nkilint over files and directories and print the findings.

Exit codes: 0 no error-level finding, 1 error-level findings, 2 usage error, unreadable config or an internal
error of the linter (NKI999).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from nki_studio.cli.lint_formats import FORMATS, find_source_root
from nki_studio.core.findings import Finding, Fix, Severity
from nki_studio.core.text_edits import apply_fixes
from nki_studio.service.lint import lint_files
from nki_studio.service.settings import Settings, strict


def _codes(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    return tuple(c.strip().upper() for c in text.split(",") if c.strip())


def register(subparsers: Any) -> None:
    """Add the ``lint`` sub-command."""
    p = subparsers.add_parser(
        "lint",
        help="lint NKI kernels (files or directories)",
        description="Lint NKI kernels. Exit 0: clean, 1: error-level findings, 2: usage or internal error.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or directories (recursed for *.py)")
    p.add_argument("--format", choices=sorted(FORMATS), default="text", help="output format (default: text)")
    p.add_argument("--target", help="target generation: trn1, trn2 (default), trn3")
    p.add_argument(
        "--nki-version", help="target NKI version, e.g. 0.6, 0.7 (default: installed nki or newest)"
    )
    p.add_argument("--select", help="comma-separated rule codes or prefixes to enable (default: all)")
    p.add_argument("--ignore", help="comma-separated rule codes or prefixes to disable")
    p.add_argument("--output", "-o", help="write the report to this file instead of stdout")
    p.add_argument(
        "--fix", action="store_true", help="apply the available fixes in place, then report what is left"
    )
    p.set_defaults(func=run)


def _apply(findings: list[Finding]) -> int:
    """Write the fixes of ``findings`` into their files; returns how many were applied."""
    by_path: dict[str, list[Fix]] = {}
    for f in findings:
        if f.fix is not None:
            by_path.setdefault(f.path, []).append(f.fix)
    total = 0
    for path, fixes in by_path.items():
        with open(path, encoding="utf-8-sig") as fh:
            text = fh.read()
        new, n = apply_fixes(text, fixes)
        if n:
            with open(path, "w", encoding="utf-8", newline="") as fh:
                fh.write(new)
            total += n
    return total


def run(args: argparse.Namespace) -> int:
    """Execute ``lint``; returns the exit code."""
    options = {"target": args.target, "nkiVersion": args.nki_version}
    try:
        settings = strict(Settings(), {k: v for k, v in options.items() if v})
    except ValueError as exc:
        print(f"nki-studio lint: {exc}", file=sys.stderr)
        return 2
    missing = [p for p in args.paths if not os.path.exists(p)]
    if missing:
        print(f"nki-studio lint: no such file or directory: {', '.join(missing)}", file=sys.stderr)
        return 2
    select, ignore = _codes(args.select), _codes(args.ignore)
    findings = lint_files(args.paths, settings, select=select, ignore=ignore)
    if args.fix:
        fixed = _apply(findings)
        if fixed:
            print(f"Fixed {fixed} finding(s).", file=sys.stderr)
            findings = lint_files(args.paths, settings, select=select, ignore=ignore)
    sources: dict[str, list[str]] = {}
    if args.format in ("text", "sarif"):
        for path in {f.path for f in findings}:
            try:
                with open(path, encoding="utf-8-sig") as fh:
                    sources[path] = fh.read().splitlines()
            except (OSError, UnicodeDecodeError):
                sources[path] = []
    report = FORMATS[args.format](findings, sources, find_source_root(Path.cwd()))
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(report + "\n")
    elif report:
        print(report)
    if any(f.code in ("NKI999", "NKI002") for f in findings):
        return 2
    return 1 if any(f.severity is Severity.ERROR for f in findings) else 0
