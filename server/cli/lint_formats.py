"""Output formats of ``nki-studio lint``: text (ruff-like, source line and caret), JSON, SARIF 2.1.0, GitHub
Actions workflow commands. Pure functions from findings to text."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from nki_studio import __version__
from nki_studio.core.finding_json import finding_dict
from nki_studio.core.findings import Finding, Severity
from nki_studio.nkilint.rule import all_rules

DOCS_BASE = "https://github.com/nki-studio/nki-studio/blob/main/docs/rules/"


def format_json(findings: Sequence[Finding], sources: dict[str, list[str]]) -> str:
    """A JSON list of finding objects."""
    return json.dumps([finding_dict(f) for f in findings], indent=2)


def format_text(findings: Sequence[Finding], sources: dict[str, list[str]]) -> str:
    """ruff-style text: ``path:line:col: CODE message``, the source line, a caret under the span, the fix."""
    out: list[str] = []
    for f in findings:
        out.append(f"{f.path}:{f.span.line}:{f.span.column}: {f.code} [{f.severity.value}] {f.message}")
        lines = sources.get(f.path, [])
        if 1 <= f.span.line <= len(lines):
            text = lines[f.span.line - 1].rstrip("\n").expandtabs(1)
            gutter = " " * len(str(f.span.line))
            end = f.span.end_column if f.span.end_line == f.span.line else len(text) + 1
            width = max(1, end - f.span.column)
            out.append(f"{gutter} |")
            out.append(f"{f.span.line} | {text}")
            out.append(f"{gutter} | {' ' * (f.span.column - 1)}{'^' * width} {f.name}")
            if f.fix is not None:
                out.append(f"{gutter} = fix available: {f.fix.title}")
            out.append("")
    counts = {s: sum(1 for f in findings if f.severity is s) for s in Severity}
    fixable = sum(1 for f in findings if f.fix is not None)
    if findings:
        out.append(
            f"Found {len(findings)} finding(s): {counts[Severity.ERROR]} error(s), "
            f"{counts[Severity.WARNING]} warning(s), {counts[Severity.INFO]} info; {fixable} fixable."
        )
    else:
        out.append("All checks passed.")
    return "\n".join(out)


def format_github(findings: Sequence[Finding], sources: dict[str, list[str]]) -> str:
    """GitHub Actions workflow commands (``::error file=...::message``), one per finding."""
    level = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}

    def esc(s: str) -> str:
        return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")

    return "\n".join(
        f"::{level[f.severity]} file={f.path},line={f.span.line},col={f.span.column},endLine={f.span.end_line},"
        f"endColumn={f.span.end_column},title={f.code} {f.name}::{esc(f.message)}"
        for f in findings
    )


def format_sarif(findings: Sequence[Finding], sources: dict[str, list[str]]) -> str:
    """A SARIF 2.1.0 log with one run; rules carry their docs page as helpUri."""
    rules = all_rules()
    used = sorted({f.code for f in findings})
    index = {code: i for i, code in enumerate(used)}
    level = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
    results = []
    for f in findings:
        result: dict[str, Any] = {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": level[f.severity],
            "message": {"text": f.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": f.path.replace("\\", "/")},
                        "region": {
                            "startLine": f.span.line,
                            "startColumn": f.span.column,
                            "endLine": f.span.end_line,
                            "endColumn": f.span.end_column,
                        },
                    }
                }
            ],
        }
        if f.fix is not None:
            result["fixes"] = [
                {
                    "description": {"text": f.fix.title},
                    "artifactChanges": [
                        {
                            "artifactLocation": {"uri": f.path.replace("\\", "/")},
                            "replacements": [
                                {
                                    "deletedRegion": {
                                        "startLine": e.span.line,
                                        "startColumn": e.span.column,
                                        "endLine": e.span.end_line,
                                        "endColumn": e.span.end_column,
                                    },
                                    "insertedContent": {"text": e.new_text},
                                }
                                for e in f.fix.edits
                            ],
                        }
                    ],
                }
            ]
        results.append(result)
    driver_rules = [
        {
            "id": c,
            "name": rules[c].name if c in rules else c,
            "shortDescription": {"text": rules[c].summary if c in rules else c},
            "helpUri": DOCS_BASE + f"{c}.md",
        }
        for c in used
    ]
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "nkilint",
                        "version": __version__,
                        "informationUri": DOCS_BASE,
                        "rules": driver_rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2)


FORMATS: dict[str, Callable[[Sequence[Finding], dict[str, list[str]]], str]] = {
    "text": format_text,
    "json": format_json,
    "sarif": format_sarif,
    "github": format_github,
}
