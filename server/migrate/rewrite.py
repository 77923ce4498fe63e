"""The migration of one file: which API it is written for, the passes in order, and the result.

Passes run one after another on the text the previous one left (each re-parses it), every pass repeated until it
has nothing left to rewrite (nested constructs, e.g. ``simulate_kernel(baremetal(k)[g], ...)``, come out in two
rounds). The order keeps line numbers stable for what is reported: passes that never add or remove lines run
first, index-tile definitions are deleted next, imports (which may add a line) last. Manual steps are listed
from the original text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from nki_studio.core.findings import Fix
from nki_studio.core.text_edits import apply_fixes_listed
from nki_studio.migrate import (
    affine_values,
    allocation,
    block_dims,
    column_loads,
    entry_points,
    helper_calls,
    imports,
    index_patterns,
    index_tiles,
    integer_division,
    isa_operands,
    isa_results,
    iterators,
    limits,
    loop_directives,
    loop_reductions,
    manual,
    masked_values,
    matmul_accumulate,
    operand_values,
    operators,
    psum_results,
    reductions,
    rotations,
    scalar_masks,
    spmd_grids,
)
from nki_studio.migrate.result import ROUNDS, Change, ManualStep, PassResult
from nki_studio.migrate.source import Source
from nki_studio.model.api_version import imports_current, legacy_evidence
from nki_studio.model.targets import Generation

TARGET = "0.7"

Pass = Callable[[Source], PassResult]
_LEGACY_PASSES: tuple[Pass, ...] = (
    matmul_accumulate.run,  # before operators, which would make its += a tensor_tensor
    operators.run,
    integer_division.run,  # after operators, which make its tile / n an nl.divide call
    entry_points.run,
    iterators.run,
    limits.run,
    operand_values.run,
    rotations.run,  # before block_dims, which folds the rotated blocks it leaves
    block_dims.run,
    affine_values.run,  # before index_tiles: its predicate's index tiles are then used no more
    reductions.run,  # before index_patterns, which makes its operands .ap() views (and deletes lines)
    index_tiles.run,
    index_patterns.run,  # after index_tiles, which lists its definitions unless this pass deletes them
    column_loads.run,  # after index_tiles: an index tile next to an integer is a slice by then
    isa_results.run,
    isa_operands.run,  # after isa_results: the values used inside expressions
    masked_values.run,  # before scalar_masks, which lists what this leaves
    scalar_masks.run,
    loop_reductions.run,  # after scalar_masks: the mask it put under if
    allocation.run,
    psum_results.run,  # after isa_results and matmul_accumulate: the nl.* products left
    loop_directives.run,  # late, like spmd_grids: it adds a line (iterators leaves its loops to it)
    spmd_grids.run,  # late: it adds the loop lines (the kernel's other rewrites are reported at their own lines)
    imports.run,
)
# NKI 0.2-0.6 code already has the current API; what 0.7 still changes is its iterators and entry points.
_CURRENT_PASSES: tuple[Pass, ...] = (entry_points.run, iterators.run)


class NotMigratable(ValueError):
    """The file cannot be migrated as it is (``kind``: ``unparsable`` or ``mixed``); it is left untouched."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Migration:
    """A file's migration: the original and migrated text, what changed, and what is left to do by hand."""

    original: str
    text: str
    source_version: str  # "legacy" or "current" (NKI 0.2 and later)
    changes: tuple[Change, ...]
    manual: tuple[ManualStep, ...]

    @property
    def changed(self) -> bool:
        """Whether the rewrite changed the text."""
        return self.text != self.original


def migrate_source(
    text: str,
    to: str = TARGET,
    helpers: Sequence[str] = (),
    platform: Generation | None = None,
    *,
    first_change: bool = False,
) -> Migration:
    """Migrate ``text`` (a module) to NKI ``to`` (only 0.7); ``helpers``: the texts of the other modules of its
    package (the functions its masks and indices may come from); ``platform``: the generation it is simulated for
    (a ``platform_target=`` naming it is dropped). Raises ``NotMigratable`` for an unparsable file or one that
    imports both the legacy and the current API (half migrated). ``first_change``: stop after the first pass
    round that changes the text (the result then says only whether anything changes)."""
    if to != TARGET:
        raise ValueError(f"migrate targets NKI {TARGET} only (asked: {to})")
    try:
        src = Source(text)
    except SyntaxError as exc:
        raise NotMigratable("unparsable", f"cannot parse the file: line {exc.lineno}: {exc.msg}") from exc
    evidence = legacy_evidence(src.aliases, text)
    if evidence is not None and imports_current(src.aliases):
        raise NotMigratable(
            "mixed",
            f"the file imports both the legacy API (line {evidence.line}: {evidence.statement}) and the nki "
            "namespace: it looks half migrated; finish it by hand or restore the legacy version, then migrate",
        )
    legacy = evidence is not None
    steps = list(manual.run(src).manual) if legacy else []
    changes: list[Change] = []
    # helper calls inlined first (they keep the lines): the mask and index passes then see what they compute
    inline: Pass = partial(helper_calls.run, helpers=helpers)
    passes: tuple[Pass, ...] = tuple(
        partial(entry_points.run, platform=platform) if p is entry_points.run else p
        for p in ((inline, *_LEGACY_PASSES) if legacy else _CURRENT_PASSES)
    )
    parsed = src  # passes only read a Source: one parse serves every pass until the text changes
    for run in passes:
        for round_ in range(ROUNDS):
            if parsed.text != text:
                parsed = Source(text)
            result = run(parsed)
            if round_ == 0:
                steps.extend(result.manual)
            if not result.edits:
                break
            text, applied = apply_fixes_listed(
                text, [Fix(c.construct, (e,)) for c, e in zip(result.changes, result.edits, strict=True)]
            )
            changes.extend(result.changes[i] for i in applied)
            if first_change and text != src.text:
                break
        if first_change and text != src.text:
            break
    unique = {(s.line, s.construct): s for s in steps}
    return Migration(
        original=src.text,
        text=text,
        source_version="legacy" if legacy else "current",
        changes=tuple(sorted(changes, key=lambda c: c.line)),
        manual=tuple(sorted(unique.values(), key=lambda s: s.line)),
    )
