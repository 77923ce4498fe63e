"""``nki-studio serve``: run the language server over stdio."""

from __future__ import annotations

import argparse
import atexit
import logging
import os
import sys
from typing import Any, NoReturn

from nki_studio.service.settings import LOG_LEVELS


def register(subparsers: Any) -> None:
    """Add the ``serve`` sub-command."""
    parser = subparsers.add_parser(
        "serve",
        help="run the language server (LSP over stdio)",
        description="Run the nki-studio language server over stdin/stdout. Logs go to stderr and to the "
        "client's output (window/logMessage), never to stdout.",
    )
    parser.add_argument(
        "--stdio", action="store_true", help="accepted for editor compatibility (stdio is the only transport)"
    )
    parser.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        default="info",
        help="initial log level (setting logLevel overrides)",
    )
    parser.set_defaults(func=run, own_logging=True)  # logs go to the client too: see lsp.logs


def run(args: argparse.Namespace) -> int:
    """Serve until the client sends exit, then end the process at once (exit code 0)."""
    protocol_out = sys.stdout.buffer
    # The editor starts the server with PYTHONMALLOC=malloc (lsp.memory: freed memory goes back to the system
    # after documents close). Its children (the lint worker, simulation workers) end when their work does, so
    # they keep CPython's faster default allocator.
    if os.environ.get("PYTHONMALLOC") == "malloc":
        del os.environ["PYTHONMALLOC"]
    # Anything printed by imported or user code must not corrupt the protocol stream.
    sys.stdout = sys.stderr
    from nki_studio.lsp import logs
    from nki_studio.lsp.fastpath.start import fast_start

    logs.configure_stderr(args.log_level)
    # The first answers and diagnostics may go out before pygls loads (lsp.fastpath); the full server then
    # starts on streams that replay what was read and drop what was sent, and takes over the hand-over.
    full = fast_start(sys.stdin.buffer, protocol_out)

    from nki_studio.lsp.attrs_code_cache import import_lsprotocol_with_cache

    import_lsprotocol_with_cache()  # before pygls imports it: a third of start-up, cached from the second start
    from nki_studio.lsp.server import create_server

    server = create_server(handover=full.handover)
    server.start_io(full.input, full.output)
    _exit_now(0)


def _exit_now(code: int) -> NoReturn:
    """End the process as soon as the client said ``exit``: run the atexit hooks (they kill the simulation
    workers) and flush, then skip joining the pool threads (a jedi warm-up may still be running) and the
    interpreter's module teardown, which together took 0.6-1.5 s. Nothing is left to write by then."""
    atexit._run_exitfuncs()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
