"""``nki-perf`` diagnostics: the investigation findings of a heatmap payload (``payload["findings"]``, built by
``profile.analyze.ProfileReport.payloads``) as Information diagnostics on the lines they concern, after the
project config (``ignore``, ``severity``) and ``# noqa`` comments, like every other code of the catalogue.

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


def perf_diagnostics(
    uri: str,
    path: str,
    text: str,
    findings: Sequence[HeatFinding],
    encoding: Any,
    base_url: str | None,
    *,
    estimated: bool = False,
) -> list[types.Diagnostic]:
    """One diagnostic per payload finding (0-based ``line``), spanning the line's code. ``estimated``: the
    findings come from an estimated profile, and each message says so."""
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
    kept = as_configured(found, text, path, config_for(path)[0])
    positions = DocumentPositions(lines, encoding)
    return [
        to_diagnostic(diagnostic_json(f, positions, uri=uri, doc_path=path, base_url=base_url)) for f in kept
    ]
