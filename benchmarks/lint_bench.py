"""Lint speed on a generated 2,000-line kernel module: nkilint API and CLI times, and the ratio of nkilint to
pyflakes on the same text in the same process (target: nkilint <= 2x pyflakes). With ``--lines 50000`` (or more),
the large-module targets too: <= 2 s CPU through the API, <= 3 s CPU through the CLI (the whole process).

Usage: .venv/bin/python benchmarks/lint_bench.py [--lines 2000] [--repeat 7] [--corpus DIR]
(``--corpus`` also times both linters over every ``*.py`` file of a directory, e.g. a checkout of nki-library.)
Figures are wall-clock medians on this machine; the CLI figure includes interpreter start-up.
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import pyflakes.api
import pyflakes.reporter
from nki_studio.model.targets import Target
from nki_studio.nkilint.api import iter_python_files, lint_paths, lint_source
from nki_studio.nkilint.config import LintConfig
from nki_studio.nkilint.rule import all_rules
from targets import goal

LARGE_MODULE = 50_000  # lines from which the large-module targets apply
API_CPU_TARGET_S = 2.0
CLI_CPU_TARGET_S = 3.0

_HEADER = '''"""Generated benchmark module: many small NKI kernels and helpers."""

import nki
import nki.isa as nisa
import nki.language as nl
import numpy as np

TILE = 128
WIDTH = 512
'''

_BLOCK = '''

def helper_{i}(dst, src, scale):
    """Scale a tile on the Scalar engine."""
    nisa.activation(dst=dst, op=nl.copy, data=src, scale=scale)


@nki.jit
def kernel_{i}(a, b):
    n, d = a.shape
    out = nl.ndarray((n, d), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(n // TILE):
        ta = nl.ndarray((TILE, WIDTH), dtype=a.dtype, buffer=nl.sbuf)
        tb = nl.ndarray((TILE, WIDTH), dtype=b.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=ta, src=a[i * TILE:(i + 1) * TILE, 0:WIDTH])
        nisa.dma_copy(dst=tb, src=b[i * TILE:(i + 1) * TILE, 0:WIDTH])
        s = nl.ndarray((TILE, WIDTH), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=s, data1=ta, data2=tb, op=nl.add)
        r = nl.ndarray((TILE, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=r, op=nl.add, data=s, axis=1)
        y = nl.ndarray((TILE, WIDTH), dtype=a.dtype, buffer=nl.sbuf)
        helper_{i}(y, s, 0.5)
        if {i} % 2 == 0:
            nisa.tensor_scalar(dst=y, data=y, op0=nl.multiply, operand0=r)
        nisa.dma_copy(dst=out[i * TILE:(i + 1) * TILE, 0:WIDTH], src=y)
    return out
'''


def generate(lines: int) -> str:
    """A module of at least ``lines`` lines made of kernel + helper blocks."""
    parts = [_HEADER]
    i = 0
    while sum(p.count("\n") for p in parts) < lines:
        parts.append(_BLOCK.format(i=i))
        i += 1
    return "".join(parts)


def median_time(fn: Callable[[], object], repeat: int) -> float:
    """Median wall time of ``fn`` over ``repeat`` runs (after one warm-up run)."""
    return interleaved_medians([fn], repeat)[0]


def interleaved_medians(
    fns: list[Callable[[], object]], repeat: int, clock: Callable[[], float] = time.perf_counter
) -> list[float]:
    """Median time of each function on ``clock`` (wall by default; ``time.process_time`` for CPU time, which a
    loaded machine disturbs far less), running them round-robin so load changes on a shared machine hit all of
    them alike (one warm-up round first)."""
    for fn in fns:
        fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0 = clock()
            fn()
            times[i].append(clock() - t0)
    return [statistics.median(t) for t in times]


def main() -> int:
    """Run the benchmark and print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--corpus", help="also time both linters over the *.py files of this directory")
    args = ap.parse_args()
    text = generate(args.lines)
    all_rules()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "generated_kernels.py")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        every = LintConfig(target=Target())
        mine = LintConfig(target=Target(), select=("NKI0", "NKI1", "NKI2"))
        n_findings = len(lint_source(text, path, every))

        def flakes() -> None:
            sink = io.StringIO()
            pyflakes.api.check(text, path, pyflakes.reporter.Reporter(sink, sink))

        t_all, t_mine, t_flakes = interleaved_medians(
            [lambda: lint_source(text, path, every), lambda: lint_source(text, path, mine), flakes],
            args.repeat,
        )
        c_all, c_flakes = interleaved_medians(
            [lambda: lint_source(text, path, every), flakes], args.repeat, time.process_time
        )
        exe = os.path.join(os.path.dirname(sys.executable), "nki-studio")
        cli = (
            [exe, "lint", path, "--format", "json"]
            if os.path.exists(exe)
            else [sys.executable, "-m", "nki_studio.cli.main", "lint", path, "--format", "json"]
        )
        cli_runs = max(3, args.repeat // 2)
        t_cli = median_time(lambda: subprocess.run(cli, capture_output=True, check=False), cli_runs)
        c_cli = child_cpu_median(cli, cli_runs)
        pf_cli = [sys.executable, "-m", "pyflakes", path]
        t_pf_cli = median_time(
            lambda: subprocess.run(pf_cli, capture_output=True, check=False), max(3, args.repeat // 2)
        )
    print(f"module: {text.count(chr(10))} lines, {len(all_rules())} rules, {n_findings} findings")
    print(f"nkilint API, all rules:          {t_all * 1000:8.1f} ms (median of {args.repeat})")
    print(f"nkilint API, NKI0xx-2xx rules:   {t_mine * 1000:8.1f} ms")
    print(f"pyflakes API, same text:         {t_flakes * 1000:8.1f} ms")
    print(
        f"CPU time (process_time), same process: nkilint {c_all * 1000:.1f} ms, pyflakes {c_flakes * 1000:.1f} ms, "
        f"ratio {c_all / c_flakes:.2f}x   (load average {os.getloadavg()[0]:.1f})"
    )
    print(f"ratio nkilint/pyflakes (all):    {t_all / t_flakes:8.2f}x   {goal(t_all / t_flakes, 2, 'x')}")
    print(f"ratio nkilint/pyflakes (0xx-2xx):{t_mine / t_flakes:8.2f}x")
    print(
        f"CLI `nki-studio lint` (process): {t_cli * 1000:8.1f} ms   vs `python -m pyflakes`: {t_pf_cli * 1000:.1f} ms"
    )
    print(f"CLI `nki-studio lint` CPU time (the whole process, start-up included): {c_cli * 1000:8.1f} ms")
    if args.lines >= LARGE_MODULE:
        print(f"large module, API CPU time: {c_all:.2f} s {goal(c_all, API_CPU_TARGET_S, 's')}")
        print(f"large module, CLI CPU time: {c_cli:.2f} s {goal(c_cli, CLI_CPU_TARGET_S, 's')}")
    if args.corpus:
        corpus_figures(args.corpus)
    return 0


def child_cpu_median(cmd: list[str], repeat: int) -> float:
    """Median CPU time (user + system) of ``repeat`` runs of ``cmd`` as a child process."""
    times = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, capture_output=True, check=False)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(times)


def corpus_figures(root: str) -> None:
    """One pass of each linter over a directory (same files, same process)."""
    files = list(iter_python_files([root]))
    texts = []
    for path in files:
        with open(path, encoding="utf-8-sig", errors="replace") as fh:
            texts.append((path, fh.read()))
    t0 = time.perf_counter()
    findings = lint_paths(files)
    t_lint = time.perf_counter() - t0
    t0 = time.perf_counter()
    lint_paths(files, override=lambda c: c.with_overrides(select=("NKI0", "NKI1", "NKI2")))
    t_mine = time.perf_counter() - t0
    sink = io.StringIO()
    reporter = pyflakes.reporter.Reporter(sink, sink)
    t0 = time.perf_counter()
    for path, text in texts:
        pyflakes.api.check(text, path, reporter)
    t_flakes = time.perf_counter() - t0
    lines = sum(text.count("\n") for _, text in texts)
    print(f"corpus {root}: {len(files)} files, {lines} lines, {len(findings)} findings")
    print(
        f"  nkilint lint_paths: {t_lint:7.2f} s   pyflakes: {t_flakes:7.2f} s   ratio {t_lint / t_flakes:5.2f}x"
    )
    print(f"  nkilint NKI0xx-2xx only: {t_mine:7.2f} s   ratio {t_mine / t_flakes:5.2f}x")


if __name__ == "__main__":
    sys.exit(main())
