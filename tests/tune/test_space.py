"""Search spaces: the comment, pyproject and command-line grammar, ranges, sizes and where each is read."""

from __future__ import annotations

from pathlib import Path

import pytest
from nki_studio.tune.space import SpaceError, comment_space, parse_space, parse_values, resolve_space

KERNEL = """import nki
TILE_N = 128

# nki-studio: tune TILE_N=128,256 BUFS=1..3 if TILE_N * BUFS <= 512
# nki-studio: simulate x=float32[128,512]
@nki.jit
def k(x):
    return x
"""


def test_values_ranges_and_kinds() -> None:
    assert parse_values("B", "1..4") == (1, 2, 3, 4)
    assert parse_values("B", "1..3,8,2") == (1, 2, 3, 8)  # duplicates dropped, order kept
    assert parse_values("X", "0.5,fast") == (0.5, "fast")
    with pytest.raises(SpaceError):
        parse_values("B", "4..1")


def test_space_with_constraints_and_size() -> None:
    space = parse_space("TILE_N=128,256,512 BUFS=1..4 if TILE_N * BUFS <= 1024; BUFS != 3")
    assert space.size == 12
    points = [p for p in space.points() if space.allows(p)]
    assert {"TILE_N": 512, "BUFS": 2} in points
    assert {"TILE_N": 512, "BUFS": 4} not in points and {"TILE_N": 128, "BUFS": 3} not in points
    assert len(points) == 8  # 128 and 256: BUFS 1, 2, 4; 512: BUFS 1, 2
    assert space.contains({"TILE_N": 128, "BUFS": 1}) and not space.contains({"TILE_N": 64, "BUFS": 1})


def test_huge_space_is_counted_without_enumerating() -> None:
    space = parse_space(" ".join(f"P{i}=1..10" for i in range(6)))
    assert space.size == 10**6


@pytest.mark.parametrize(
    "text",
    ["TILE_N", "TILE_N=1,2 TILE_N=3", "", "A=1 if B > 2", "A=1 if __import__('os')", "A=1 if A.real > 0"],
)
def test_malformed_spaces_are_refused(text: str) -> None:
    with pytest.raises(SpaceError):
        parse_space(text)


def test_comment_in_the_block_above_the_decorator() -> None:
    assert comment_space(KERNEL, decorator_line=6) == "TILE_N=128,256 BUFS=1..3 if TILE_N * BUFS <= 512"
    assert comment_space(KERNEL.replace("# nki-studio: simulate", "x = 1  #"), decorator_line=6) is None


def test_precedence_command_line_comment_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.nki-studio.tune]\n"k.py::k" = { space = "TILE_N=64", constraints = ["TILE_N > 0"] }\n'
    )
    path = str(tmp_path / "k.py")
    from_comment = resolve_space(KERNEL, path, "k", 6)
    assert from_comment.origin == "tune comment" and list(from_comment.params) == ["TILE_N", "BUFS"]
    no_comment = KERNEL.replace("# nki-studio: tune", "# tune")
    from_pyproject = resolve_space(no_comment, path, "k", 6, constraints=["TILE_N < 100"])
    assert from_pyproject.params == {"TILE_N": (64,)}
    assert [c.text for c in from_pyproject.constraints] == ["TILE_N > 0", "TILE_N < 100"]
    from_cli = resolve_space(KERNEL, path, "k", 6, space="TILE_N=512")
    assert from_cli.params == {"TILE_N": (512,)} and from_cli.origin == "command line"
    with pytest.raises(SpaceError, match="no search space"):
        resolve_space(no_comment, str(tmp_path / "other.py"), "other", 6)
