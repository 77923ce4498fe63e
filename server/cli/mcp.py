"""``nki-studio mcp``: run the MCP server for coding agents (stdio, or streamable HTTP on loopback).

File access is confined to the ``--root`` folders (default: the current directory); kernels run only in the
sandboxed simulation worker, and not at all with ``--untrusted``; ``profile_remote`` exists only with a host
(``--remote-host`` or ``remote.host`` in ``--settings``) and ``--enable-remote-profiling``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any

from nki_studio.cli.limits import add_limits


def register(subparsers: Any) -> None:
    """Add the ``mcp`` sub-command."""
    p = subparsers.add_parser(
        "mcp",
        help="run the MCP server for coding agents (lint, simulate, estimate, profiles, docs)",
        description="Run the nki-studio Model Context Protocol server over stdin/stdout (default) or "
        "streamable HTTP on 127.0.0.1. Logs go to stderr.",
    )
    p.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="DIR",
        help="workspace root the tools may read (repeatable; default: the current directory)",
    )
    p.add_argument(
        "--settings",
        metavar="FILE.json|JSON",
        help="nki-studio settings (keys of the settings table), a JSON file or inline JSON",
    )
    p.add_argument("--untrusted", action="store_true", help="run no kernel: lint, docs and profiles only")
    add_limits(p)
    p.add_argument(
        "--remote-host", metavar="HOST", help="Trn2 host for profile_remote (ssh alias or user@host)"
    )
    p.add_argument(
        "--enable-remote-profiling",
        action="store_true",
        default=None,
        help="offer profile_remote (needs a host; off by default)",
    )
    p.add_argument(
        "--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT/mcp instead"
    )
    p.add_argument("--log-level", choices=("error", "warning", "info", "debug"), default="warning")
    p.set_defaults(func=run, own_logging=True)


def run(args: argparse.Namespace) -> int:
    """Serve until the client disconnects; returns the exit code."""
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper(), format="nki-studio mcp: %(message)s")
    from nki_studio.mcp.config import build_config
    from nki_studio.service.settings import read_json

    try:
        settings = read_json(args.settings) if args.settings else {}
        config = build_config(
            args.root or [os.getcwd()],
            settings=settings,
            trusted=not args.untrusted,
            timeout_s=args.timeout,
            memory_mb=args.memory_mb,
            remote_host=args.remote_host,
            remote_enabled=args.enable_remote_profiling,
        )
        from nki_studio.mcp.server import NkiStudioMcp

        app = NkiStudioMcp(config)
    except ValueError as exc:
        print(f"nki-studio mcp: {exc}", file=sys.stderr)
        return 2
    import anyio
    from nki_studio.mcp.server import serve_http, serve_stdio

    try:
        if args.http is not None:
            serve_http(app, args.http)
        else:
            # The SDK points fd 1 at stderr while it serves: stray prints miss the protocol stream.
            anyio.run(serve_stdio, app)
    finally:
        app.close()
    return 0
