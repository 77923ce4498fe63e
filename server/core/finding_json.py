"""The JSON object of one finding, as ``nki-studio lint --format json`` prints it and the MCP ``lint`` tool
returns it: 1-based lines and columns in code points, end exclusive, ``fix`` (title + edits) when one exists."""

from __future__ import annotations

from typing import Any

from nki_studio.core.findings import Finding


def finding_dict(f: Finding) -> dict[str, Any]:
    """The JSON object of one finding: exactly the documented keys, plus ``fix`` when there is one."""
    out: dict[str, Any] = {
        "path": f.path,
        "line": f.span.line,
        "column": f.span.column,
        "end_line": f.span.end_line,
        "end_column": f.span.end_column,
        "code": f.code,
        "name": f.name,
        "severity": f.severity.value,
        "message": f.message,
    }
    if f.fix is not None:
        out["fix"] = {
            "title": f.fix.title,
            "edits": [
                {
                    "line": e.span.line,
                    "column": e.span.column,
                    "end_line": e.span.end_line,
                    "end_column": e.span.end_column,
                    "new_text": e.new_text,
                }
                for e in f.fix.edits
            ],
        }
    return out
