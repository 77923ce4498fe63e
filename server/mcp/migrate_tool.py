"""The ``migrate`` tool: a legacy ``neuronxcc.nki`` (or NKI 0.5/0.6) file rewritten to NKI 0.7 and proven by
simulating both versions (``service.migration``); written only when asked and proven."""

from __future__ import annotations

from typing import Any

from nki_studio.mcp.errors import ToolFailure
from nki_studio.mcp.workspace import Workspace
from nki_studio.service.migration import migrate as run_migration
from nki_studio.service.settings import Settings
from nki_studio.service.simulation import SpecProblem


def migrate(ws: Workspace, settings: Settings, args: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Migrate the file ``args`` names; returns the result (diff, changes, manual steps, proofs) and a summary.
    An untrusted server (the proof runs the kernel) or a file that cannot be migrated is a tool error."""
    path = str(ws.resolve(args.get("file", "")))
    try:
        result = run_migration(
            path,
            settings,
            inputs=args.get("inputs") or None,
            write=bool(args.get("write")),
            force=bool(args.get("force")),
        )
    except SpecProblem as exc:
        raise ToolFailure(exc.kind, str(exc), argument="inputs") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolFailure("not_found", f"file: cannot read {args.get('file')}: {exc}") from exc
    structured = {**result, "path": ws.relative(path)}
    summary = f"{result['status']}: {result['message']}"
    if result["status"] == "refused":
        raise ToolFailure("refused", result["message"], result=structured)
    if result["status"] == "not_migratable":
        raise ToolFailure("syntax_error", result["message"], result=structured)
    return structured, summary
