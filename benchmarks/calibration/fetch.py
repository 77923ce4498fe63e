"""Public files the suite needs but must not commit (other projects' kernels and NumPy references), fetched at
run time at the commit the measurement table pins, and cached.

A file comes from the cache (``.cache/calibration/OWNER+NAME/COMMIT/PATH``, git-ignored), else from a local git
mirror given with ``--mirror OWNER/NAME=GIT_DIR`` (for machines without network access), else from
``raw.githubusercontent.com``.
"""

from __future__ import annotations

import subprocess
import urllib.error
import urllib.request
from pathlib import Path

from table import ROOT

CACHE = ROOT / ".cache" / "calibration"
RAW_URL = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"
TIMEOUT_S = 30


class FetchError(RuntimeError):
    """The file could not be had from the cache, a mirror or the network."""


def _from_mirror(git_dir: Path, commit: str, path: str) -> bytes:
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"], capture_output=True, check=False
    )
    if done.returncode != 0:
        raise FetchError(f"{git_dir}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def _from_network(repo: str, commit: str, path: str) -> bytes:
    url = RAW_URL.format(repo=repo, commit=commit, path=path)
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
            body: bytes = response.read()
            return body
    except (urllib.error.URLError, TimeoutError) as exc:
        raise FetchError(f"{url}: {exc}") from exc


def fetch(repo: str, commit: str, path: str, mirrors: dict[str, Path], cache: Path = CACHE) -> Path:
    """The local copy of ``repo``'s ``path`` at ``commit`` (fetched and cached on first use)."""
    target = cache / repo.replace("/", "+") / commit / path
    if target.is_file():
        return target
    body = _from_mirror(mirrors[repo], commit, path) if repo in mirrors else _from_network(repo, commit, path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(body)
    return target
