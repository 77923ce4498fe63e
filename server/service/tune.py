"""Tune a kernel, decided once for every front end: the trust decision, the kernel's spec and target (the same
as ``simulation.prepare``), its search space (``--space`` over the tune comment over
``[tool.nki-studio.tune]``), the simulation limits from the settings, where candidates run (the local pool, or
Ray with an explicit fallback) and the cache; then ``tune.search`` and, when asked, the winner written back.

The front ends only translate: the CLI prints the table, JSON or HTML, the MCP tool returns the report.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from nki_studio.core.pyproject import TOOL_TABLE
from nki_studio.protocol.commands import DeclaredSpace, LineEdit
from nki_studio.protocol.tune import TuneReport, TuneValue
from nki_studio.service import calibration_file
from nki_studio.service.settings import Settings
from nki_studio.service.simulation import kernels, prepare, require_trust
from nki_studio.tune.cache import Cache, cache_dir
from nki_studio.tune.executors import RayUnavailable, make_executor
from nki_studio.tune.report import HEADER as REPORT_HEADER
from nki_studio.tune.report import html_page as report_html
from nki_studio.tune.report import outcome as report_outcome
from nki_studio.tune.report import scatter_svg as report_svg
from nki_studio.tune.report import summary as report_summary
from nki_studio.tune.report import table as report_rows
from nki_studio.tune.report import text as report_text
from nki_studio.tune.report import winner_line as report_winner
from nki_studio.tune.search import Limits, Problem, Progress, TuneError, search
from nki_studio.tune.space import SpaceError, comment_space, parse_space, pyproject_space, resolve_space
from nki_studio.tune.substitute import substitute
from nki_studio.verify.job import Job

__all__ = [
    "REPORT_HEADER",
    "Progress",
    "RayUnavailable",
    "SpaceError",
    "TuneError",
    "TuneOptions",
    "apply_winner",
    "declared_space",
    "report_html",
    "report_outcome",
    "report_rows",
    "report_summary",
    "report_svg",
    "report_text",
    "report_winner",
    "tune",
    "winner_edits",
]


@dataclass(frozen=True)
class TuneOptions:
    """What the caller chose for one search."""

    kernel: str | None = None  # None: the file's first kernel
    space: str | None = None  # replaces the comment's and pyproject's space
    constraints: tuple[str, ...] = ()
    budget: int | None = None
    time_s: float | None = None
    workers: int = max(1, (os.cpu_count() or 1))
    ray_address: str | None = None
    ray_fallback_local: bool = False
    cache: bool = True
    seed: int = 0
    backend: str = "auto"


def tune(
    path: str,
    source: str,
    settings: Settings,
    options: TuneOptions,
    on_progress: Callable[[Progress], None] = lambda _: None,
    cancelled: Callable[[], bool] = lambda: False,
) -> TuneReport:
    """Search ``options``' space of the kernel in ``source`` (the text of ``path``); ``cancelled`` ends it early
    (candidates running then finish, the rest are not started). Raises ``Refused`` (untrusted),
    ``SpecProblem``, ``SpaceError``, ``TuneError``, ``RayUnavailable``."""
    require_trust(settings)
    kernel = prepare(path, source, settings, kernel=options.kernel)
    decorator_line = kernel.info.decorator_line if kernel.info else 1
    space = resolve_space(
        source,
        path,
        kernel.spec.kernel,
        decorator_line,
        space=options.space,
        constraints=options.constraints,
    )
    # Candidates are priced as every estimate of this kernel is: with the user's calibration when there is one.
    calibration, calibration_note = calibration_file.for_estimate(path, kernel.generation.value, settings)
    job = Job(
        path=os.path.abspath(path),
        spec=kernel.spec.to_json(),
        target=kernel.generation.value,
        nki_version=kernel.nki_version,
        backend=options.backend,
        memory_bytes=settings.simulation_memory_mb << 20,
        calibration=calibration,
        calibration_note=calibration_note,
    )
    problem = Problem(
        path, source, kernel.spec.kernel, job, settings.simulation_timeout_s, kernel.generation, space
    )
    executor, fallback = make_executor(options.workers, options.ray_address, options.ray_fallback_local)
    try:
        report = search(
            problem,
            executor,
            Cache(cache_dir(path) if options.cache else None),
            Limits(options.budget, options.time_s, options.seed),
            on_progress,
            cancelled,
        )
    finally:
        executor.close()
    if fallback:
        report["notes"].insert(0, fallback)
    return report


def apply_winner(path: str, searched: str, report: TuneReport) -> bool:
    """Write the winner's values into ``path`` (its constants and keyword defaults). False, with the file
    untouched, when there is no winner, nothing to change, or the file is no longer the text ``searched``."""
    winner = report["winner"]
    with open(path, encoding="utf-8") as fh:
        current = fh.read()
    if winner is None or current != searched:
        return False
    new = substitute(current, report["kernel"], winner["values"])
    if new == current:
        return False
    tmp = f"{path}.nki-studio-tune.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:  # written whole, then renamed: never a half-written kernel
        fh.write(new)
    os.replace(tmp, path)
    return True


def declared_space(path: str, source: str, kernel: str) -> DeclaredSpace:
    """The space ``kernel`` of ``source`` declares (its tune comment, else ``[tool.nki-studio.tune]``) as the
    text a user would type, with its size; empty when none is declared. Runs no user code."""
    info = next((k for k in kernels(source, path) if k.name == kernel), None)
    text = comment_space(source, info.decorator_line) if info else None
    origin = "tune comment"
    if text is None:
        try:
            entry = pyproject_space(path, kernel)
        except SpaceError:
            entry = None  # a broken entry: the search reports it; here there is just nothing to pre-fill
        if entry is None:
            return {"kernel": kernel, "space": "", "origin": "", "size": None}
        joined = "; " if " if " in entry[0] else " if "
        text = entry[0] + (joined + "; ".join(entry[1]) if entry[1] else "")
        origin = f"[tool.{TOOL_TABLE}.tune]"
    try:
        size: int | None = parse_space(text, origin=origin).size
    except SpaceError:
        size = None
    return {"kernel": kernel, "space": text, "origin": origin, "size": size}


def winner_edits(source: str, kernel: str, values: dict[str, TuneValue] | None) -> list[LineEdit]:
    """The whole-line edits that write ``values`` into ``source`` ([] for None or when nothing changes).
    Substitution keeps every line where it was, so each changed line is one replacement (a last line without
    a newline stays without one)."""
    if values is None:
        return []
    old, new = source.splitlines(keepends=True), substitute(source, kernel, values).splitlines(keepends=True)
    return [
        {"line": i, "replace": True, "text": b}
        for i, (a, b) in enumerate(zip(old, new, strict=True))
        if a != b
    ]
