"""``nki-studio test [--nki-library] -- PYTEST_ARGS``: run a project's pytest suite on the embedded simulator.

pytest runs in this process with the :mod:`nki_studio.pytest_plugin` plugin (``-p``, so pytest-xdist
workers load it too); every argument after ``--`` goes to pytest unchanged. The exit code is pytest's
(0 passed, 1 tests failed, 2 interrupted, 3 internal error, 4 usage error, 5 no tests collected); 4 as well
when pytest is not installed.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

PLUGIN = "nki_studio.pytest_plugin"


def register(subparsers: Any) -> None:
    """Add the ``test`` sub-command."""
    p = subparsers.add_parser(
        "test",
        help="run your pytest suite with `import nki` on the embedded simulator",
        description="Run pytest with `import nki` routed to the embedded simulator (as NKI_SIMULATOR=1 "
        "does for AWS's). Arguments after `--` are pytest's; the exit code is pytest's.",
    )
    p.add_argument(
        "--nki-library",
        action="store_true",
        help="also provide `nki_cpu_simulator` for nki-library's `--test-mode simulation`",
    )
    p.add_argument("pytest_args", nargs=argparse.REMAINDER, metavar="-- PYTEST_ARGS", help="passed to pytest")
    p.set_defaults(func=run)


def pytest_argv(args: argparse.Namespace) -> list[str]:
    """The command line handed to pytest: the plugin, its options, then the user's arguments."""
    passed = list(args.pytest_args)
    if passed[:1] == ["--"]:
        passed = passed[1:]
    return ["-p", PLUGIN, *(["--nki-library"] if args.nki_library else []), *passed]


def run(args: argparse.Namespace) -> int:
    """Run pytest; its exit code."""
    try:
        import pytest
    except ModuleNotFoundError:
        print("nki-studio test: pytest is not installed in this environment", file=sys.stderr)
        return 4
    return int(pytest.main(pytest_argv(args)))
