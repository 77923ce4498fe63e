"""IncrementalLinter reports exactly what lint_source reports, version after version under random edits, and
re-checks only what an edit can affect."""

from __future__ import annotations

import os
import random
import re
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from nki_studio.model.targets import Target, parse_nki_version
from nki_studio.nkilint.api import lint_source
from nki_studio.nkilint.config import LintConfig
from nki_studio.nkilint.incremental import IncrementalLinter
from nki_studio.nkilint.rule import all_rules

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _config(version: str) -> LintConfig:
    return LintConfig(target=Target(nki_version=parse_nki_version(version)))


def _bad_examples_module(version: str) -> str:
    """Every rule's checked bad example for ``version`` in one module: many kernels, many findings."""
    parts = []
    for rule in all_rules().values():
        for ex in rule.bad:
            if ex.checked and (ex.nki_version or version) == version:
                parts.append(ex.code.rstrip() + "\n")
    return "\n\n".join(parts)


# --- edits a user makes while typing -------------------------------------------------------------------------

Edit = Callable[[list[str], random.Random], None]


def _duplicate(lines: list[str], rng: random.Random) -> None:
    i = rng.randrange(len(lines))
    lines.insert(i, lines[i])


def _delete(lines: list[str], rng: random.Random) -> None:
    if len(lines) > 3:
        del lines[rng.randrange(len(lines))]


def _blank(lines: list[str], rng: random.Random) -> None:
    lines.insert(rng.randrange(len(lines) + 1), "")


def _renumber(lines: list[str], rng: random.Random) -> None:
    with_numbers = [i for i, line in enumerate(lines) if re.search(r"\d", line)]
    if with_numbers:
        i = rng.choice(with_numbers)
        lines[i] = re.sub(
            r"\d+", lambda m: str(int(m[0]) * rng.choice((2, 3)) + rng.choice((0, 1))), lines[i], count=1
        )


def _half_typed(lines: list[str], rng: random.Random) -> None:
    lines.insert(
        rng.randrange(len(lines) + 1),
        rng.choice(
            ("    x = nl.ndarray((", "    for i in", "@nki.jit", "def", '    s = "unterminated', "  y = 1")
        ),
    )


def _noqa(lines: list[str], rng: random.Random) -> None:
    i = rng.randrange(len(lines))
    lines[i] += rng.choice(("  # noqa: NKI301", "  # noqa", "  # noqa: NKI201, NKI401"))


def _indent(lines: list[str], rng: random.Random) -> None:
    i = rng.randrange(len(lines))
    lines[i] = lines[i][4:] if lines[i].startswith("    ") and rng.random() < 0.5 else "    " + lines[i]


def _new_kernel(lines: list[str], rng: random.Random) -> None:
    tops = [i for i, line in enumerate(lines) if line.startswith(("@", "def "))] or [len(lines)]
    at = rng.choice(tops)
    lines[at:at] = [
        "@nki.jit",
        "def fresh(x):",
        "    t = nl.ndarray((256, 4), dtype=nl.float32, buffer=nl.sbuf)",
        "    for i in nl.affine_range(2):",
        "        pass",
        "    return t",
        "",
        "",
    ]


def _constant(lines: list[str], rng: random.Random) -> None:
    lines.insert(rng.randrange(len(lines) + 1), rng.choice(("P = 256", "TILE = 512", "import math")))


EDITS: list[Edit] = [
    _duplicate,
    _delete,
    _blank,
    _renumber,
    _half_typed,
    _noqa,
    _indent,
    _new_kernel,
    _constant,
]


def _compare_under_edits(text: str, version: str, path: str, edits: int, seed: int) -> int:
    """Lint successive random edits both ways; returns how many versions had findings."""
    rng = random.Random(seed)
    config = _config(version)
    linter = IncrementalLinter(path)
    history = [text]
    with_findings = 0
    for step in range(edits + 1):
        if step:
            if rng.random() < 0.15:  # undo to an earlier version
                text = rng.choice(history)
            else:
                lines = text.split("\n")
                rng.choice(EDITS)(lines, rng)
                text = "\n".join(lines)
            history.append(text)
        expected = lint_source(text, path, config)
        assert linter.lint(text, config) == expected, (step, text)
        with_findings += bool(expected)
    return with_findings


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_examples_match_a_full_lint_under_edits(name: str) -> None:
    text = (EXAMPLES / name).read_text()
    _compare_under_edits(text, "0.7", str(EXAMPLES / name), edits=10, seed=zlib.crc32(name.encode()))


@pytest.mark.parametrize("version", ["0.6", "0.7"])
def test_rule_bad_examples_match_a_full_lint_under_edits(version: str) -> None:
    text = _bad_examples_module(version)
    with_findings = _compare_under_edits(text, version, "/nonexistent/all_bad.py", edits=40, seed=7)
    assert with_findings >= 30  # the comparison is over findings, not over empty lists


_UNIT = """
TILE_{i} = 128


def load_{i}(src, dtype):
    t = nl.ndarray((TILE_{i}, 64), dtype=dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=src[0:TILE_{i}, 0:64])
    return t


@nki.jit
def kernel_{i}(a):
    x = load_{i}(a, a.dtype)
    out = nl.ndarray((TILE_{i}, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=x)
    return out
"""

_HEADER = "import nki\nimport nki.isa as nisa\nimport nki.language as nl\n"


def test_an_edit_in_one_kernel_rechecks_its_component_only() -> None:
    text = _HEADER + "".join(_UNIT.format(i=i) for i in range(6))
    config = _config("0.7")
    linter = IncrementalLinter("/nonexistent/units.py")
    assert linter.lint(text, config) == []
    assert linter.last_checked == 7  # the module-level code, and one component per helper + kernel pair
    edited = text.replace("(TILE_3, 64), dtype=dtype", "(TILE_3 * 2, 64), dtype=dtype")
    found = linter.lint(edited, config)
    assert linter.last_checked == 1
    assert [f.code for f in found] == ["NKI301"] and "256" in found[0].message
    assert found == lint_source(edited, "/nonexistent/units.py", config)
    # Lines added in an earlier kernel move the finding below without checking its kernel again.
    moved = edited.replace("\nTILE_2 = 128", "# a comment\n\nTILE_2 = 128")  # after kernel_1
    assert linter.lint(moved, config) == lint_source(moved, "/nonexistent/units.py", config)
    assert linter.last_checked == 1
    # A module-level constant: the module-level code and the one component using it are checked again.
    linter.lint(moved.replace("TILE_0 = 128", "TILE_0 = 64"), config)
    assert linter.last_checked == 2
    # An import every kernel uses: everything.
    linter.lint(moved.replace("import nki.isa as nisa", "import nki.isa as nisa  # engines"), config)
    assert linter.last_checked == 7


def test_a_changed_local_module_is_seen(tmp_path: Path) -> None:
    helper = tmp_path / "tiles.py"
    make = "import nki.language as nl\n\n\ndef make():\n    return nl.ndarray(({p}, 8), dtype=nl.float32, buffer=nl.sbuf)\n"
    helper.write_text(make.format(p=128))
    kernel = tmp_path / "k.py"
    text = "import nki\nfrom tiles import make\n\n\n@nki.jit\ndef k(a):\n    t = make()\n    return t\n"
    config = _config("0.7")
    linter = IncrementalLinter(str(kernel))
    assert linter.lint(text, config) == []
    helper.write_text(make.format(p=256))
    os.utime(helper, ns=(10**18, 10**18))  # a new mtime even on coarse clocks
    found = linter.lint(text, config)
    assert [f.code for f in found] == ["NKI301"]
    assert found == lint_source(text, str(kernel), config)


def test_a_broken_edit_reports_the_full_parse_error_and_recovers() -> None:
    text = _HEADER + "".join(_UNIT.format(i=i) for i in range(3))
    config = _config("0.7")
    linter = IncrementalLinter("/nonexistent/units.py")
    linter.lint(text, config)
    lines = text.split("\n")
    at = lines.index("def kernel_1(a):") + 1
    broken = "\n".join([*lines[:at], "    for i in range(2):", *lines[at:]])
    found = linter.lint(broken, config)
    assert [f.code for f in found] == ["NKI000"]
    assert found == lint_source(broken, "/nonexistent/units.py", config)
    assert linter.lint(text, config) == []
    assert linter.last_checked == 0  # the cache survived the broken version


def test_a_main_block_calling_every_kernel_does_not_tie_them_together() -> None:
    main = "\n\nif __name__ == '__main__':\n    a = None\n    x = kernel_0(a)\n    y = kernel_1(x)\n"
    text = (
        _HEADER
        + "".join(_UNIT.format(i=i) for i in range(3))
        .replace("x = load_", "a = load_")
        .replace("src=x)", "src=a)")
        + main
    )
    config = _config("0.7")
    linter = IncrementalLinter("/nonexistent/units.py")
    assert linter.lint(text, config) == []
    assert linter.last_checked == 4  # module-level code, and three separate helper + kernel pairs
    edited = text.replace("(TILE_2, 64), dtype=dtype", "(TILE_2 * 3, 64), dtype=dtype")
    found = linter.lint(edited, config)
    assert linter.last_checked == 1  # kernel_2's own locals ``a``/``x`` are not the main block's
    assert found == lint_source(edited, "/nonexistent/units.py", config) and [f.code for f in found] == [
        "NKI301"
    ]


_ODD_DOCUMENTS = {
    "crlf": _HEADER.replace("\n", "\r\n") + _UNIT.format(i=0).replace("\n", "\r\n"),
    "form feed and tabs": _HEADER + "\f\n" + _UNIT.format(i=1).replace("    ", "\t"),
    "several statements a line": "import nki; import nki.language as nl\nP = 256; Q = P\n\n@nki.jit\n\ndef k(a):\n"
    "    t = nl.ndarray((Q, 2), dtype=nl.float32, buffer=nl.sbuf); return t\n",
    "comments only": "# nothing here\n\n# at all\n",
    "byte-order mark": "\ufeff" + _HEADER + _UNIT.format(i=3),
    "empty": "",
    "unicode": _HEADER
    + "# ünïcödé ✓\n"
    + _UNIT.format(i=2)
    .replace("nisa.dma_copy(dst=out", "nisa.dma_copy(dst=out  ")
    .replace("TILE_2 = 128", "TILE_2 = 256  # größer"),
    "nested classes and functions": _HEADER
    + "class Cfg:\n    class Inner:\n        P = 256\n\n    def make(self):\n"
    "        return nl.ndarray((256, 1), dtype=nl.float32, buffer=nl.sbuf)\n\n\n"
    "@nki.jit\ndef k(a):\n    t = Cfg().make()\n    return t\n",
}


@pytest.mark.parametrize("name", sorted(_ODD_DOCUMENTS))
def test_odd_documents_match_a_full_lint_under_edits(name: str) -> None:
    _compare_under_edits(
        _ODD_DOCUMENTS[name], "0.7", "/nonexistent/odd.py", edits=25, seed=zlib.crc32(name.encode())
    )


def test_module_level_findings_that_disagree_are_detected() -> None:
    from nki_studio.core.findings import Finding, Severity, Span
    from nki_studio.nkilint.incremental import Block, _consistent

    env = Block(1, 3, "import nki\n\n", ())
    span = Span(1, 1, 1, 11)

    def at(s: Span, message: str) -> Finding:
        return Finding("/k.py", s, "NKI208", "legacy-namespace", Severity.WARNING, message)

    assert _consistent([at(span, "a"), at(span, "a")], [env])
    assert not _consistent([at(span, "a"), at(span, "used in k1")], [env])
    in_helper = Span(5, 1, 5, 4)  # one helper line, two call sites: two findings is right
    assert _consistent([at(in_helper, "256"), at(in_helper, "512")], [env])


def test_version_inferred_from_another_kernel_refreshes_cached_findings() -> None:
    """Adding an ``nl.dynamic_range`` loop to one kernel makes the whole file 0.6 code (no version is named):
    the cached 0.7 findings of the other kernels must not survive."""
    head = "import nki\nimport nki.language as nl\n\n\nclass T:\n    pass\n\n\n"
    k1 = "@nki.jit\ndef k1(x):\n    a = T()\n    b = T()\n    same = a == b\n    return x\n\n\n"
    k2 = "@nki.jit\ndef k2(x, n):\n    for i in range(2):\n        pass\n    return x\n"
    config = _config("0.7")
    linter = IncrementalLinter("/nonexistent/k.py")
    before = head + k1 + k2
    assert "NKI125" in [f.code for f in linter.lint(before, config)]
    after = before.replace("range(2)", "nl.dynamic_range(n)")
    found = linter.lint(after, config)
    assert found == lint_source(after, "/nonexistent/k.py", config)
    assert "NKI125" not in [f.code for f in found] and "NKI202" in [f.code for f in found]


@pytest.mark.parametrize("uses_it", [False, True])
def test_a_module_level_psum_allocation_gives_the_same_findings_both_ways(uses_it: bool) -> None:
    """Found by tests/fuzz (seed 1400): module globals are evaluated once, by the first kernel reading one, so
    the whole-file lint charged an unused module-level PSUM tile to that kernel (NKI402/403 on the module line)
    while the incremental lint, which checks each kernel with only the module-level code it names, did not."""
    head = "import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n"
    tile = "t = nl.ndarray((128, 2**62), dtype=nl.float32, buffer=nl.psum)\n\n\n"
    body = "    acc = t\n" if uses_it else ""
    kernels = "".join(
        f"@nki.jit\ndef k{i}(a):\n{body}"
        f"    s = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)\n"
        f"    nisa.memset(dst=s, value=0.0)\n    return a\n\n\n"
        for i in range(2)
    )
    text = head + tile + kernels
    config = _config("0.7")
    whole = lint_source(text, "/nonexistent/psum.py", config)
    assert IncrementalLinter("/nonexistent/psum.py").lint(text, config) == whole
    assert not [f for f in whole if f.code in ("NKI402", "NKI403")]
    _compare_under_edits(text, "0.7", "/nonexistent/psum.py", edits=15, seed=1400 + uses_it)


def test_a_legacy_file_whose_import_moved_gives_the_same_findings_both_ways() -> None:
    """The version decision places every statement (re-parsing the blocks an edit moved) only when the text can
    hold a legacy import or a 0.6-only API; a legacy import moved down by a line inserted above it is then read
    at its new line, as the whole-file lint reads it."""
    kernel = "@nki.jit\ndef k(a):\n    t = nl.load(a)\n    return t\n"
    text = "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n\n" + kernel
    config = LintConfig(target=Target())  # no version named: the file's imports decide it
    linter = IncrementalLinter("/nonexistent/legacy.py")
    assert linter.lint(text, config) == lint_source(text, "/nonexistent/legacy.py", config)
    moved = '"""A docstring pushes everything down."""\n\n' + text
    found = linter.lint(moved, config)
    assert found == lint_source(moved, "/nonexistent/legacy.py", config)
    assert [f.span.line for f in found if f.code == "NKI208"] == [3, 4]
