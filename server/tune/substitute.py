"""Put a candidate's values into the kernel's source: each parameter is a module-level constant
(``TILE_N = 512``) or a keyword parameter's default of the kernel (``def k(a, b, TILE_N=512)``); its value
expression is replaced by the candidate's literal, nothing else of the text changes (lines stay where they
were, so findings and the estimate's lines still point at the user's code)."""

from __future__ import annotations

import ast
import difflib
from collections.abc import Mapping
from dataclasses import dataclass

from nki_studio.protocol.tune import TuneValue


class SubstitutionError(ValueError):
    """A parameter that is neither a module constant nor a keyword parameter of the kernel."""


@dataclass(frozen=True)
class Site:
    """Where a parameter's value expression is in the source (1-based line, 0-based UTF-8 byte columns)."""

    line: int
    col: int
    end_line: int
    end_col: int
    current: TuneValue | None  # the literal there now; None when it is not a literal


def sites(source: str, kernel: str) -> dict[str, Site]:
    """Every name whose value a candidate can set: module constants (a single name assigned once at module
    level) and the keyword defaults of ``kernel``. Raises SyntaxError."""
    tree = ast.parse(source)
    found: dict[str, Site] = {}
    assigned: dict[str, int] = {}
    for node in tree.body:
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if isinstance(target, ast.Name) and value is not None:
            assigned[target.id] = assigned.get(target.id, 0) + 1
            found[target.id] = _site(value)
        elif isinstance(node, ast.FunctionDef) and node.name == kernel:
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True))
            pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
            for arg, default in pairs:
                found[arg.arg] = _site(default)
    # a name reassigned at module level has no single value to substitute
    return {name: site for name, site in found.items() if assigned.get(name, 1) == 1}


def _site(node: ast.expr) -> Site:
    try:
        value = ast.literal_eval(node)
        current: TuneValue | None = value if isinstance(value, int | float | str) else None
    except ValueError:
        current = None
    return Site(
        node.lineno, node.col_offset, node.end_lineno or node.lineno, node.end_col_offset or 0, current
    )


def check_names(available: Mapping[str, Site], names: list[str], kernel: str) -> None:
    """Raise ``SubstitutionError`` naming every parameter the source has no place for."""
    missing = [n for n in names if n not in available]
    if missing:
        raise SubstitutionError(
            f"{', '.join(missing)}: not a module-level constant nor a keyword parameter of {kernel} "
            f"(settable: {', '.join(sorted(available)) or 'none'})"
        )


def substitute(source: str, kernel: str, values: Mapping[str, TuneValue]) -> str:
    """``source`` with each parameter's value expression replaced by the literal of ``values``. Raises
    ``SubstitutionError`` (and SyntaxError)."""
    found = sites(source, kernel)
    check_names(found, list(values), kernel)
    lines = [line.encode("utf-8") for line in source.splitlines(keepends=True)]
    # right to left, bottom to top: an edit never moves a site not yet edited
    for name in sorted(values, key=lambda n: (found[n].line, found[n].col), reverse=True):
        site = found[name]
        first, last = lines[site.line - 1], lines[site.end_line - 1]
        lines[site.line - 1 : site.end_line] = [
            first[: site.col] + repr(values[name]).encode("utf-8") + last[site.end_col :]
        ]
    return b"".join(lines).decode("utf-8")


def current_values(source: str, kernel: str, names: list[str]) -> dict[str, TuneValue] | None:
    """The values the source has now for ``names`` (the baseline); None when one is not a literal."""
    found = sites(source, kernel)
    check_names(found, names, kernel)
    values = {n: found[n].current for n in names}
    if any(v is None for v in values.values()):
        return None
    return {n: v for n, v in values.items() if v is not None}


def unified_diff(before: str, after: str, path: str) -> str:
    """The change as a unified diff of ``path`` ('' when nothing changes)."""
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
        )
    )
