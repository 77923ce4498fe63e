"""``nki-studio lint``: formats, exit codes, directory recursion, overrides."""

from __future__ import annotations

import json
import os

import pytest
from nki_studio.cli.main import main

CLEAN = "import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef k(x):\n    return x\n"
WARN = (
    "import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef k(x):\n    for i in nl.affine_range(2):\n"
    "        pass\n    return x\n"
)
ERROR = (
    "import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef k(x, n):\n    for i in nl.dynamic_range(n):\n"
    "        pass\n    return x\n"
)
KEYS = {"path", "line", "column", "end_line", "end_column", "code", "name", "severity", "message"}


@pytest.fixture()
def tree(tmp_path):  # type: ignore[no-untyped-def]
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "clean.py").write_text(CLEAN)
    (tmp_path / "a" / "warn.py").write_text(WARN)
    (tmp_path / "b.py").write_text(ERROR)
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "skip.py").write_text(ERROR)
    return tmp_path


def test_exit_codes(tree, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["lint", str(tree / "a" / "clean.py")]) == 0
    assert main(["lint", str(tree / "a")]) == 0  # warnings only
    assert (
        main(["lint", str(tree)]) == 0
    )  # no version named: dynamic_range-only code is 0.6 code (NKI202 warns)
    assert main(["lint", str(tree), "--nki-version", "0.7"]) == 1  # NKI202 is an error on 0.7
    assert main(["lint", str(tree), "--nki-version", "0.6"]) == 0
    assert main(["lint", str(tree / "missing.py")]) == 2
    assert main(["lint", str(tree), "--target", "trn9"]) == 2
    assert main(["lint", str(tree), "--format", "yaml"]) == 2


def test_json_keys_and_fix(tree, capsys) -> None:  # type: ignore[no-untyped-def]
    capsys.readouterr()
    main(["lint", str(tree), "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert {os.path.basename(d["path"]) for d in data} == {"warn.py", "b.py"}  # hidden dir skipped
    for d in data:
        assert set(d) - {"fix"} == KEYS
        assert d["severity"] in ("error", "warning", "info") and d["line"] >= 1 and d["column"] >= 1
    warn = next(d for d in data if d["code"] == "NKI201")
    assert (warn["line"], warn["column"], warn["end_column"]) == (7, 14, 29)
    assert warn["fix"]["edits"][0]["new_text"] == "range"


def test_text_shows_source_and_caret(tree, capsys) -> None:  # type: ignore[no-untyped-def]
    capsys.readouterr()
    main(["lint", str(tree / "a" / "warn.py")])
    out = capsys.readouterr().out.splitlines()
    i = next(n for n, line in enumerate(out) if "NKI201" in line)
    assert out[i].endswith("nl.affine_range is deprecated (alias of range()); use range()")
    assert out[i + 2] == "7 |     for i in nl.affine_range(2):"
    assert out[i + 3].startswith("  |              " + "^" * len("nl.affine_range") + " ")


def test_select_ignore_and_sarif_github(tree, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["lint", str(tree), "--nki-version", "0.7", "--ignore", "NKI202"]) == 0
    assert main(["lint", str(tree), "--nki-version", "0.7", "--select", "NKI1"]) == 0
    capsys.readouterr()
    main(["lint", str(tree / "b.py"), "--nki-version", "0.7", "--format", "sarif"])
    sarif = json.loads(capsys.readouterr().out)
    result = sarif["runs"][0]["results"][0]
    assert sarif["version"] == "2.1.0" and result["ruleId"] == "NKI202" and result["level"] == "error"
    main(["lint", str(tree / "b.py"), "--nki-version", "0.7", "--format", "github"])
    line = capsys.readouterr().out.strip()
    assert (
        line.startswith("::error file=")
        and "line=7" in line
        and "title=NKI202 dynamic-range-removed::" in line
    )


def test_fix_in_place(tree, capsys) -> None:  # type: ignore[no-untyped-def]
    target = tree / "a" / "warn.py"
    target.write_text(
        WARN.replace("    return x\n", "    for j in nl.static_range(3):\n        pass\n    return x\n")
    )
    assert main(["lint", str(target), "--fix"]) == 0
    text = target.read_text()
    assert "affine_range" not in text and "static_range" not in text and text.count("in range(") == 2
    assert "All checks passed." in capsys.readouterr().out
