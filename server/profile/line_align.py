"""Following source lines across an edit, for before/after comparisons: an optimisation changes the kernel's
text, so line 40 of version A is not line 40 of version B.

The two versions' lines are aligned with ``difflib.SequenceMatcher`` (standard library); per-line times are
then compared on matched lines, and lines only in A (removed) or only in B (added) are listed with their
time. Without both texts the lines are matched by number, and the result says so.

The text of a version comes from a *source snapshot*: the kernel file as it was when the profile was captured
(``nki-studio-source.json`` next to a downloaded profile, written by the remote round trip), as it was
simulated (an estimate), or a file the user names (CLI ``--text-a``/``--text-b``).
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from nki_studio.protocol.profile import LineComparison, LineDelta, LineDeltas

SNAPSHOT_NAME = "nki-studio-source.json"
SNAPSHOT_FORMAT = "nki-studio source snapshot 1"
BY_TEXT = "source text (lines aligned across the edit)"
BY_NUMBER = "lines matched by number: source text unavailable"


@dataclass(frozen=True)
class SourceText:
    """One version of a source file: its lines (without line ends) and the SHA-256 of its text."""

    lines: tuple[str, ...]
    sha256: str

    @staticmethod
    def of(text: str) -> SourceText:
        """The snapshot of ``text``."""
        return SourceText(tuple(text.splitlines()), hashlib.sha256(text.encode("utf-8")).hexdigest())

    @staticmethod
    def read(path: str | Path) -> SourceText:
        """The snapshot of a file (UTF-8, BOM dropped). Raises OSError / UnicodeDecodeError."""
        return SourceText.of(Path(path).read_text(encoding="utf-8-sig"))


def write_snapshot(directory: Path, files: Mapping[str, str]) -> Path:
    """Write ``files`` (path -> text, the paths as the profile's lines will name them once mapped) as the
    source snapshot of the profile in ``directory``."""
    out = directory / SNAPSHOT_NAME
    body = {
        "format": SNAPSHOT_FORMAT,
        "files": {p: {"sha256": SourceText.of(t).sha256, "text": t} for p, t in files.items()},
    }
    out.write_text(json.dumps(body), encoding="utf-8")
    return out


def read_snapshot(profile_path: str | Path) -> dict[str, SourceText]:
    """The source snapshot stored with a profile (in its directory, or next to its file), {} when none or
    unreadable. A text whose hash does not match is left out (a hand-edited snapshot says nothing reliable)."""
    p = Path(profile_path)
    for where in (p / SNAPSHOT_NAME, p.parent / SNAPSHOT_NAME):
        try:
            body = json.loads(where.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        if not isinstance(body, dict) or body.get("format") != SNAPSHOT_FORMAT:
            continue
        out: dict[str, SourceText] = {}
        for path, entry in (body.get("files") or {}).items():
            if isinstance(entry, dict) and isinstance(entry.get("text"), str):
                text = SourceText.of(entry["text"])
                if entry.get("sha256") == text.sha256:
                    out[str(path)] = text
        return out
    return {}


@dataclass(frozen=True)
class Alignment:
    """Lines of A matched to lines of B (1-based), and the lines only in A or only in B."""

    a_to_b: dict[int, int]
    removed: frozenset[int]  # lines of A with no counterpart in B
    added: frozenset[int]  # lines of B with no counterpart in A


def align(a: Sequence[str], b: Sequence[str]) -> Alignment:
    """Match equal lines of ``a`` and ``b`` in order (longest matching blocks first). A line edited in place is
    a removed line plus an added one: its time before and after are two different lines' times. Whitespace at
    the line ends does not count (an editor trimming it is not an edit of the kernel)."""
    sa, sb = [x.rstrip() for x in a], [x.rstrip() for x in b]
    # autojunk off: a kernel's frequent lines (blank lines, "for ...:") must still anchor the alignment
    sm = difflib.SequenceMatcher(None, sa, sb, autojunk=False)
    a_to_b: dict[int, int] = {}
    for block in sm.get_matching_blocks():
        for k in range(block.size):
            a_to_b[block.a + k + 1] = block.b + k + 1
    matched_b = set(a_to_b.values())
    return Alignment(
        a_to_b,
        frozenset(n for n in range(1, len(a) + 1) if n not in a_to_b),
        frozenset(n for n in range(1, len(b) + 1) if n not in matched_b),
    )


def line_map(text_a: SourceText | None, text_b: SourceText | None) -> dict[int, int] | None:
    """A's line -> B's line, or None when lines keep their numbers (a text missing, or the same text)."""
    if text_a is None or text_b is None or text_a.sha256 == text_b.sha256:
        return None
    return align(text_a.lines, text_b.lines).a_to_b


def _text(src: SourceText | None, line: int) -> str | None:
    return src.lines[line - 1].strip() if src is not None and 0 < line <= len(src.lines) else None


def line_deltas(
    file: str,
    times_a: Mapping[int, int],
    times_b: Mapping[int, int],
    text_a: SourceText | None,
    text_b: SourceText | None,
) -> LineDeltas:
    """Per-line deltas of one file between two versions: ``matched`` (``line_a``, ``line_b``, times, delta),
    ``removed`` and ``added`` (lines with time on one side only, by text), and ``matched_by``. ``times_*``:
    line -> busy ns. Without both texts every line is matched by number and nothing is removed or added."""
    matched: list[LineDelta] = []
    removed: list[LineDelta] = []
    added: list[LineDelta] = []

    def row(la: int | None, lb: int | None) -> LineDelta:
        x, y = times_a.get(la, 0) if la else 0, times_b.get(lb, 0) if lb else 0
        return {
            "file": file,
            "line": lb
            if lb is not None
            else (la or 0),  # where the line is now (B), or was (A) when it went away
            "line_a": la,
            "line_b": lb,
            "a_ns": x,
            "b_ns": y,
            "delta_ns": y - x,
            "text": _text(text_b, lb) if lb else _text(text_a, la or 0),
        }

    if text_a is None or text_b is None or text_a.sha256 == text_b.sha256:
        how = BY_NUMBER if text_a is None or text_b is None else BY_TEXT  # identical texts: numbers are exact
        for n in sorted(set(times_a) | set(times_b)):
            matched.append(row(n, n))
        return {"matched_by": how, "matched": matched, "removed": removed, "added": added}
    al = align(text_a.lines, text_b.lines)
    b_to_a = {v: k for k, v in al.a_to_b.items()}
    for la in sorted(times_a):
        if la in al.a_to_b:
            matched.append(row(la, al.a_to_b[la]))
        elif la in al.removed or la > len(text_a.lines):
            # a line past the end of A's text: the snapshot is not the captured version; still reported
            removed.append(row(la, None))
    for lb in sorted(times_b):
        if lb in b_to_a:
            if b_to_a[lb] not in times_a:
                matched.append(row(b_to_a[lb], lb))
        else:
            added.append(row(None, lb))
    return {"matched_by": BY_TEXT, "matched": matched, "removed": removed, "added": added}


def source_for(sources: Mapping[str, SourceText], file: str, only: str | None) -> SourceText | None:
    """The snapshot of ``file`` among ``sources`` (keyed by path): the same path, else the one snapshot whose
    file name is the same, else (``only``: the profile's one source file) the only snapshot there is."""
    if not sources:
        return None
    for key in (file, only):
        if key and key in sources:
            return sources[key]
    names = [k for k in sources if Path(k).name == Path(file or only or "").name]
    if len(names) == 1:
        return sources[names[0]]
    return next(iter(sources.values())) if only is not None and len(sources) == 1 else None


def compare_lines(
    times_a: Mapping[str, Mapping[int, int]],
    times_b: Mapping[str, Mapping[int, int]],
    sources_a: Mapping[str, SourceText],
    sources_b: Mapping[str, SourceText],
    only: tuple[str, str] | None = None,
) -> LineComparison:
    """Per-line deltas of two profiles: ``times_*`` file -> line -> busy ns, ``sources_*`` each version's
    texts (path -> snapshot). ``only``: both profiles have one file each, (A's, B's), keyed "" in ``times_*``
    (a kernel saved under another name is still the same kernel). Returns ``lines`` (matched, largest change
    first), ``removed_lines``/``added_lines`` (largest time first) and ``lines_matched_by``."""
    lines: list[LineDelta] = []
    removed: list[LineDelta] = []
    added: list[LineDelta] = []
    how: set[str] = set()
    for f in sorted(set(times_a) | set(times_b)):
        got = line_deltas(
            f,
            times_a.get(f, {}),
            times_b.get(f, {}),
            source_for(sources_a, f, only[0] if only else None),
            source_for(sources_b, f, only[1] if only else None),
        )
        how.add(got["matched_by"])
        lines += got["matched"]
        removed += got["removed"]
        added += got["added"]
    lines.sort(key=lambda r: -abs(r["delta_ns"]))
    removed.sort(key=lambda r: -r["a_ns"])
    added.sort(key=lambda r: -r["b_ns"])
    by = "; ".join(sorted(how)) or BY_NUMBER
    if only:
        by += f" ({only[0]} ↔ {only[1]})"
    return {"lines_matched_by": by, "lines": lines, "removed_lines": removed, "added_lines": added}
