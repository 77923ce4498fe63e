"""Entry point of the ``nki-studio`` console script.

Each sub-command lives in its own module exposing ``register(subparsers)``, which adds its parser and sets
``func`` (taking the parsed namespace, returning the exit code). Exit codes: 0 clean, 1 findings or
failures, 2 usage or internal error (one line on stderr, the traceback logged: ``cli.errors``), 141 when stdout
was closed early (``| head``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from nki_studio import __version__
from nki_studio.cli.errors import run_guarded

# Sub-command modules, in the order ``--help`` lists them.
_COMMANDS: tuple[str, ...] = (
    "lint",
    "simulate",
    "tune",
    "migrate",
    "test",
    "serve",
    "mcp",
    "profile",
    "calibrate",
)


def build_parser(commands: Sequence[str] = _COMMANDS) -> argparse.ArgumentParser:
    """The argument parser with the given sub-commands registered (all by default)."""
    import importlib

    parser = argparse.ArgumentParser(prog="nki-studio", description="Lint, simulate and profile NKI kernels.")
    parser.add_argument("--version", action="version", version=f"nki-studio {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in commands:
        importlib.import_module(f"nki_studio.cli.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    args_in = list(sys.argv[1:] if argv is None else argv)
    # Only the named sub-command's module is imported: each pulls in its own stack (simulate and profile load
    # NumPy), and `serve` is started by editors, where ~0.4 s of unneeded imports is a slower first diagnostic.
    named = args_in[0] if args_in and args_in[0] in _COMMANDS else None
    parser = build_parser((named,) if named else _COMMANDS)
    try:
        args = parser.parse_args(args_in)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return 2
    return run_guarded(args.func, args, own_logging=getattr(args, "own_logging", False))


if __name__ == "__main__":
    sys.exit(main())
