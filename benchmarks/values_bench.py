"""Benchmark of the compile-time value interpreter and the value rules (NKI3xx-NKI5xx).

Uses the 2,000-line generated kernel module of ``lint_bench.generate`` and prints, per run (median of
``--runs``): ``ast.parse``, kernel discovery, interpretation, the value rules only, and pyflakes on the same
text for scale (ratios measured in the same process). Prints figures; asserts nothing.

Run: ``.venv/bin/python benchmarks/values_bench.py [--lines 2000] [--runs 7]``
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lint_bench import generate, median_time
from nki_studio.model.analysis import interpret
from nki_studio.model.kernels import discover
from nki_studio.model.targets import Target
from nki_studio.nkilint.api import lint_source
from nki_studio.nkilint.config import LintConfig
from pyflakes.api import check as pyflakes_check
from pyflakes.reporter import Reporter


class _Quiet:
    def write(self, _text: str) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    text = generate(args.lines)
    path = "/nonexistent/values_bench_module.py"
    tree = ast.parse(text)
    found = discover(text, path, tree)
    target = Target()
    facts = interpret(found, target)
    quiet = Reporter(_Quiet(), _Quiet())
    value_rules = LintConfig(target=target, select=("NKI3", "NKI4", "NKI5"))

    t_parse = median_time(lambda: ast.parse(text), args.runs)
    t_discover = median_time(lambda: discover(text, path, ast.parse(text)), args.runs)
    t_interp = median_time(lambda: interpret(found, target), args.runs)
    t_rules = median_time(lambda: lint_source(text, path, value_rules), args.runs)
    t_flakes = median_time(lambda: pyflakes_check(text, path, quiet), args.runs)

    allocations = sum(len(r.allocations) for r in facts.roots)
    calls = sum(len(r.calls) for r in facts.roots)
    print(
        f"module: {text.count(chr(10))} lines, {len(found.kernels)} kernels, {len(facts.roots)} roots "
        f"interpreted, {allocations} allocations and {calls} API calls recorded"
    )
    print(f"ast.parse                 {t_parse * 1000:8.1f} ms")
    print(f"kernel discovery          {t_discover * 1000:8.1f} ms (includes parse)")
    print(f"value interpretation      {t_interp * 1000:8.1f} ms  ({t_interp / t_parse:.1f}x parse)")
    print(f"lint, value rules only    {t_rules * 1000:8.1f} ms  ({t_rules / t_flakes:.2f}x pyflakes)")
    print(f"pyflakes                  {t_flakes * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
