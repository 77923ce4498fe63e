"""The start-up fast path is skipped cleanly where ``select`` cannot wait on a pipe (Windows), checked here
with the platform patched: the full server gets the client's streams untouched."""

from __future__ import annotations

import io
import os
import sys

import pytest
from nki_studio.lsp.fastpath import start


class NoFileno(io.BytesIO):
    def fileno(self) -> int:  # the early phase would need it: it must not run
        raise AssertionError("the early phase ran")


@pytest.mark.parametrize(("platform", "os_name"), [("win32", "nt"), ("win32", "posix")])
def test_fast_path_is_skipped_on_windows(
    monkeypatch: pytest.MonkeyPatch, platform: str, os_name: str
) -> None:
    monkeypatch.setattr(sys, "platform", platform)
    monkeypatch.setattr(os, "name", os_name)
    monkeypatch.delenv(start.ENV, raising=False)
    assert not start.supported() and not start.enabled()
    stdin, stdout = NoFileno(b"Content-Length: 2\r\n\r\n{}"), io.BytesIO()
    full = start.fast_start(stdin, stdout)
    assert full.input is stdin and full.output is stdout and full.handover is None
    assert stdin.tell() == 0 and stdout.getvalue() == b""  # nothing read, nothing answered


def test_fast_path_is_on_where_supported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(os, "name", "posix")
    monkeypatch.delenv(start.ENV, raising=False)
    assert start.supported() and start.enabled()
    monkeypatch.setenv(start.ENV, "0")
    assert not start.enabled()
