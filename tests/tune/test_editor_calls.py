"""What the editor's "Tune kernel…" asks of the service besides the search: the declared space to pre-fill
(comment over pyproject, with its size, nothing when none is declared), the winner's whole-line edits, and a
search cancelled before it starts (nothing runs, the note says so), and the progress words."""

from __future__ import annotations

from pathlib import Path

from nki_studio.service.settings import Settings
from nki_studio.service.tune import Progress, TuneOptions, declared_space, tune, winner_edits

KERNEL = "stream_scale_kernel"


def test_declared_space_comment_then_pyproject_then_nothing(project: Path) -> None:
    path = project / "stream_scale.py"
    source = path.read_text()
    comment = declared_space(str(path), source, KERNEL)
    assert comment["origin"] == "tune comment" and comment["size"] == 15
    assert comment["space"].startswith("TILE_F=128,256,512,1024,1536 BUFS=1..3 if ")
    without = source.replace("# nki-studio: tune", "# tune")
    assert declared_space(str(path), without, KERNEL) == {
        "kernel": KERNEL,
        "space": "",
        "origin": "",
        "size": None,
    }
    (project / "pyproject.toml").write_text(
        '[tool.nki-studio.tune]\n"stream_scale.py::stream_scale_kernel" = '
        '{ space = "TILE_F=256,512 BUFS=1,2", constraints = ["TILE_F * BUFS <= 512"] }\n'
    )
    assert declared_space(str(path), without, KERNEL) == {
        "kernel": KERNEL,
        "space": "TILE_F=256,512 BUFS=1,2 if TILE_F * BUFS <= 512",
        "origin": "[tool.nki-studio.tune]",
        "size": 4,
    }


def test_winner_edits_replace_only_the_changed_lines(project: Path) -> None:
    source = (project / "stream_scale.py").read_text()
    lines = source.splitlines(keepends=True)
    edits = winner_edits(source, KERNEL, {"TILE_F": 1024, "BUFS": 1})
    assert edits == [{"line": lines.index("TILE_F = 256\n"), "replace": True, "text": "TILE_F = 1024\n"}]
    assert winner_edits(source, KERNEL, {"TILE_F": 256, "BUFS": 1}) == []
    assert winner_edits(source, KERNEL, None) == []


def test_a_search_cancelled_before_it_starts_runs_nothing(project: Path) -> None:
    path = project / "stream_scale.py"
    settings = Settings(trusted_workspace=True)
    options = TuneOptions(space="TILE_F=512,1024 BUFS=2", workers=1, cache=False)
    report = tune(str(path), path.read_text(), settings, options, cancelled=lambda: True)
    assert report["evaluated"] == 0 and report["winner"] is None and report["candidates"] == []
    assert report["notes"] == ["cancelled: 0 of 2 points tried"]


def test_progress_text_is_the_bar_and_the_editor_message() -> None:
    assert Progress(3, 12, 2, 1, 30.0).text == "3/12  1 cached  ETA 1m30s"
    assert Progress(0, 12, 0, 0, 0.0).text == "0/12  0 cached  ETA ?"
