"""``profile compare`` follows source lines across an edit (``nki_studio.profile.line_align``), on the two
versions of ``moved_kernels``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from fixturewriters import write_parquet
from moved_kernels import A as _A
from moved_kernels import B as _B
from moved_kernels import marker_line as _line
from nki_studio.estimate.profile import estimate_profile
from nki_studio.model.targets import Target
from nki_studio.profile.analyze import ProfileReport, analyze_profile
from nki_studio.profile.bounds_text import compare, compare_text
from nki_studio.profile.line_align import (
    BY_NUMBER,
    BY_TEXT,
    SNAPSHOT_NAME,
    SourceText,
    align,
    line_deltas,
    read_snapshot,
    write_snapshot,
)
from nki_studio.sim.api import simulate
from test_profile_bounds import _timeline


@pytest.fixture(scope="module")
def versions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ProfileReport, ProfileReport]:
    """Both versions simulated and estimated; each saved as kernel.py in its own directory."""
    root = tmp_path_factory.mktemp("versions")
    x = np.random.default_rng(1).standard_normal((128, 512)).astype(np.float32)
    reports = []
    for name, text in (("a", _A), ("b", _B)):
        path = root / name / "kernel.py"
        path.parent.mkdir()
        path.write_text(text)
        result = simulate(str(path), x, trace=True)
        assert result.trace is not None, result
        reports.append(analyze_profile(estimate_profile(tuple(result.trace), Target()), roots=[path.parent]))
    return root, reports[0], reports[1]


def _busy(report: ProfileReport, line: int) -> int:
    return sum(m.busy_ns for m in report.metrics.lines if m.line == line)


def test_the_moved_hot_line_is_followed_and_its_delta_is_the_difference_of_its_times(
    versions: tuple[Path, ProfileReport, ProfileReport],
) -> None:
    _, a, b = versions
    hot_a, hot_b = _line(_A, "hot"), _line(_B, "hot")
    assert hot_b == hot_a + 2
    cmp = compare(a, b, {"kernel.py": SourceText.of(_A)}, {"kernel.py": SourceText.of(_B)})
    assert cmp["lines_matched_by"].startswith(BY_TEXT)
    (row,) = [r for r in cmp["lines"] if r["line_a"] == hot_a]
    ta, tb = _busy(a, hot_a), _busy(b, hot_b)
    assert ta > 0 and tb > ta  # twice the trips
    assert (row["line_b"], row["a_ns"], row["b_ns"], row["delta_ns"]) == (hot_b, ta, tb, tb - ta)
    assert "# marker: hot" in row["text"]
    removed = {r["line_a"]: r["a_ns"] for r in cmp["removed_lines"]}
    added = {r["line_b"]: r["b_ns"] for r in cmp["added_lines"]}
    assert removed == {_line(_A, "removed"): _busy(a, _line(_A, "removed"))}
    assert added == {_line(_B, "added"): _busy(b, _line(_B, "added"))}
    assert all(v > 0 for v in [*removed.values(), *added.values()])
    text = "\n".join(compare_text(cmp))
    assert f"line {hot_a} → {hot_b}:" in text
    assert "Lines only in A (removed): 1" in text and f"line {_line(_A, 'removed')}:" in text
    assert "Lines only in B (added): 1" in text and f"line {_line(_B, 'added')}:" in text


def test_without_source_text_lines_are_matched_by_number_and_it_says_so(
    versions: tuple[Path, ProfileReport, ProfileReport],
) -> None:
    _, a, b = versions
    cmp = compare(a, b)
    assert cmp["lines_matched_by"].startswith(BY_NUMBER)
    assert cmp["removed_lines"] == cmp["added_lines"] == []
    assert all(r["line_a"] == r["line_b"] for r in cmp["lines"])
    hot_a = _line(_A, "hot")
    (row,) = [r for r in cmp["lines"] if r["line_a"] == hot_a]
    assert row["b_ns"] == _busy(b, hot_a) != _busy(b, _line(_B, "hot"))  # not the hot line any more
    assert "lines matched by number: source text unavailable" in "\n".join(compare_text(cmp))


def test_cli_compare_reads_text_files_and_the_snapshot_stored_with_a_profile(
    versions: tuple[Path, ProfileReport, ProfileReport], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from nki_studio.cli.main import main

    root, a, b = versions
    pa = write_parquet(_timeline(a.profile), tmp_path / "pa")
    pb = write_parquet(_timeline(b.profile), tmp_path / "pb")
    roots = ["--root", str(root / "a"), "--root", str(root / "b")]
    hot_a, hot_b = _line(_A, "hot"), _line(_B, "hot")

    assert main(["profile", "compare", str(pa), str(pb), *roots]) == 0
    assert BY_NUMBER in capsys.readouterr().out
    old = tmp_path / "old.py"  # the 'before' version under another name, as `git show` would give it
    old.write_text(_A)
    new_args = ["--text-a", str(old), "--text-b", str(root / "b" / "kernel.py"), "--json"]
    assert main(["profile", "compare", str(pa), str(pb), *roots, *new_args]) == 0
    cmp = json.loads(capsys.readouterr().out)
    assert cmp["lines_matched_by"].startswith(BY_TEXT)
    assert any(r["line_a"] == hot_a and r["line_b"] == hot_b for r in cmp["lines"])
    assert [r["line_a"] for r in cmp["removed_lines"]] == [_line(_A, "removed")]

    # the snapshots stored next to the profiles (as the remote round trip writes them) do the same
    write_snapshot(Path(pa) if Path(pa).is_dir() else Path(pa).parent, {str(root / "a" / "kernel.py"): _A})
    write_snapshot(Path(pb) if Path(pb).is_dir() else Path(pb).parent, {str(root / "b" / "kernel.py"): _B})
    assert main(["profile", "compare", str(pa), str(pb), *roots]) == 0
    out = capsys.readouterr().out
    assert f"line {hot_a} → {hot_b}:" in out and BY_NUMBER not in out
    assert main(["profile", "compare", str(pa), str(pb), "--text-a", str(tmp_path / "missing.py")]) == 2


def test_a_snapshot_whose_hash_does_not_match_is_ignored(tmp_path: Path) -> None:
    write_snapshot(tmp_path, {"k.py": "x = 1\n"})
    assert read_snapshot(tmp_path)["k.py"].lines == ("x = 1",)
    body = json.loads((tmp_path / SNAPSHOT_NAME).read_text())
    body["files"]["k.py"]["text"] = "x = 2\n"
    (tmp_path / SNAPSHOT_NAME).write_text(json.dumps(body))
    assert read_snapshot(tmp_path) == {}


def test_align_pairs_equal_lines_in_order_and_an_edited_line_is_removed_plus_added() -> None:
    a = ["def k():", "    x = 1", "    for i in range(4):", "        work(i)", "    return x"]
    b = ["def k():", "    # new", "    x = 1", "    for i in range(8):", "        work(i)", "    return x"]
    al = align(a, b)
    assert al.a_to_b == {1: 1, 2: 3, 4: 5, 5: 6}
    assert al.removed == {3} and al.added == {2, 4}
    got = line_deltas(
        "", {4: 100, 3: 5}, {5: 250, 4: 7}, SourceText.of("\n".join(a)), SourceText.of("\n".join(b))
    )
    assert [(r["line_a"], r["line_b"], r["delta_ns"]) for r in got["matched"]] == [(4, 5, 150)]
    assert [(r["line_a"], r["a_ns"]) for r in got["removed"]] == [(3, 5)]
    assert [(r["line_b"], r["b_ns"]) for r in got["added"]] == [(4, 7)]
