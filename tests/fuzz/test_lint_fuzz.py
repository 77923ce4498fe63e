"""Seeded, deterministic mutations of our example kernels through the linter: it never raises, never reports
an internal error (NKI999), and every finding is a catalogued code placed inside the text.

``NKI_STUDIO_FUZZ_CASES`` sets the number of mutated files (default 2,000; each is linted incrementally, as
the editor does, and every 25th also through ``lint_source``); ``NKI_STUDIO_FUZZ_SEED`` shifts the seeds.
A failure names the seed of its case, and ``mutate(source, seed)`` rebuilds the text.
"""

from __future__ import annotations

import ast
import os
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from nki_studio.core.codes import catalogue
from nki_studio.nkilint.api import lint_source
from nki_studio.nkilint.config import LintConfig
from nki_studio.nkilint.incremental import IncrementalLinter

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (ROOT / "examples").rglob("*.py"))
CASES = int(os.environ.get("NKI_STUDIO_FUZZ_CASES", "2000"))
SEED = int(os.environ.get("NKI_STUDIO_FUZZ_SEED", "0"))
# Mutated string literals ("\m") make the parser warn about escapes: about the user's text, not ours.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::SyntaxWarning")
FULL_EVERY = 25  # every n-th case also goes through lint_source (whole-file lint)

_EXTREME_NUMBERS = (
    "0",
    "-1",
    "1",
    "3",
    "127",
    "129",
    "2**63",
    "10**30",
    "1e308",
    "-1e308",
    "0.5",
    "float('inf')",
)
_SNIPPETS = (
    "x = a" + "[0]" * 2500,
    "if a:\n    pass\n" + "".join(f"elif a == {i}:\n    pass\n" for i in range(1100)),
    "t = nl.ndarray((" + ", ".join(["1000"] * 300) + "), dtype=nl.float32, buffer=nl.sbuf)",
    "t = nl.ndarray((128, 2**62), dtype=nl.float32, buffer=nl.psum)",
    "t = nl.ndarray((-5, 0), dtype=nl.bfloat16, buffer=nl.sbuf)",
    "for i in nl.affine_range(10**12):\n    pass",
    "for i in range(0, 10, 0):\n    pass",
    "while True:\n    pass",
    "x = (" * 150 + "1" + ")" * 150,
    "lambda: lambda: lambda: None",
    "def inner(*args, **kwargs):\n    return inner(*args, **kwargs)",
    "x = [i for i in range(10**9)]",
    "nisa.dma_copy(dst=None, src=None)",
    "nl.store(a, nl.load(a)[::-1, ::0])",
    "x = 1 / 0",
    "x = 'é' * 10",
    "global a",
    "import nki.language.nonexistent as q",
    "from . import nothing",
    "del a",
    "yield a",
    "return",
    "a: int = 'str'",
    "match a:\n    case _:\n        pass",
)


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _delete_line(lines: list[str], rng: random.Random) -> None:
    del lines[rng.randrange(len(lines))]


def _duplicate_line(lines: list[str], rng: random.Random) -> None:
    i = rng.randrange(len(lines))
    lines.insert(i, lines[i])


def _swap_lines(lines: list[str], rng: random.Random) -> None:
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]


def _truncate(lines: list[str], rng: random.Random) -> None:
    i = rng.randrange(len(lines))
    lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
    del lines[i + 1 : i + 1 + rng.randrange(3)]


def _number(lines: list[str], rng: random.Random) -> None:
    import re

    spots = [(i, m) for i, line in enumerate(lines) for m in re.finditer(r"\b\d+\b", line)]
    if spots:
        i, m = rng.choice(spots)
        lines[i] = lines[i][: m.start()] + rng.choice(_EXTREME_NUMBERS) + lines[i][m.end() :]


def _rename(lines: list[str], rng: random.Random) -> None:
    import re

    names = sorted({n for line in lines for n in re.findall(r"\b[A-Za-z_]\w*\b", line)})
    if len(names) > 1:
        old, new = rng.sample(names, 2)
        i = rng.randrange(len(lines))
        lines[i] = re.sub(rf"\b{old}\b", new, lines[i])


def _insert_snippet(lines: list[str], rng: random.Random) -> None:
    bodies = [n + 1 for n, line in enumerate(lines[:-1]) if line.lstrip().startswith("def ")]
    i = rng.choice(bodies) if bodies and rng.random() < 0.7 else rng.randrange(len(lines) + 1)
    while i < len(lines) and not lines[i].strip():
        i += 1
    indent = ""
    if i < len(lines):
        indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
    snippet = rng.choice(_SNIPPETS)
    lines[i:i] = [indent + s for s in snippet.split("\n")]


def _insert_char(lines: list[str], rng: random.Random) -> None:
    i = rng.randrange(len(lines))
    j = rng.randrange(len(lines[i]) + 1)
    lines[i] = lines[i][:j] + rng.choice("()[]{}:,.=+-*/%@\\'\"#\t \x00\ufeff\u2028") + lines[i][j:]


def _reindent(lines: list[str], rng: random.Random) -> None:
    i = rng.randrange(len(lines))
    lines[i] = rng.choice(["", "    ", "        ", "\t"]) + lines[i].lstrip()


MUTATIONS: tuple[Callable[[list[str], random.Random], None], ...] = (
    _delete_line,
    _duplicate_line,
    _swap_lines,
    _truncate,
    _number,
    _number,
    _rename,
    _insert_snippet,
    _insert_snippet,
    _insert_char,
    _reindent,
)


def mutate(source: str, seed: int) -> str:
    """The mutated text of case ``seed``: one to four mutations, chosen by the seed alone. Most texts that no
    longer parse are tried again (a syntax error stops the analyses at once, so it tests little)."""
    rng = random.Random(seed)
    text = source
    for _ in range(6):
        lines = _lines(source) or [""]
        for _ in range(rng.randint(1, 4)):
            if not lines:
                lines = [""]
            rng.choice(MUTATIONS)(lines, rng)
        text = "\n".join(lines)
        if _parses(text) or rng.random() < 0.15:
            break
    return text


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _problems(text: str, findings: list, seed: int) -> list[str]:  # type: ignore[type-arg]
    n_lines = len(_lines(text))
    out = []
    for f in findings:
        if f.code == "NKI999":
            out.append(f"seed {seed}: internal error: {f.message}")
        elif f.code not in catalogue():
            out.append(f"seed {seed}: uncatalogued code {f.code}")
        elif not (1 <= f.span.line <= f.span.end_line <= n_lines + 1):
            out.append(f"seed {seed}: {f.code} at lines {f.span.line}-{f.span.end_line} of {n_lines}")
    return out


def test_mutated_examples_lint_without_internal_errors() -> None:
    config = LintConfig()
    sources = [(p, p.read_text(encoding="utf-8")) for p in EXAMPLES]
    linters = {p: IncrementalLinter(str(p)) for p, _ in sources}
    problems: list[str] = []
    for case in range(CASES):
        seed = SEED + case
        path, source = sources[case % len(sources)]
        text = mutate(source, seed)
        found = linters[path].lint(text, config)
        problems += _problems(text, found, seed)
        if case % FULL_EVERY == 0:
            whole = lint_source(text, str(path), config)
            problems += _problems(text, whole, seed)
            if whole != found:  # the editor's incremental lint must say what the whole-file lint says
                problems.append(f"seed {seed}: incremental lint differs from lint_source")
        if len(problems) > 20:
            break
    assert problems == []


@pytest.mark.parametrize("case", range(4))
def test_mutated_examples_through_the_cli_end_with_one_line_at_most(case: int, tmp_path: Path) -> None:
    seed = SEED + 10_000 + case
    source = EXAMPLES[case % len(EXAMPLES)].read_text(encoding="utf-8")
    target = tmp_path / "mutated.py"
    target.write_text(mutate(source, seed), encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "nki_studio", "lint", str(target), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode in (0, 1), (seed, run.returncode, run.stderr[-2000:])
    assert "Traceback" not in run.stderr, (seed, run.stderr[-2000:])
    assert '"NKI999"' not in run.stdout, (seed, run.stdout[-2000:])
