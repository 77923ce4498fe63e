"""The ``nki-studio serve`` sub-command is registered and documented."""

from __future__ import annotations

import subprocess
import sys

import pytest
from nki_studio.cli.main import main


def test_serve_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--help"]) == 0
    out = capsys.readouterr().out
    assert "stdio" in out and "--log-level" in out


def test_serve_rejects_unknown_option(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--tcp"]) == 2
    assert "unrecognized arguments" in capsys.readouterr().err


def test_serve_imports_neither_numpy_nor_the_simulator() -> None:
    # Editors start `serve`; the other sub-commands' stacks would only slow the first diagnostics.
    code = (
        "import sys; from nki_studio.cli.main import main; main(['serve', '--help']); "
        "print(sorted(m for m in ('numpy', 'nki_studio.sim', 'nki_studio.profile.metrics') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
