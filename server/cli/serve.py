"""``nki-studio serve``: run the language server over stdio."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from nki_studio.lsp.settings import LOG_LEVELS


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
    """Serve until the client sends exit; returns the exit code."""
    protocol_out = sys.stdout.buffer
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
    return 0
