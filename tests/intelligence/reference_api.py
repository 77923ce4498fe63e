"""Read the public NKI API out of the reference pages (language.md, isa.md, collectives.md).

The stub-coverage test compares the shipped stubs with what these pages document, so nobody keeps a second list.
A documented signature is ``name(params)`` in backticks at the start of a table cell, bullet or line, or a line of
a code block; ``f(params)`` stands for every bare backticked name of its paragraph.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

SHARED = Path(__file__).resolve().parents[3] / "shared" / "nki-reference"  # the team's copy, when present
VENDORED = Path(__file__).parent / "data" / "reference"  # what CI has

_SIG = re.compile(r"^`(?:(?:nl|nisa|ncc)\.)?(\w*)\(([^`]*)\)(?:\s*->[^`]*)?`")
_DEFINITION = re.compile(r"^(?:\*\s+)?(`[^`]+`)\s+—")  # "* `name(params)` — what it does"
_INLINE = re.compile(r"`(\w+)\(((?:\s*\*?\w+(?:=[^,`()]*)?\s*,?)*)\)`")
_IDENT = re.compile(r"`([A-Za-z_]\w*)`")
_PREFIX = re.compile(r"^(?:nl|nisa|ncc)\.")


@dataclass(frozen=True)
class Param:
    name: str
    has_default: bool
    keyword_only: bool


@dataclass
class Api:
    """Documented names and signatures of one module (``methods`` are NkiTensor's)."""

    names: set[str] = field(default_factory=set)
    signatures: dict[str, list[Param]] = field(default_factory=dict)
    methods: dict[str, list[Param]] = field(default_factory=dict)
    enums: dict[str, set[str]] = field(default_factory=dict)


def reference_dir() -> Path:
    return SHARED if SHARED.is_dir() else VENDORED


def parse_params(text: str) -> list[Param]:
    """Split ``a, b=1, *, c=(1, 2)`` at top-level commas."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    params: list[Param] = []
    kw_only = False
    for part in (p.strip() for p in parts):
        if not part:
            continue
        if part == "*":
            kw_only = True
            continue
        name = part.split("=", 1)[0].strip().lstrip("*")
        params.append(Param(name, "=" in part, kw_only))
    return params


def _balanced(text: str) -> bool:
    return text.count("(") == text.count(")")


def _code_signatures(block: list[str]) -> list[tuple[str, str]]:
    """``name(params)`` statements of a code block (continuation lines joined; pseudo-code skipped)."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(block):
        line = block[i].split("#", 1)[0].rstrip()
        m = re.match(r"^(\w+)\(", line)
        if not m or m.group(1) in {"for", "if", "while", "print"}:
            i += 1
            continue
        stmt = line
        while not _balanced(stmt) and i + 1 < len(block):
            i += 1
            stmt += " " + block[i].split("#", 1)[0].strip()
        sig = re.match(r"^(\w+)\((.*)\)\s*(->.*)?$", stmt)
        if sig:
            out.append((sig.group(1), sig.group(2)))
        i += 1
    return out


def _paragraphs(text: str) -> list[str]:
    """Blank-line separated blocks; a block ending with ':' continues into the next (e.g. a table)."""
    out: list[str] = []
    for block in (p for p in re.split(r"\n\s*\n", text) if p.strip()):
        if out and out[-1].rstrip().endswith(":"):
            out[-1] += "\n" + block
        else:
            out.append(block)
    return out


def parse_page(text: str, *, method_sections: tuple[str, ...] = ()) -> Api:
    """Every documented signature of a page; headings starting with ``method_sections`` document methods."""
    api = Api()
    section = ""
    in_code = False
    block: list[str] = []
    for line in text.splitlines():
        if line.startswith("```"):
            if in_code:
                for name, params in _code_signatures(block):
                    api.signatures[name] = parse_params(params)
                block = []
            in_code = not in_code
            continue
        if in_code:
            block.append(line)
            continue
        if line.startswith("#"):
            section = line.lstrip("#").strip()
            continue
        if "Removed" in section or "not part of" in section:
            continue  # names documented as gone
        target = api.methods if section.startswith(method_sections) and method_sections else api.signatures
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if cells:
            first = _IDENT.match(cells[0]) or _SIG.match(cells[0])
            for cell in cells[:2]:
                m = _SIG.match(cell)
                if m:
                    name = m.group(1) or (first.group(1) if first else "")
                    if name:
                        target[name] = parse_params(m.group(2))
                    break
            continue
        d = _DEFINITION.match(line.strip())
        m = _SIG.match(d.group(1)) if d else None
        if m and m.group(1) and m.group(1) != "f":
            target[m.group(1)] = parse_params(m.group(2))
    # ``f(params)`` groups: "**Unary** `f(x, dtype=None)`: `abs`, `negative`, ..."
    for para in _paragraphs(text):
        group = re.search(r"`f\(([^`]*)\)`", para)
        if not group:
            continue
        params = parse_params(group.group(1))
        for name, inline in _INLINE.findall(para):
            if name != "f":
                api.signatures[name] = parse_params(inline)
        skip = {p.name for p in params} | set(api.signatures)
        for name in _IDENT.findall(para):
            if name not in skip:
                api.signatures[name] = params
    api.names |= set(api.signatures)
    return api


def _section(text: str, title_start: str) -> str:
    m = re.search(rf"^#+ {re.escape(title_start)}.*?$(.*?)(?=^#+ |\Z)", text, re.S | re.M)
    assert m, f"section {title_start!r} not found"
    return m.group(1)


def language_api() -> Api:
    """``nki.language``: §15 public list, §1/§2/§13 constants, signatures of §5.3 (methods) and §6-§12."""
    text = (reference_dir() / "language.md").read_text()
    api = parse_page(text, method_sections=("5.3",))
    public = _section(text, "15.")
    for chunk in re.findall(r"`([^`]+)`", public):
        api.names |= {w for w in chunk.split() if w.isidentifier()}
    for title in ("1.", "2.", "13."):
        for line in _section(text, title).splitlines():
            if line.startswith("|"):
                api.names |= {_PREFIX.sub("", n) for n in re.findall(r"`(nl\.\w+)`", line.split("|")[1])}
    # only what the module itself exports: the signatures of other sections' helpers stay, method names do not
    return api


def isa_api() -> Api:
    """``nki.isa``: every instruction heading and signature, the enums of §0.9 and classes of §0.10."""
    text = (reference_dir() / "isa.md").read_text()
    api = parse_page(text)
    api.names |= set(re.findall(r"^### [\d.]+ `nisa\.(\w+)`", text, re.M))
    for line in _section(text, "0.9").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = re.fullmatch(r"`(\w+)`", cells[0]) if len(cells) > 1 else None
        if m:
            api.enums[m.group(1)] = set(re.findall(r"`(\w+)`\s*=", cells[1]))
    api.names |= set(api.enums)
    api.names |= set(re.findall(r"`nisa\.([A-Z]\w+)\(", _section(text, "0.10")))
    return api


def collectives_api() -> Api:
    """``nki.collectives``: the API table."""
    return parse_page((reference_dir() / "collectives.md").read_text())
