"""Make the reference environment of ``benchmarks/legacy_sim_corpus.py``: CPU builds of torch, jax and scipy.

nki-samples' PyTorch and JAX tutorial scripts build their inputs and references with torch or jax, two unit
tests and a tutorial take their reference from scipy, and the rotary tutorial logs with loguru and takes its
reference from transformers' Llama code; none of them is a dependency of nki-studio (nor of its CI).
This installs them with pip (``pip install --target``, from the package registries pip is configured for) into
``.cache/reference-env`` (ignored by git), for the benchmark only: pass the printed folder as the corpus script's
``--reference-packages``, which takes from it only the packages ``.venv`` cannot import (numpy, ml_dtypes stay
``.venv``'s). torch is pinned to a ``+cpu`` build: the plain ``torch`` requirement takes a CUDA build of several
GB; pip finds the CPU wheel where it is configured to look (a find-links folder, or a CPU index given with
``--pip-arg=--extra-index-url=URL``). About 1.7 GB installed.

Usage: ``.venv/bin/python benchmarks/reference_env.py [--into DIR] [--pip-arg=ARG ...]``
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_ENV = ROOT / ".cache" / "reference-env"
# What the corpus's scripts and tests import for their inputs and references.
REQUIREMENTS = ("torch==2.13.0+cpu", "jax[cpu]", "scipy", "loguru", "transformers")


def install(into: Path, pip_args: list[str]) -> None:
    """Install ``REQUIREMENTS`` into ``into`` (a folder for ``PYTHONPATH``), replacing what is there."""
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--upgrade", "--target", str(into)]
    subprocess.run([*command, *pip_args, *REQUIREMENTS], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--into", type=Path, default=REFERENCE_ENV, help="the folder to install into")
    parser.add_argument("--pip-arg", action="append", default=[], help="an extra argument for pip install")
    args = parser.parse_args()
    start = time.monotonic()
    install(args.into, args.pip_arg)
    size = sum(p.stat().st_size for p in args.into.rglob("*") if p.is_file())
    print(f"installed {', '.join(REQUIREMENTS)} in {time.monotonic() - start:.0f} s ({size / 2**30:.1f} GiB)")
    print(f"--reference-packages {args.into}")


if __name__ == "__main__":
    main()
