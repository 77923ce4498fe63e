"""The ``tune`` tool: search a kernel's variants within a budget (``service.tune``: each verified by the
simulator, ranked by the estimate) → the ranked table as text, the report and the winner's diff. One
candidate at a time: the MCP server runs one simulation at a time, each may use the whole memory limit."""

from __future__ import annotations

from typing import Any

from nki_studio.mcp.config import McpConfig
from nki_studio.mcp.errors import ToolFailure
from nki_studio.mcp.targets import config_failure, tool_settings
from nki_studio.mcp.workspace import Workspace
from nki_studio.nkilint.config import ConfigError
from nki_studio.service import tune as service
from nki_studio.service.simulation import Refused, SpecProblem

DEFAULT_BUDGET = 16
MAX_BUDGET = 200  # an agent's call should end in minutes, not hours


def tune(ws: Workspace, config: McpConfig, args: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Run the search ``args`` describe; the structured report with its table, and a one-line summary."""
    path = str(ws.resolve(args.get("file", ""), argument="file"))
    try:
        with open(path, encoding="utf-8") as fh:
            source = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolFailure("not_found", f"file: cannot read {args.get('file')}: {exc}") from exc
    options = service.TuneOptions(
        kernel=args.get("kernel") or None,
        space=args.get("space") or None,
        constraints=tuple(args.get("constraints", ())),
        budget=int(args.get("budget", DEFAULT_BUDGET)),
        workers=1,
    )
    try:
        report = service.tune(path, source, tool_settings(config.settings, args), options)
    except Refused as exc:
        raise ToolFailure("refused", str(exc)) from exc
    except SpecProblem as exc:
        raise ToolFailure(exc.kind, str(exc), kernels=exc.kernels, problems=exc.problems) from exc
    except ConfigError as exc:
        raise config_failure(exc) from exc
    except (service.SpaceError, service.TuneError) as exc:
        raise ToolFailure("invalid_arguments", str(exc)) from exc
    report["path"] = ws.relative(path)
    table = service.report_text(report)
    return {**report, "table": table}, table.splitlines()[0]
