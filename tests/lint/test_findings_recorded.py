"""The lint speed work changes no finding: the findings of the benchmark's generated module
(``benchmarks/lint_bench.py``, built here at test time), of every rule's documented examples and of the example
kernels are compared, field by field, with the list the linter produced before that work (commit 40fc1f1).

``python tests/lint/test_findings_recorded.py`` writes the list again from the linter it imports (done once, on
that commit's code, to record it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from nki_studio.core.findings import Finding, Span
from nki_studio.nkilint.api import lint_paths
from nki_studio.nkilint.rule import all_rules
from nkilint_testutil import lint

ROOT = Path(__file__).resolve().parents[2]
RECORDED = Path(__file__).parent / "data" / "recorded_findings.json"
GENERATED_LINES = 600  # 23 kernel + helper blocks of the benchmark module


def _row(finding: Finding) -> list[object]:
    fix = finding.fix
    edits = [] if fix is None else [[*_span(e.span), e.new_text] for e in fix.edits]
    return [
        finding.code,
        Path(finding.path).name,
        *_span(finding.span),
        finding.severity.value,
        finding.message,
        None if fix is None else fix.title,
        edits,
    ]


def _span(span: Span) -> tuple[int, int, int, int]:
    return (span.line, span.column, span.end_line, span.end_column)


def current_findings() -> dict[str, list[list[object]]]:
    """Findings of each input, as rows of plain values (``_row``)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from lint_bench import generate
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    out = {"generated module": [_row(f) for f in lint(generate(GENERATED_LINES))]}
    for code, rule in sorted(all_rules().items()):
        for i, example in enumerate([*rule.bad, *rule.good]):
            if example.checked:
                found = lint(example.code, example.nki_version or None)
                out[f"{code} example {i}"] = [_row(f) for f in found]
    out["examples/"] = [_row(f) for f in lint_paths([str(ROOT / "examples")])]
    return out


def test_findings_are_those_recorded_before_the_speed_work() -> None:
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    current = current_findings()
    assert sorted(current) == sorted(recorded)
    for name, rows in recorded.items():
        assert current[name] == rows, name


def test_the_recorded_list_has_findings_to_compare() -> None:
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    assert len(recorded["generated module"]) >= GENERATED_LINES // 30  # an NKI201 per block at least
    assert sum(len(rows) for rows in recorded.values()) > 4 * len(
        recorded["generated module"]
    )  # examples too


if __name__ == "__main__":
    RECORDED.parent.mkdir(exist_ok=True)
    RECORDED.write_text(json.dumps(current_findings(), indent=1) + "\n", encoding="utf-8")
