"""The remote flow from a Windows laptop (OpenSSH client for Windows), checked on Linux with the platform
patched and Windows paths: no connection sharing (Win32-OpenSSH has no ControlMaster), remote paths stay
POSIX, local scp/rsync operands never carry a drive letter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path, PureWindowsPath

import pytest
from nki_studio.remote import flow
from nki_studio.remote.commands import local_operand, multiplexing_supported, scp_argv, ssh_argv
from nki_studio.remote.config import settings_from
from nki_studio.remote.harness import relative_kernel_path
from nki_studio.verify.spec import SimSpec, TensorSpec


def _pairs(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "-o"]


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "win32")


def test_windows_client_turns_multiplexing_off_explicitly(windows: None) -> None:
    assert not multiplexing_supported()
    s = settings_from({"host": "trn"})
    for argv in (ssh_argv(s, "true"), scp_argv(s, ["./job"], "trn:w/job")):
        # explicit, so a ControlMaster in the user's ssh config cannot fail the connection
        assert {"ControlMaster=no", "ControlPath=none"} <= set(_pairs(argv))


def test_users_own_control_options_win_on_windows(windows: None) -> None:
    s = settings_from({"host": "trn", "sshOptions": ["-o", "ControlPath=C:/Users/me/.ssh/cm"]})
    assert "ControlPath=none" not in _pairs(ssh_argv(s, "true"))


def test_posix_clients_keep_their_shared_connection() -> None:
    assert multiplexing_supported("linux") and multiplexing_supported("darwin")
    assert "ControlPath=none" not in _pairs(ssh_argv(settings_from({"host": "trn"}), "true"))


def test_no_shared_master_is_started_on_windows(
    windows: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("ssh -M started on Windows")

    monkeypatch.setattr(subprocess, "run", refuse)
    kernel = tmp_path / "k.py"
    kernel.write_text("")
    spec = SimSpec(kernel="k", args=(("a", TensorSpec("float32", (2, 2))),))
    job = flow.RemoteJob(kernel, spec, settings_from({"host": "trn"}), tmp_path / "cache")
    session = flow._Session(job, log=lambda line: None, progress=lambda *a: None, cancelled=lambda: False)
    session.connect()
    assert session.s.control_path is None


@pytest.mark.parametrize("directory", [False, True])
def test_local_operands_carry_no_drive_letter(directory: bool) -> None:
    path = PureWindowsPath("C:\\Users\\me\\AppData\\Local\\Temp\\nki-studio-upload-1\\job")
    cwd, operand = local_operand(path, directory=directory)
    assert cwd == "C:\\Users\\me\\AppData\\Local\\Temp\\nki-studio-upload-1"
    assert operand == ("./job/" if directory else "./job") and ":" not in operand


def test_remote_kernel_path_is_posix_from_a_windows_workspace() -> None:
    kernel = PureWindowsPath("C:\\Users\\me\\ws\\kernels\\add.py")
    assert relative_kernel_path(kernel, PureWindowsPath("C:\\Users\\me\\ws")) == "kernels/add.py"  # type: ignore[arg-type]
    assert relative_kernel_path(kernel, PureWindowsPath("D:\\elsewhere")) == "add.py"  # type: ignore[arg-type]


def test_cache_folder_names_are_legal_windows_names(tmp_path: Path) -> None:
    from nki_studio.remote import cache

    entry = cache.entry_dir(tmp_path, Path("add.py"), "add", "me@trn:2022")
    for part in entry.relative_to(tmp_path).parts:
        assert not set(part) & set('<>:"/\\|?*'), part  # characters Windows refuses in file names
