"""The ``tune`` tool: search a kernel's variants within a budget (``service.tune``: each verified by the
simulator, ranked by the estimate) → the ranked table as text, the report and the winner's diff. One
candidate at a time: the MCP server runs one simulation at a time, each may use the whole memory limit.

``confirm_remote`` K then profiles the top K on the Trn2 host (``service.tune_confirm``), only where
``profile_remote`` is offered (a host configured and remote profiling enabled, in a trusted server)."""

from __future__ import annotations

from typing import Any

from nki_studio.mcp.config import McpConfig
from nki_studio.mcp.errors import ToolFailure
from nki_studio.mcp.targets import config_failure, tool_settings
from nki_studio.mcp.workspace import Workspace
from nki_studio.nkilint.config import ConfigError
from nki_studio.service import tune as service
from nki_studio.service import tune_confirm
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
    confirm = args.get("confirm_remote")
    if confirm is not None and not config.remote_available:  # before the search, not after it
        raise ToolFailure(
            "refused",
            "confirm_remote: remote profiling is not configured and enabled for this server (a remote.host "
            "and mcp.remoteProfiling / --enable-remote-profiling)",
        )
    options = service.TuneOptions(
        kernel=args.get("kernel") or None,
        space=args.get("space") or None,
        constraints=tuple(args.get("constraints", ())),
        budget=int(args.get("budget", DEFAULT_BUDGET)),
        workers=1,
    )
    try:
        settings = tool_settings(config.settings, args)
        report = service.tune(path, source, settings, options)
    except Refused as exc:
        raise ToolFailure("refused", str(exc)) from exc
    except SpecProblem as exc:
        raise ToolFailure(exc.kind, str(exc), kernels=exc.kernels, problems=exc.problems) from exc
    except ConfigError as exc:
        raise config_failure(exc) from exc
    except (service.SpaceError, service.TuneError) as exc:
        raise ToolFailure("invalid_arguments", str(exc)) from exc
    log: list[str] = []
    if confirm is not None and report["winner"] is not None:
        try:
            report["confirmation"] = tune_confirm.confirm(
                path,
                source,
                report,
                settings,
                tune_confirm.ConfirmOptions(int(confirm)),
                log=log.append,
                on_progress=log.append,
            )
        except tune_confirm.RemoteConfigError as exc:
            raise ToolFailure("invalid_arguments", str(exc)) from exc
    report["path"] = ws.relative(path)
    table = service.report_text(report)
    extra = {"log": log[-40:]} if confirm is not None else {}
    return {**report, "table": table, **extra}, table.splitlines()[0]
