"""A kernel's search space: parameters with candidate values and constraints over them, declared in one of

* a comment in the block of comments directly above the kernel's decorator (the simulate spec may share it)::

      # nki-studio: tune TILE_N=128,256,512 BUFS=1..4 if TILE_N * BUFS <= 2048; TILE_N >= 256

* ``[tool.nki-studio.tune]`` in ``pyproject.toml``, key ``"rel/path.py::kernel"`` or ``"kernel"``, value the
  comment's text or a table ``{ space = "TILE_N=128,256", constraints = ["TILE_N <= 256"] }``;
* the command line (``--space``, ``--constraint``), which replaces both.

Values: integers, floats or strings, comma-separated; ``A..B`` is every integer from A to B inclusive.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nki_studio.core.pyproject import TOOL_TABLE, PyprojectError, find_pyproject, read_pyproject
from nki_studio.protocol.tune import TuneValue
from nki_studio.tune.constraints import Constraint, ConstraintError, compile_constraint

MARKER = re.compile(r"\s*#\s*nki-studio\s*:\s*tune\b")
_PARAM = re.compile(r"(?P<name>[A-Za-z_]\w*)=(?P<values>\S+)")
_RANGE = re.compile(r"(?P<low>-?\d+)\.\.(?P<high>-?\d+)")
_MAX_RANGE = 100_000  # one parameter's A..B; the product is checked against the budget separately


class SpaceError(ValueError):
    """A space declaration that cannot be parsed; the message says where."""


@dataclass(frozen=True)
class Space:
    """Parameters in declaration order, each with its candidate values, and the constraints."""

    params: Mapping[str, tuple[TuneValue, ...]]
    constraints: tuple[Constraint, ...] = ()
    origin: str = ""  # comment, pyproject or command line

    @property
    def size(self) -> int:
        """Points before constraints (the product of the value counts), without enumerating them."""
        return math.prod(len(v) for v in self.params.values())

    def allows(self, values: Mapping[str, Any]) -> bool:
        """Whether ``values`` satisfy every constraint."""
        return all(c.holds(values) for c in self.constraints)

    def contains(self, values: Mapping[str, Any]) -> bool:
        """Whether ``values`` is a point of the space: each a declared value, the constraints satisfied."""
        return all(values.get(name) in choices for name, choices in self.params.items()) and self.allows(
            values
        )

    def points(self) -> Iterator[dict[str, TuneValue]]:
        """Every point of the space, constraints not applied, in declaration order."""
        names = list(self.params)
        for combo in itertools.product(*self.params.values()):
            yield dict(zip(names, combo, strict=True))


def parse_value(text: str) -> TuneValue:
    """``128`` -> 128, ``0.5`` -> 0.5, anything else stays a string."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_values(name: str, text: str) -> tuple[TuneValue, ...]:
    """One parameter's values: ``128,256,512``, ``1..4`` or a mix (``1..3,8``); duplicates dropped."""
    out: list[TuneValue] = []
    for part in filter(None, text.split(",")):
        m = _RANGE.fullmatch(part)
        if m:
            low, high = int(m["low"]), int(m["high"])
            if high < low or high - low >= _MAX_RANGE:
                raise SpaceError(
                    f"{name}={text}: a range A..B needs A <= B and fewer than {_MAX_RANGE} values"
                )
            out.extend(range(low, high + 1))
        else:
            out.append(parse_value(part))
    if not out:
        raise SpaceError(f"{name}: no values")
    return tuple(dict.fromkeys(out))


def parse_space(text: str, constraints: Sequence[str] = (), origin: str = "command line") -> Space:
    """A space from ``NAME=values ... [if EXPR; EXPR]`` plus extra constraint expressions. Raises ``SpaceError``."""
    declared, _, tail = text.partition(" if ")
    params: dict[str, tuple[TuneValue, ...]] = {}
    for token in declared.split():
        m = _PARAM.fullmatch(token)
        if m is None:
            raise SpaceError(f"{origin}: {token!r} is not NAME=values (e.g. TILE_N=128,256 or BUFS=1..4)")
        if m["name"] in params:
            raise SpaceError(f"{origin}: {m['name']} is declared twice")
        params[m["name"]] = parse_values(m["name"], m["values"])
    if not params:
        raise SpaceError(f"{origin}: no parameters (e.g. TILE_N=128,256,512 BUFS=1..4)")
    expressions = [e for e in (*tail.split(";"), *constraints) if e.strip()]
    try:
        checked = tuple(compile_constraint(e, frozenset(params)) for e in expressions)
    except ConstraintError as exc:
        raise SpaceError(f"{origin}: {exc}") from None
    return Space(params, checked, origin)


def comment_space(source: str, decorator_line: int) -> str | None:
    """The text of the tune comment in the block of comments directly above the kernel's decorator
    (1-based line), or None."""
    lines = source.splitlines()
    index = decorator_line - 2
    while index >= 0 and lines[index].lstrip().startswith("#"):
        m = MARKER.match(lines[index])
        if m:
            return lines[index][m.end() :].strip()
        index -= 1
    return None


def pyproject_space(kernel_path: str, kernel: str) -> tuple[str, list[str]] | None:
    """The space text and constraints for ``kernel`` under ``[tool.nki-studio.tune]``, or None. Raises
    ``SpaceError`` for a malformed entry or an unreadable file."""
    pyproject = find_pyproject(kernel_path)
    if pyproject is None:
        return None
    try:
        table = read_pyproject(pyproject).get("tool", {}).get(TOOL_TABLE, {}).get("tune", {})
    except PyprojectError as exc:
        raise SpaceError(str(exc)) from None
    try:
        rel = Path(kernel_path).resolve().relative_to(Path(pyproject).parent).as_posix()
    except ValueError:
        rel = Path(kernel_path).name
    entry = table.get(f"{rel}::{kernel}", table.get(kernel)) if isinstance(table, dict) else None
    if entry is None:
        return None
    if isinstance(entry, str):
        return entry, []
    if isinstance(entry, dict) and isinstance(entry.get("space"), str):
        constraints = entry.get("constraints", [])
        if isinstance(constraints, list) and all(isinstance(c, str) for c in constraints):
            return entry["space"], list(constraints)
    raise SpaceError(
        f'{pyproject}: [tool.{TOOL_TABLE}.tune] {kernel!r} must be a string or a table with space = "..." '
        'and optional constraints = ["..."]'
    )


def resolve_space(
    source: str,
    kernel_path: str,
    kernel: str,
    decorator_line: int,
    *,
    space: str | None = None,
    constraints: Sequence[str] = (),
) -> Space:
    """The kernel's space: the command line's, else the comment's, else pyproject's (``constraints`` are added
    to whichever). Raises ``SpaceError`` (also when none is declared)."""
    if space:
        return parse_space(space, constraints)
    text = comment_space(source, decorator_line)
    if text is not None:
        return parse_space(text, constraints, origin="tune comment")
    entry = pyproject_space(kernel_path, kernel)
    if entry is not None:
        return parse_space(entry[0], [*entry[1], *constraints], origin=f"[tool.{TOOL_TABLE}.tune]")
    raise SpaceError(
        f"no search space for {kernel}: add a comment like `# nki-studio: tune TILE_N=128,256,512 BUFS=1..4` "
        f"above its decorator, an entry under [tool.{TOOL_TABLE}.tune], or --space"
    )
