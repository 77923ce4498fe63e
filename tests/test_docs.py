"""The docs agree with the tree: CONTRIBUTING's layout table names every folder and only existing ones, its
generator table lists exactly the commands of ``scripts/generate.sh``, the README stays a front door, and every
relative link of the README, CONTRIBUTING and ``docs/`` points at a file (and heading) that exists.

Each check is a function returning what is wrong, tested on the real files and on a copy broken on purpose.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
GENERATE = ROOT / "scripts" / "generate.sh"
README = ROOT / "README.md"
README_MAX_LINES = 300  # issue 26: the README is the user's front door, reference material lives in docs/


def tracked_folders() -> set[str]:
    """Every top-level folder of the repository and every folder directly under ``server/`` (``name/``), from
    the files git tracks (so ``.venv/``, caches and build output never count)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked folders are unknown")
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, text=True
    ).stdout
    folders: set[str] = set()
    for path in filter(None, out.split("\0")):
        parts = path.split("/")
        if len(parts) > 1:
            folders.add(parts[0] + "/")
        if parts[0] == "server" and len(parts) > 2:
            folders.add(f"server/{parts[1]}/")
    return folders


def table_after(text: str, heading: str) -> list[list[str]]:
    """The cells of the body rows of the first Markdown table after the line ``heading``."""
    lines = text.split("\n")[text.split("\n").index(heading) :]
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start + 2 :]:  # past the header and its |---| line
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return rows


def layout_folders(contributing: str) -> set[str]:
    """The folders named (in backticks, ending in ``/``) in the first column of CONTRIBUTING's layout table."""
    return {
        name for row in table_after(contributing, "## Layout") for name in re.findall(r"`([^`]+/)`", row[0])
    }


def layout_mismatches(folders: set[str], rows: set[str]) -> list[str]:
    """What differs between the tree and the layout table: folders of the tree without a row (``server/``
    itself counts as described by the rows of its packages), and rows naming no folder."""
    described = rows | {row.split("/")[0] + "/" for row in rows}
    return [f"{f} has no row in CONTRIBUTING.md's layout table" for f in sorted(folders - described)] + [
        f"the layout row {r} names no folder of the repository" for r in sorted(rows - folders)
    ]


def script_generators(script: str) -> list[str]:
    """The generator commands of ``scripts/generate.sh``, spelt ``python ...`` as CONTRIBUTING spells them."""
    return [f"python {m.group(1)}" for m in re.finditer(r'^"\$PY" (.+)$', script, re.M)]


def contributing_generators(contributing: str) -> list[str]:
    """The commands of the ``generator`` column of CONTRIBUTING's generated-files table."""
    rows = table_after(contributing, "## Generated files")
    return [row[2].strip("`") for row in rows]


def generator_mismatches(script: list[str], listed: list[str]) -> list[str]:
    """What differs between the commands of ``generate.sh`` and CONTRIBUTING's generator table (in order)."""
    if script == listed:
        return []
    return [f"scripts/generate.sh runs {script} but CONTRIBUTING.md lists {listed}"]


FENCED = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1", re.M | re.S)


def _strip_code(text: str) -> str:
    """Markdown without fenced blocks and inline code, where brackets are no links."""
    return re.sub(r"`[^`\n]*`", "", FENCED.sub("", text))


def anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives the headings of a page: a link's text only, lower case, punctuation (backticks
    too) dropped, spaces to hyphens."""
    out = set()
    for m in re.finditer(r"^#{1,6} (.+?)\s*$", FENCED.sub("", markdown), re.M):
        heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1))
        out.add(re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-"))
    return out


def broken_links(page: Path, text: str) -> list[str]:
    """Relative links of ``page`` whose file, or heading anchor in a Markdown file, does not exist."""
    out = []
    for target in re.findall(r"\]\(([^)\s]+)\)", _strip_code(text)):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            out.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text(encoding="utf-8")):
            out.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    return out


def doc_pages() -> list[Path]:
    """The README, CONTRIBUTING and every page under ``docs/``."""
    return [README, CONTRIBUTING, *sorted((ROOT / "docs").rglob("*.md"))]


def test_every_folder_has_a_layout_row_and_every_row_a_folder() -> None:
    problems = layout_mismatches(tracked_folders(), layout_folders(CONTRIBUTING.read_text(encoding="utf-8")))
    assert not problems, "\n".join(problems)


def test_a_missing_or_stale_layout_row_is_reported() -> None:
    contributing = CONTRIBUTING.read_text(encoding="utf-8")
    rows = layout_folders(contributing)  # a tree that matches the table, whatever the checkout holds
    broken = contributing.replace("| `server/mcp/` |", "| `server/mcp-gone/` |")
    assert layout_mismatches(rows, layout_folders(broken)) == [
        "server/mcp/ has no row in CONTRIBUTING.md's layout table",
        "the layout row server/mcp-gone/ names no folder of the repository",
    ]
    assert layout_mismatches(rows | {"newtool/"}, rows) == [
        "newtool/ has no row in CONTRIBUTING.md's layout table"
    ]


def test_contributing_lists_the_generators_of_generate_sh() -> None:
    script = script_generators(GENERATE.read_text(encoding="utf-8"))
    assert len(script) >= 4  # the parse found the commands
    problems = generator_mismatches(script, contributing_generators(CONTRIBUTING.read_text(encoding="utf-8")))
    assert not problems, "\n".join(problems)


def test_a_generator_missing_from_either_list_is_reported() -> None:
    script = GENERATE.read_text(encoding="utf-8")
    listed = contributing_generators(CONTRIBUTING.read_text(encoding="utf-8"))
    added = script_generators(script + '"$PY" -m nki_studio.new.generate\n')
    assert generator_mismatches(added, listed)
    assert generator_mismatches(script_generators(script), listed[:-1])


def test_every_generator_row_names_an_existing_test() -> None:
    rows = table_after(CONTRIBUTING.read_text(encoding="utf-8"), "## Generated files")
    missing = [t for row in rows for t in re.findall(r"`([^`]+)`", row[3]) if not (ROOT / t).exists()]
    assert not missing, f"tests named in CONTRIBUTING.md's generator table that do not exist: {missing}"


def test_readme_is_a_front_door() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines: move reference material into docs/"
    readme = README.read_text(encoding="utf-8")
    assert "bash scripts/demo.sh" in readme and "bash scripts/test.sh" in readme
    assert "exec bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


@pytest.mark.parametrize("page", doc_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    problems = broken_links(page, page.read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


def test_a_broken_link_is_reported() -> None:
    text = "[gone](docs/nothing-here.md), [no heading](docs/settings.md#nowhere), [ok](docs/settings.md#the-settings)"
    assert broken_links(README, text) == [
        "README.md: docs/nothing-here.md (no such file)",
        "README.md: docs/settings.md#nowhere (no such heading)",
    ]
