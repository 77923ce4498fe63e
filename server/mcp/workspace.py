"""File access confined to the configured workspace roots.

Every path a tool receives is resolved (relative paths against the first root, symlinks followed, ``..``
collapsed) and must then lie inside one of the resolved roots, so neither ``../`` nor a symlink leads out.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from nki_studio.mcp.errors import ToolFailure


class Workspace:
    """The roots a server may read from (and run kernels from)."""

    def __init__(self, roots: Sequence[str | Path]) -> None:
        resolved = [Path(r).expanduser().resolve() for r in roots]
        if not resolved:
            raise ValueError("at least one workspace root is needed")
        missing = [str(r) for r in resolved if not r.is_dir()]
        if missing:
            raise ValueError(f"workspace root is not a directory: {', '.join(missing)}")
        self.roots: tuple[Path, ...] = tuple(resolved)

    def contains(self, path: Path) -> bool:
        """Whether a resolved ``path`` lies in one of the roots."""
        return any(path == r or path.is_relative_to(r) for r in self.roots)

    def resolve(self, text: str, *, kind: str = "file", argument: str = "file") -> Path:
        """The resolved path named by ``text``: it must exist, lie inside a root and be a ``kind`` ("file",
        "dir" or "any"). Raises :class:`ToolFailure` (not_found, outside_roots, not_a_file) otherwise."""
        if not isinstance(text, str) or not text.strip() or "\0" in text:
            raise ToolFailure("invalid_arguments", f"{argument}: expected a path", argument=argument)
        raw = Path(os.path.expanduser(text))
        path = (raw if raw.is_absolute() else self.roots[0] / raw).resolve()
        # Containment first: a path outside the roots is refused without saying whether it exists.
        if not self.contains(path):
            raise ToolFailure(
                "outside_roots",
                f"{argument}: {text} is outside the workspace roots ({', '.join(map(str, self.roots))}); "
                "only files under them can be read",
                argument=argument,
                roots=[str(r) for r in self.roots],
            )
        if not path.exists():
            raise ToolFailure(
                "not_found", f"{argument}: no such file or directory: {text}", argument=argument
            )
        if kind == "file" and not path.is_file():
            raise ToolFailure("not_a_file", f"{argument}: {text} is not a regular file", argument=argument)
        if kind == "dir" and not path.is_dir():
            raise ToolFailure("not_a_file", f"{argument}: {text} is not a directory", argument=argument)
        return path

    def unsaved(self, where: str | None) -> str:
        """Where unsaved text (lint, simulate or estimate of ``source``) lives, inside the roots; the file
        itself need not exist: ``where``, else ``untitled.py`` in the first root. It locates the
        configuration and the helper modules, and names the file in the results."""
        if not where:
            return str(self.roots[0] / "untitled.py")
        parent = self.resolve(os.path.dirname(where) or ".", kind="dir", argument="path")
        return str(parent / os.path.basename(where))

    def relative(self, path: str | Path) -> str:
        """``path`` relative to the root that holds it (as agents read it), else unchanged."""
        p = Path(path)
        for r in self.roots:
            if p.is_relative_to(r):
                return str(p.relative_to(r))
        return str(p)
