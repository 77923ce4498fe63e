"""Map source paths recorded on the compile host (``/home/ubuntu/kern.py``) to files in the workspace.

Order (issue 5 §3, parquet-schema.md §4): the user's path-mapping setting first, then the path itself if it
exists here, then the workspace file sharing the longest common path suffix, then a unique basename.
Ambiguous matches are reported with their candidates instead of guessed. Every result says how it was found.

Paths of either OS are read on any OS: a recorded or mapped path with a drive letter, a UNC prefix or
backslashes is a Windows path (either separator). Where the local file system ignores case (Windows, macOS
by default), names and path components match case-insensitively; a Windows-style recorded path is compared
so too, and a path-mapping prefix applies to it whatever its case and separators.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath

from nki_studio.protocol.profile import MappingJson

# Directories never searched for kernel sources.
_SKIP_DIRS = frozenset(
    {
        ".git",
        ".venv",
        "venv",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".ruff_cache",
        ".hg",
        "build",
        "dist",
    }
)
MAX_INDEXED_FILES = 50_000


@dataclass(frozen=True)
class MappedFile:
    """Where one recorded path landed."""

    recorded: str
    local: Path | None
    how: str  # e.g. "path mapping /home/ubuntu → /ws", "longest common path suffix (2 components)"
    candidates: tuple[str, ...] = field(default_factory=tuple)  # when ambiguous

    def to_dict(self) -> MappingJson:
        """JSON-ready dict."""
        return {
            "recorded": self.recorded,
            "local": str(self.local) if self.local else None,
            "how": self.how,
            "candidates": list(self.candidates),
        }


_WINDOWS_PATH = re.compile(r"^(?:[A-Za-z]:(?:[\\/]|$)|\\\\)")  # C:\x, C:/x, C: or \\server\share


def is_windows_path(path: str) -> bool:
    """Whether ``path`` is written the Windows way: a drive letter, a UNC prefix or backslashes."""
    return bool(_WINDOWS_PATH.match(path)) or "\\" in path


def case_insensitive_fs(platform: str | None = None) -> bool:
    """Whether local file names ignore case by default (Windows, macOS): an estimate of the platform's
    default file system; a case-sensitive APFS volume is matched case-insensitively too (rarely wrong:
    two files differing only in case)."""
    return (sys.platform if platform is None else platform) in ("win32", "darwin")


def _parts(path: str) -> tuple[str, ...]:
    """Path components of a POSIX or Windows path, whatever OS we run on (no root, drive or share)."""
    if is_windows_path(path):
        win = PureWindowsPath(path)
        return tuple(p for p in win.parts if p != win.anchor)
    return tuple(p for p in PurePosixPath(path).parts if p != "/")


def _strip_prefix(recorded: str, prefix: str, fold: bool) -> str | None:
    """The rest of ``recorded`` after the path-mapping ``prefix`` (whole components only), or None."""
    if not prefix:
        return None
    if is_windows_path(recorded) or is_windows_path(prefix) or fold:
        rec, pre = _parts(recorded), _parts(prefix)
        if fold or is_windows_path(recorded):
            rec_key, pre_key = tuple(p.casefold() for p in rec), tuple(p.casefold() for p in pre)
        else:
            rec_key, pre_key = rec, pre
        anchors_match = _anchor(recorded, fold) == _anchor(prefix, fold)
        if anchors_match and rec_key[: len(pre_key)] == pre_key:
            return "/".join(rec[len(pre) :])
        return None
    return recorded[len(prefix) :].lstrip("/\\") if recorded.startswith(prefix) else None


def _anchor(path: str, fold: bool) -> str:
    anchor = PureWindowsPath(path).anchor if is_windows_path(path) else ("/" if path.startswith("/") else "")
    return anchor.replace("/", "\\").casefold() if is_windows_path(path) or fold else anchor


def index_workspace(roots: Sequence[Path], suffix: str = ".py") -> dict[str, list[Path]]:
    """Basename → files under the roots (skipping VCS, virtualenv and build folders; bounded)."""
    out: dict[str, list[Path]] = {}
    count = 0
    for root in roots:
        if root.is_file():
            out.setdefault(root.name, []).append(root.resolve())
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS and not d.startswith(".")]
            for name in filenames:
                if name.endswith(suffix):
                    out.setdefault(name, []).append(Path(dirpath, name).resolve())
                    count += 1
                    if count >= MAX_INDEXED_FILES:
                        return out
    return out


def _common_suffix(a: tuple[str, ...], b: tuple[str, ...], fold: bool = False) -> int:
    if fold:
        a, b = tuple(p.casefold() for p in a), tuple(p.casefold() for p in b)
    k = 0
    while k < min(len(a), len(b)) and a[-1 - k] == b[-1 - k]:
        k += 1
    return k


def _named(index: Mapping[str, list[Path]], name: str, fold: bool) -> list[Path]:
    """Indexed files called ``name`` (any case when ``fold``; the exact spelling first)."""
    exact = list(index.get(name, []))
    if not fold:
        return exact
    key = name.casefold()
    return exact + [p for k, paths in index.items() if k != name and k.casefold() == key for p in paths]


def map_path(
    recorded: str,
    mappings: Mapping[str, str],
    index: Mapping[str, list[Path]],
    case_insensitive: bool | None = None,
) -> MappedFile:
    """Map one recorded path (see module docstring for the order). ``case_insensitive``: how local names
    compare (default: :func:`case_insensitive_fs`); a Windows-style recorded path always ignores case."""
    local_fold = case_insensitive_fs() if case_insensitive is None else case_insensitive
    fold = local_fold or is_windows_path(recorded)
    for remote, local in sorted(mappings.items(), key=lambda kv: -len(kv[0])):
        rest = _strip_prefix(recorded, remote, local_fold)
        if rest is not None:
            target = Path(local, *_parts(rest)) if rest else Path(local)
            if target.is_file():
                return MappedFile(recorded, target.resolve(), f"path mapping {remote} → {local}")
    direct = Path(recorded)
    if direct.is_absolute() and direct.is_file():
        return MappedFile(recorded, direct.resolve(), "same path exists locally")
    parts = _parts(recorded)
    if not parts:
        return MappedFile(recorded, None, "empty path")
    candidates = _named(index, parts[-1], fold)
    if not candidates:
        return MappedFile(recorded, None, f"no workspace file named {parts[-1]}")
    scored = sorted(((_common_suffix(parts, c.parts, fold), c) for c in candidates), key=lambda t: -t[0])
    best = scored[0][0]
    top = [c for s, c in scored if s == best]
    if len(top) > 1:
        return MappedFile(
            recorded,
            None,
            f"ambiguous: {len(top)} workspace files end in the same "
            f"{best} path component(s); add a path mapping",
            tuple(str(c) for c in top),
        )
    how = "basename" if best == 1 else f"longest common path suffix ({best} components)"
    return MappedFile(recorded, top[0], how)


def map_sources(
    recorded: Iterable[str],
    roots: Sequence[Path],
    mappings: Mapping[str, str] | None = None,
    explicit: Sequence[Path] = (),
) -> dict[str, MappedFile]:
    """Map every recorded path. ``explicit`` files (``--source``) are searched before the workspace roots."""
    maps = dict(mappings or {})
    paths = sorted(set(recorded))
    result: dict[str, MappedFile] = {}
    if explicit:
        index = index_workspace(list(explicit))
        for r in paths:
            m = map_path(r, maps, index)
            if m.local is not None:
                result[r] = m
            elif len(explicit) == 1 and len(paths) == 1:
                result[r] = MappedFile(r, explicit[0].resolve(), "the only --source file given")
    rest = [r for r in paths if r not in result]
    if rest:
        index = index_workspace(roots) if roots else {}
        for r in rest:
            result[r] = map_path(r, maps, index)
    return result
