"""``nki-perf`` diagnostics: the investigation findings of a heatmap payload (``payload["findings"]``, built by
``profile.analyze.ProfileReport.payloads``) as diagnostics on the lines they concern, after the project config
(``ignore``, ``severity``) and ``# noqa`` comments, like every other code of the catalogue. Their severity is
the setting ``perfSeverity`` (default ``hint``: a mark on the line, no Problems entry, since a finding is a lead
to investigate, not a defect); a code's ``severity`` in ``[tool.nki-studio]`` still wins.

Any front end painting a payload (a loaded profile, an estimate) publishes them through this one function.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lsprotocol import types
from nki_studio.core import perf_codes  # noqa: F401  (declares the NKI7xx codes)
from nki_studio.core.codes import lookup
from nki_studio.core.findings import Span
from nki_studio.lsp.convert import DocumentPositions, diagnostic_json, split_lines
from nki_studio.lsp.typed import to_diagnostic
from nki_studio.nkilint.api import config_for
from nki_studio.nkilint.engine import as_configured
from nki_studio.protocol.heatmap import HeatFinding

SOURCE = "nki-perf"
_SEVERITIES = {
    "hint": types.DiagnosticSeverity.Hint,
    "information": types.DiagnosticSeverity.Information,
    "warning": types.DiagnosticSeverity.Warning,
}


def perf_diagnostics(
    uri: str,
    path: str,
    text: str,
    findings: Sequence[HeatFinding],
    encoding: Any,
    base_url: str | None,
    *,
    severity: str,
    estimated: bool = False,
) -> list[types.Diagnostic]:
    """One diagnostic per payload finding (0-based ``line``), spanning the line's code, with ``severity``
    (the ``perfSeverity`` setting: hint, information, warning) unless the project config sets the code's.
    ``estimated``: the findings come from an estimated profile, and each message says so."""
    lines = split_lines(text)
    label = "Estimated (simulator trace, not measured): " if estimated else ""
    found = []
    for f in findings:
        n = int(f["line"])
        if not 0 <= n < len(lines):
            continue
        body = lines[n].rstrip("\r\n")
        first = len(body) - len(body.lstrip())
        span = Span(n + 1, first + 1, n + 1, max(len(body.rstrip()), first) + 1)
        found.append(lookup(str(f["code"])).finding(path, span, label + str(f["message"])))
    config = config_for(path)[0]
    kept = as_configured(found, text, path, config)
    positions = DocumentPositions(lines, encoding)
    out = []
    for kept_finding in kept:
        diagnostic = to_diagnostic(
            diagnostic_json(kept_finding, positions, uri=uri, doc_path=path, base_url=base_url)
        )
        if not any(
            code == kept_finding.code for code, _ in config.severity
        ):  # the project's word wins over the setting
            diagnostic.severity = _SEVERITIES[severity]
        out.append(diagnostic)
    return out
