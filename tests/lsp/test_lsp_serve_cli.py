"""The ``nki-studio serve`` sub-command is registered and documented."""

from __future__ import annotations

import pytest
from nki_studio.cli.main import main


def test_serve_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--help"]) == 0
    out = capsys.readouterr().out
    assert "stdio" in out and "--log-level" in out


def test_serve_rejects_unknown_option(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--tcp"]) == 2
    assert "unrecognized arguments" in capsys.readouterr().err
