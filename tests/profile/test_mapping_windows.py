"""Source mapping with Windows-style paths on Linux: drive letters, backslashes, UNC shares, mixed separators
and case-insensitive file systems (``profile.mapping``). The workspace side is built from PureWindowsPath,
as ``index_workspace`` would give it on Windows."""

from __future__ import annotations

from pathlib import Path, PureWindowsPath
from typing import Any

import pytest
from nki_studio.profile import mapping
from nki_studio.profile.mapping import map_path


def _index(*paths: str) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for p in paths:
        win = PureWindowsPath(p)
        out.setdefault(win.name, []).append(win)
    return out


@pytest.mark.parametrize(
    ("path", "parts"),
    [
        ("C:\\Users\\me\\proj\\add.py", ("Users", "me", "proj", "add.py")),
        ("C:/Users/me/proj\\add.py", ("Users", "me", "proj", "add.py")),  # mixed separators
        ("c:\\add.py", ("add.py",)),
        ("\\\\server\\share\\proj\\add.py", ("proj", "add.py")),  # UNC: the share is the anchor
        ("/home/ubuntu/proj/add.py", ("home", "ubuntu", "proj", "add.py")),
        ("proj\\add.py", ("proj", "add.py")),
    ],
)
def test_parts_of_windows_and_posix_paths(path: str, parts: tuple[str, ...]) -> None:
    assert mapping._parts(path) == parts


def test_linux_recorded_path_finds_the_windows_workspace_file_by_suffix() -> None:
    index = _index("C:\\Users\\me\\ws\\kernels\\add.py", "C:\\Users\\me\\ws\\old\\add.py")
    m = map_path("/home/ubuntu/ws/kernels/add.py", {}, index, case_insensitive=True)
    assert m.local == PureWindowsPath("C:\\Users\\me\\ws\\kernels\\add.py")
    assert m.how == "longest common path suffix (3 components)"


def test_case_insensitive_file_system_matches_other_case() -> None:
    index = _index("C:\\Users\\me\\WS\\Kernels\\Add.py", "C:\\Users\\me\\WS\\Other\\Add.py")
    m = map_path("/home/ubuntu/ws/kernels/add.py", {}, index, case_insensitive=True)
    assert m.local == PureWindowsPath("C:\\Users\\me\\WS\\Kernels\\Add.py"), m
    # a case-sensitive file system (Linux) does not: add.py is not Add.py there
    assert map_path("/home/ubuntu/ws/kernels/add.py", {}, index, case_insensitive=False).local is None


def test_windows_recorded_path_compares_case_insensitively_everywhere() -> None:
    index = _index("C:\\ws\\Kernels\\add.py", "C:\\ws\\other\\add.py")
    m = map_path("D:/Build/KERNELS\\ADD.PY", {}, index, case_insensitive=False)
    assert m.local == PureWindowsPath("C:\\ws\\Kernels\\add.py")


def test_default_case_rule_per_platform() -> None:
    assert mapping.case_insensitive_fs("win32") and mapping.case_insensitive_fs("darwin")
    assert not mapping.case_insensitive_fs("linux")


def test_mapping_prefix_applies_to_windows_paths_whatever_case_and_separator(tmp_path: Path) -> None:
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "add.py").write_text("")
    mappings = {"c:/Build/Proj": str(tmp_path)}
    m = map_path("C:\\build\\proj\\kernels\\add.py", mappings, {}, case_insensitive=False)
    assert m.local == (tmp_path / "kernels" / "add.py").resolve() and m.how.startswith("path mapping")
    # whole components only: C:\build\project is not under C:\build\proj
    m = map_path("C:\\build\\project\\kernels\\add.py", mappings, {}, case_insensitive=False)
    assert m.local is None


def test_posix_mapping_prefix_keeps_its_case_on_a_case_sensitive_system(tmp_path: Path) -> None:
    (tmp_path / "add.py").write_text("")
    assert (
        map_path("/home/u/add.py", {"/home/u": str(tmp_path)}, {}, case_insensitive=False).local is not None
    )
    assert map_path("/HOME/u/add.py", {"/home/u": str(tmp_path)}, {}, case_insensitive=False).local is None
    assert map_path("/HOME/u/add.py", {"/home/u": str(tmp_path)}, {}, case_insensitive=True).local is not None
