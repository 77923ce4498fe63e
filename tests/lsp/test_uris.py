"""File URIs in every spelling clients and libraries write them, Windows ones included (``lsp.uris``)."""

from __future__ import annotations

from pathlib import PureWindowsPath

import pygls.uris
import pytest
from nki_studio.lsp.uris import ByUri, canonical, find_document

VSCODE = "file:///c%3A/Users/me/My%20Kernels/add.py"  # what VS Code sends on Windows


def test_windows_spellings_of_one_file_are_one_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pygls.uris, "IS_WIN", True)  # pygls as it runs on Windows
    spellings = [
        VSCODE,
        "file:///C:/Users/me/My%20Kernels/add.py",  # Path.as_uri(), neovim, emacs
        "file:///c:/Users/me/My Kernels/add.py",
        pygls.uris.from_fs_path("C:\\Users\\me\\My Kernels\\add.py"),
        PureWindowsPath("C:\\Users\\me\\My Kernels\\add.py").as_uri(),
    ]
    assert {canonical(s) for s in spellings if s} == {VSCODE}
    assert pygls.uris.to_fs_path(canonical(spellings[1])) == "c:\\Users\\me\\My Kernels\\add.py"


def test_posix_and_other_uris() -> None:
    assert (
        canonical("file:///home/u/a%20b.py")
        == canonical("file:///home/u/a b.py")
        == "file:///home/u/a%20b.py"
    )
    assert canonical("file:///home/u/Add.py") != canonical(
        "file:///home/u/add.py"
    )  # case kept outside drives
    assert canonical("untitled:Untitled-1") == "untitled:Untitled-1"
    assert canonical("file://Server/Share/k.py") == "file://server/Share/k.py"  # UNC host is case-insensitive


def test_by_uri_and_find_document_accept_any_spelling() -> None:
    painted: ByUri[int] = ByUri()
    painted["file:///C:/Users/me/My%20Kernels/add.py"] = 1
    assert (
        VSCODE in painted and painted[VSCODE] == 1 and painted.get(VSCODE) == 1 and list(painted) == [VSCODE]
    )
    documents = {VSCODE: "doc"}
    assert find_document(documents, "file:///C:/Users/me/My Kernels/add.py") == "doc"
    assert find_document(documents, "file:///d%3A/add.py") is None
