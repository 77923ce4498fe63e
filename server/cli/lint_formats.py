"""Output formats of ``nki-studio lint``: text (ruff-like, source line and caret), JSON, SARIF 2.1.0, GitHub
Actions workflow commands. Functions from findings (and the source lines they point at) to text."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from nki_studio import __version__
from nki_studio.core.codes import Code, lookup
from nki_studio.core.distribution import project_urls, rule_page, rule_page_url
from nki_studio.core.finding_json import finding_dict
from nki_studio.core.findings import Finding, Severity, Span
from nki_studio.core.text_units import client_units


def format_json(findings: Sequence[Finding], sources: dict[str, list[str]], root: Path) -> str:
    """A JSON list of finding objects."""
    return json.dumps([finding_dict(f) for f in findings], indent=2)


def format_text(findings: Sequence[Finding], sources: dict[str, list[str]], root: Path) -> str:
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


def _workflow_escape(value: str, *, property_value: bool) -> str:
    """GitHub workflow-command escaping: ``%``, CR and LF always; ``:`` and ``,`` too in property values."""
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return value.replace(":", "%3A").replace(",", "%2C") if property_value else value


def format_github(findings: Sequence[Finding], sources: dict[str, list[str]], root: Path) -> str:
    """GitHub Actions workflow commands (``::error file=...::message``), one per finding."""
    level = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}

    def prop(value: object) -> str:
        return _workflow_escape(str(value), property_value=True)

    return "\n".join(
        f"::{level[f.severity]} file={prop(f.path)},line={f.span.line},col={f.span.column},"
        f"endLine={f.span.end_line},endColumn={f.span.end_column},title={prop(f.code + ' ' + f.name)}"
        f"::{_workflow_escape(f.message, property_value=False)}"
        for f in findings
    )


def find_source_root(start: Path) -> Path:
    """The repository root SARIF URIs are relative to: the nearest folder holding ``.git``, else ``start``."""
    start = start.resolve()
    return next((d for d in (start, *start.parents) if (d / ".git").exists()), start)


def format_sarif(findings: Sequence[Finding], sources: dict[str, list[str]], root: Path) -> str:
    """A SARIF 2.1.0 log with one run, as code scanning expects it: URIs relative to ``%SRCROOT%`` (``root``)
    where the file lies under it, UTF-16 columns, full rule metadata and a partial fingerprint per result."""
    return json.dumps(sarif_log(findings, sources, root), indent=2)


def sarif_log(findings: Sequence[Finding], sources: dict[str, list[str]], root: Path) -> dict[str, Any]:
    """The SARIF log of ``format_sarif`` as a JSON-ready dict."""
    root = root.resolve()
    used = sorted({f.code for f in findings})
    index = {code: i for i, code in enumerate(used)}
    occurrences: dict[tuple[str, str, str], int] = {}
    results = []
    for f in findings:
        location = _sarif_location(f.path, root)
        lines = sources.get(f.path, [])
        result: dict[str, Any] = {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": _SARIF_LEVEL[f.severity],
            "message": {"text": f.message},
            "locations": [
                {"physicalLocation": {"artifactLocation": location, "region": _sarif_region(f.span, lines)}}
            ],
            "partialFingerprints": {_FINGERPRINT: _fingerprint(f, location, lines, occurrences)},
        }
        if f.fix is not None:
            result["fixes"] = [
                {
                    "description": {"text": f.fix.title},
                    "artifactChanges": [
                        {
                            "artifactLocation": location,
                            "replacements": [
                                {
                                    "deletedRegion": _sarif_region(e.span, lines),
                                    "insertedContent": {"text": e.new_text},
                                }
                                for e in f.fix.edits
                            ],
                        }
                    ],
                }
            ]
        results.append(result)
    driver: dict[str, Any] = {
        "name": "nkilint",
        "version": __version__,
        "rules": [_sarif_rule(code) for code in used],
    }
    home = project_urls().get("Homepage")
    if home:
        driver["informationUri"] = home
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": driver},
                "originalUriBaseIds": {_SRCROOT: {"uri": root.as_uri() + "/"}},
                "columnKind": "utf16CodeUnits",
                "results": results,
            }
        ],
    }


_SRCROOT = "SRCROOT"
_FINGERPRINT = "nkiStudioFinding/v1"
_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _sarif_location(path: str, root: Path) -> dict[str, str]:
    """A repository-relative URI under ``%SRCROOT%``, or an absolute file URI for a file outside the root."""
    absolute = Path(path).resolve()
    try:
        relative = absolute.relative_to(root)
    except ValueError:
        return {"uri": absolute.as_uri()}
    return {"uri": quote(relative.as_posix()), "uriBaseId": _SRCROOT}


def _utf16_column(lines: list[str], line: int, column: int) -> int:
    """A 1-based code-point column → 1-based UTF-16 column (unchanged when the line's text is unknown)."""
    if not 1 <= line <= len(lines):
        return column
    return client_units(lines[line - 1][: max(column - 1, 0)], "utf-16") + 1


def _sarif_region(span: Span, lines: list[str]) -> dict[str, int]:
    return {
        "startLine": span.line,
        "startColumn": _utf16_column(lines, span.line, span.column),
        "endLine": span.end_line,
        "endColumn": _utf16_column(lines, span.end_line, span.end_column),
    }


def _fingerprint(
    f: Finding, location: dict[str, str], lines: list[str], seen: dict[tuple[str, str, str], int]
) -> str:
    """Stable across unrelated edits: code, file and the finding's line text (not its number), plus the
    occurrence count of that triple so identical lines stay distinct."""
    text = lines[f.span.line - 1].strip() if 1 <= f.span.line <= len(lines) else ""
    key = (f.code, location["uri"], text)
    seen[key] = seen.get(key, 0) + 1
    digest = hashlib.sha256("\0".join((*key, str(seen[key]))).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:32]


def _sarif_rule(code: str) -> dict[str, Any]:
    """``reportingDescriptor`` of one code from the catalogue and its rule page."""
    try:
        entry: Code | None = lookup(code)
    except KeyError:
        entry = None
    summary = entry.summary if entry is not None else code
    page = rule_page(code)
    markdown = page.read_text(encoding="utf-8") if page is not None else ""
    # The web page when the project declares where its rule pages live, else the page shipped with the server.
    url = rule_page_url(code) or (page.as_uri() if page is not None else None)
    rule: dict[str, Any] = {
        "id": code,
        "name": entry.name if entry is not None else code,
        "shortDescription": {"text": summary},
        "fullDescription": {"text": _what_paragraph(markdown) or summary},
        "help": {
            "text": summary + (f" See {url}" if url else ""),
            "markdown": markdown or summary,
        },
        "defaultConfiguration": {"level": _SARIF_LEVEL[entry.severity] if entry is not None else "warning"},
    }
    if url:
        rule["helpUri"] = url
    return rule


def _what_paragraph(markdown: str) -> str:
    """The "What" section of a generated rule page, as one line of text."""
    _, found, rest = markdown.partition("\n## What\n")
    return " ".join(rest.split("\n## ", 1)[0].split()) if found else ""


# Each format: (findings, source lines per path, source root for repository-relative paths) -> report text.
FORMATS: dict[str, Callable[[Sequence[Finding], dict[str, list[str]], Path], str]] = {
    "text": format_text,
    "json": format_json,
    "sarif": format_sarif,
    "github": format_github,
}
