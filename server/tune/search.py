"""The search: every point of a small space, or Optuna's TPE within a budget for a large one; each point
pruned by lint, served from the cache or run on the executor, then ranked.

Budgets: ``budget`` counts distinct points tried (simulated, cached or pruned; a point the constraints reject
costs nothing); ``time_s`` stops starting new candidates once passed (running ones finish). A space larger than
``EXHAUSTIVE_LIMIT`` points without either is refused, with its size. ``cancelled`` (the editor's cancel) stops
starting new candidates too; the report then ranks what ran.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nki_studio.model.targets import Generation
from nki_studio.protocol.tune import TuneCandidate, TuneReport, TuneValue
from nki_studio.tune.cache import Cache, cache_key
from nki_studio.tune.calibration import calibration_key
from nki_studio.tune.evaluate import Task, blank
from nki_studio.tune.executors import Executor
from nki_studio.tune.prune import blocking, lint_config, prune_finding
from nki_studio.tune.rank import rank
from nki_studio.tune.space import Space
from nki_studio.tune.substitute import check_names, current_values, sites, substitute, unified_diff
from nki_studio.verify.job import Job

EXHAUSTIVE_LIMIT = 10_000  # points: more without --budget/--time is refused
_ASKS_PER_POINT = 20  # TPE: asks (duplicates, rejected points) allowed per budgeted point before giving up


class TuneError(ValueError):
    """A search that cannot start: the message says why and what to do."""


@dataclass(frozen=True)
class Problem:
    """One kernel's search, as the service resolved it."""

    path: str
    source: str
    kernel: str
    job: Job  # the kernel's job: spec, target, NKI version, backend, memory limit
    timeout_s: float
    generation: Generation
    space: Space


@dataclass(frozen=True)
class Limits:
    """How much to search."""

    budget: int | None = None
    time_s: float | None = None
    seed: int = 0


@dataclass(frozen=True)
class Progress:
    """Where a search is, for a progress bar: ``total`` is the points it will try (the budget for TPE)."""

    done: int
    total: int
    simulated: int
    cached: int
    elapsed_s: float

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the pace so far (None before the first candidate)."""
        if not self.done or self.done >= self.total:
            return None if not self.done else 0.0
        return self.elapsed_s / self.done * (self.total - self.done)

    @property
    def text(self) -> str:
        """``12/40  3 cached  ETA 1m20s``: the progress bar's words (CLI) and the editor's progress message."""
        eta = self.eta_s
        return f"{self.done}/{self.total}  {self.cached} cached  ETA " + (
            clock(eta) if eta is not None else "?"
        )


def clock(seconds: float) -> str:
    """``1m20s``, ``7s``."""
    m, s = divmod(int(seconds + 0.5), 60)
    return f"{m}m{s:02d}s" if m else f"{s}s"


@dataclass
class _State:
    problem: Problem
    executor: Executor
    cache: Cache
    deadline: float | None
    on_progress: Callable[[Progress], None]
    cancelled: Callable[[], bool]
    total: int
    started: float = field(default_factory=time.perf_counter)
    rows: dict[tuple[Any, ...], TuneCandidate] = field(default_factory=dict)
    pruned: Counter[str] = field(default_factory=Counter)
    rejected: int = 0
    simulated: int = 0
    hits: int = 0
    context: dict[str, Any] = field(default_factory=dict)
    baseline_codes: frozenset[str] = frozenset()

    def stopped(self) -> bool:
        return self.cancelled() or (self.deadline is not None and time.perf_counter() >= self.deadline)

    def report(self) -> None:
        self.on_progress(
            Progress(
                len(self.rows), self.total, self.simulated, self.hits, time.perf_counter() - self.started
            )
        )


def _key(values: Mapping[str, TuneValue]) -> tuple[Any, ...]:
    return tuple(sorted(values.items()))


def search(
    problem: Problem,
    executor: Executor,
    cache: Cache,
    limits: Limits,
    on_progress: Callable[[Progress], None] = lambda _: None,
    cancelled: Callable[[], bool] = lambda: False,
) -> TuneReport:
    """Search ``problem``'s space and rank what passed; ``cancelled`` stops it early (no new candidate starts).
    Raises ``TuneError`` (a refused space, a parameter with no place in the source, TPE without Optuna)."""
    space = problem.space
    try:
        settable = sites(problem.source, problem.kernel)
    except SyntaxError as exc:
        raise TuneError(f"{problem.path}: cannot parse: {exc.msg} (line {exc.lineno})") from None
    try:
        check_names(settable, list(space.params), problem.kernel)
    except ValueError as exc:
        raise TuneError(str(exc)) from None
    exhaustive = space.size <= (limits.budget or EXHAUSTIVE_LIMIT)
    if not exhaustive and limits.budget is None and limits.time_s is None:
        raise TuneError(
            f"the space has {space.size:,} points (more than {EXHAUSTIVE_LIMIT:,} to try one by one): give "
            "--budget N (points to try) or --time (e.g. 10m) and TPE searches within it, or narrow the space"
        )
    budget = space.size if exhaustive else (limits.budget or space.size)
    state = _State(
        problem,
        executor,
        cache,
        time.perf_counter() + limits.time_s if limits.time_s else None,
        on_progress,
        cancelled,
        total=budget,
    )
    config = lint_config(problem.path, problem.generation)
    state.baseline_codes = frozenset(f.code for f in blocking(problem.source, problem.path, config))
    state.context = {
        "spec": problem.job.spec,
        "target": problem.job.target,
        "nkiVersion": problem.job.nki_version,
        "backend": problem.job.backend,
        "calibration": calibration_key(problem.job.calibration),
    }
    base_values = current_values(problem.source, problem.kernel, list(space.params))
    baseline = _baseline(state, base_values, config)
    notes: list[str] = []
    if exhaustive:
        _exhaustive(state, config)
    else:
        _tpe(state, config, budget, limits.seed)
    if cancelled():
        notes.append(f"cancelled: {len(state.rows)} of {budget} points tried")
    elif state.stopped():
        notes.append(f"--time reached: {len(state.rows)} of {budget} points tried")
    if base_values is None:
        notes.append("the source's current values are not all literals: no baseline, no speed-up")
    rows = rank(list(state.rows.values()), baseline)
    if baseline is not None and _key(baseline["values"]) not in state.rows:
        rank([baseline], baseline)  # outside the space: its own speed-up of 1 and no rank among the rows
        baseline["rank"] = None
    winner = next((r for r in rows if r["rank"] == 1), None)
    diff = ""
    if winner is not None:
        diff = unified_diff(
            problem.source, substitute(problem.source, problem.kernel, winner["values"]), problem.path
        )
    return {
        "kernel": problem.kernel,
        "path": problem.path,
        "target": problem.job.target,
        "space": {name: list(values) for name, values in space.params.items()},
        "constraints": [c.text for c in space.constraints],
        "spaceSize": space.size,
        "strategy": "exhaustive" if exhaustive else "tpe",
        "executor": executor.name,
        "baseline": baseline,
        "candidates": rows,
        "winner": winner,
        "diff": diff,
        "rejectedByConstraints": state.rejected,
        "pruned": dict(state.pruned),
        "evaluated": state.simulated,
        "cacheHits": state.hits,
        "elapsedS": round(time.perf_counter() - state.started, 2),
        "calibration": state.context["calibration"],
        "notes": notes,
    }


def _prepare(state: _State, values: Mapping[str, TuneValue], config: Any) -> TuneCandidate | Task:
    """A finished row (pruned, cached) or the task that simulates ``values``."""
    problem = state.problem
    source = substitute(problem.source, problem.kernel, values)
    finding = prune_finding(source, problem.path, config, state.baseline_codes)
    if finding is not None:
        state.pruned[finding.code] += 1
        return blank(
            values, "pruned", f"{finding.code} {finding.name}: {finding.message} (line {finding.span.line})"
        )
    cached = state.cache.get(cache_key(source, values, state.context))
    if cached is not None:
        state.hits += 1
        return cached
    return Task(problem.job, problem.timeout_s, dict(values), source)


def _run(state: _State, batch: Sequence[Mapping[str, TuneValue]], config: Any) -> Iterator[TuneCandidate]:
    """Try ``batch`` (new points only), yielding each row as it is known."""
    tasks: list[Task] = []
    for values in batch:
        prepared = _prepare(state, values, config)
        if isinstance(prepared, dict):
            state.rows[_key(values)] = prepared
            state.report()
            yield prepared
        else:
            tasks.append(prepared)
    for task, row in state.executor.run(tasks, state.stopped):
        state.simulated += 1
        state.cache.put(cache_key(task.source, task.values, state.context), row)
        state.rows[_key(task.values)] = row
        state.report()
        yield row


def _baseline(state: _State, values: Mapping[str, TuneValue] | None, config: Any) -> TuneCandidate | None:
    """The source as it is, run first (the speed-up's reference); None when its values are not literals."""
    if values is None:
        return None
    if not state.problem.space.contains(values):
        rows = list(_run(state, [values], config))
        state.rows.pop(_key(values), None)  # outside the space: reported as the baseline only
        return rows[0] if rows else None
    return next(iter(_run(state, [values], config)), None)


def _exhaustive(state: _State, config: Any) -> None:
    space = state.problem.space
    batch = []
    for values in space.points():
        if not space.allows(values):
            state.rejected += 1
        elif _key(values) not in state.rows:
            batch.append(values)
    state.total = len(batch) + len(state.rows)
    for _ in _run(state, batch, config):
        pass


def _tpe(state: _State, config: Any, budget: int, seed: int) -> None:
    """Optuna's TPE over the space's values (each a categorical choice), ``executor.workers`` points at a
    time; a point that fails or is pruned is told as failed, so TPE steers away from it."""
    try:
        import optuna
    except ImportError:
        raise TuneError(
            f"the space has {state.problem.space.size:,} points: searching it within a budget needs Optuna, "
            "which is not installed: pip install 'nki-studio[tune]'"
        ) from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="minimize", sampler=optuna.samplers.TPESampler(seed=seed))
    space = state.problem.space
    asks = 0
    while len(state.rows) < budget and asks < budget * _ASKS_PER_POINT and not state.stopped():
        trials: list[tuple[Any, dict[str, TuneValue]]] = []
        fresh: dict[tuple[Any, ...], dict[str, TuneValue]] = {}
        while len(trials) < state.executor.workers and asks < budget * _ASKS_PER_POINT:
            trial = study.ask()
            asks += 1
            values = {name: _suggest(trial, name, choices) for name, choices in space.params.items()}
            if not space.allows(values):
                state.rejected += 1
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
                continue
            trials.append((trial, values))
            if _key(values) not in state.rows and len(state.rows) + len(fresh) < budget:
                fresh[_key(values)] = values
        list(_run(state, list(fresh.values()), config))
        for trial, values in trials:
            row = state.rows.get(_key(values))
            if row is not None and row["verdict"] == "ranked" and row["estimatedNs"] is not None:
                study.tell(trial, float(row["estimatedNs"]))
            else:
                study.tell(trial, state=optuna.trial.TrialState.FAIL)


def _suggest(trial: Any, name: str, choices: Sequence[TuneValue]) -> TuneValue:
    """One parameter's value for ``trial`` (a categorical choice: tile sizes are not a continuum)."""
    value: TuneValue = trial.suggest_categorical(name, list(choices))
    return value
