"""The ``lint`` tool: a file or source text → findings with their fixes (``nki_studio.nkilint.api``)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from nki_studio.core.finding_json import finding_dict
from nki_studio.mcp.errors import ToolFailure
from nki_studio.mcp.targets import config_failure, tool_settings
from nki_studio.mcp.workspace import Workspace
from nki_studio.nkilint.config import ConfigError
from nki_studio.service.lint import lint_text
from nki_studio.service.settings import Settings


def lint(ws: Workspace, settings: Settings, args: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Lint ``args["file"]`` or ``args["source"]`` (located at ``args["path"]`` for its config, default the
    first root); returns the structured result and a one-line summary."""
    if args.get("source") is not None:
        where = args.get("path") or args.get("file")
        # Unsaved text: its path only locates the config and helper modules, so it need not exist yet.
        path = ws.unsaved(where)
        text = str(args["source"])
    elif args.get("file"):
        path = str(ws.resolve(args["file"]))
        try:
            with open(path, encoding="utf-8-sig") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise ToolFailure("not_found", f"file: cannot read {args['file']}: {exc}") from exc
    else:
        raise ToolFailure("invalid_arguments", "give either file or source", argument="file")
    try:
        config, found = lint_text(text, path, tool_settings(settings, args))
    except ConfigError as exc:
        raise config_failure(exc) from exc
    findings = [finding_dict(f) for f in found]
    for f in findings:
        f["path"] = ws.relative(f["path"])
    counts = Counter(f["severity"] for f in findings)
    result = {
        "path": ws.relative(path),
        "target": config.target.generation.value,
        "nkiVersion": str(config.target.nki_version),
        "counts": {s: counts.get(s, 0) for s in ("error", "warning", "info")},
        "fixable": sum(1 for f in findings if "fix" in f),
        "findings": findings,
    }
    if not findings:
        return result, f"{result['path']}: no findings"
    first = findings[0]
    summary = (
        f"{result['path']}: {len(findings)} finding(s) — {counts.get('error', 0)} error(s), "
        f"{counts.get('warning', 0)} warning(s); first: line {first['line']} {first['code']} {first['message']}"
    )
    return result, summary
