"""NKI6xx codes live in the one catalogue: findings take name, severity and source from it, and the
project config (``ignore``, ``severity``) and ``# noqa`` treat them like lint codes."""

from __future__ import annotations

from nki_studio.core.codes import catalogue, lookup
from nki_studio.core.findings import Severity, Span
from nki_studio.core.simulation_codes import ON_CHIP_PEAK, SIMULATION_WARNING
from nki_studio.nkilint.api import lint_source
from nki_studio.nkilint.config import config_from_table
from nki_studio.nkilint.engine import as_configured
from nki_studio.nkilint.rule import all_rules
from nki_studio.verify.report import findings

SOURCE = "import nki\n\n\n@nki.jit\ndef k(a):\n    t = a  # noqa: NKI630\n    return t\n"


def _peak_result(line: int) -> dict[str, object]:
    live = [{"file": "/k.py", "line": line, "bytesPerPartition": 2048, "name": "t"}]
    return {"status": "passed", "peak": {"sbuf": {"live": live, "peakBytes": 2048, "capacityBytes": 229376}}}


def test_every_code_is_in_the_catalogue_with_its_family() -> None:
    all_rules()
    codes = catalogue()
    assert {"NKI000", "NKI301", "NKI505", "NKI601", "NKI630", "NKI999"} <= set(codes)
    assert lookup("NKI630").family.source == "nki-sim" and lookup("NKI301").family.source == "nkilint"
    assert lookup("NKI630").docs_path == "docs/rules/NKI630.md"


def test_simulation_findings_take_name_severity_and_source_from_the_catalogue() -> None:
    [peak] = findings(_peak_result(6), "/k.py", None)
    assert (peak.code, peak.name, peak.severity, peak.source) == (
        ON_CHIP_PEAK.code,
        ON_CHIP_PEAK.name,
        Severity.INFO,
        "nki-sim",
    )


def test_noqa_severity_and_ignore_apply_to_simulation_codes() -> None:
    peak = findings(_peak_result(6), "/k.py", None)
    assert as_configured(peak, SOURCE, "/k.py", config_from_table({})) == []  # the noqa comment of line 6
    warning = SIMULATION_WARNING.finding("/k.py", Span(5, 1, 5, 2), "simulation: w")
    raised = as_configured([warning], SOURCE, "/k.py", config_from_table({"severity": {"NKI622": "error"}}))
    assert [f.severity for f in raised] == [Severity.ERROR]
    assert as_configured([warning], SOURCE, "/k.py", config_from_table({"ignore": ["NKI6"]})) == []


def test_a_noqa_of_a_simulation_code_is_not_an_unused_suppression() -> None:
    assert "NKI001" not in {f.code for f in lint_source(SOURCE, "/nonexistent/k.py", config_from_table({}))}
