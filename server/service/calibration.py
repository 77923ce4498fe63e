"""``calibrate``, decided once for every front end (CLI, MCP tool, language server command): for each measured
profile whose kernel can be simulated here (the kernel the profile's source lines fall in, or the one given),
simulate it with a trace, match the measured instructions to the simulated ones and fit the target's costs
(``nki_studio.estimate.calibration``); report the leave-one-kernel-out error before and after, and store the
table with the profiles' provenance in the calibration file, which every later estimate then uses
(``service.calibration_file``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from nki_studio.protocol.calibration import (
    CalibrateResult,
    CalibrationSource,
    CalibrationTable,
    SkippedProfile,
)
from nki_studio.protocol.simulation import RAN
from nki_studio.service import calibration_file, profiles, simulation
from nki_studio.service.settings import Settings
from nki_studio.service.simulation import RunOptions, Simulator, SpecProblem

if TYPE_CHECKING:
    from nki_studio.estimate.calibration.matching import Sample
    from nki_studio.sim.trace import TraceEvent


class Skip(Exception):
    """A profile calibrate cannot use: the message says why."""


@dataclass(frozen=True)
class CalibrateOptions:
    """How to calibrate."""

    kernel: str | None = None  # FILE::KERNEL every profile is a profile of (None: what each profile names)
    target: str | None = None  # trn1 | trn2 ... (None: the first usable kernel's)
    out: str | None = None  # the calibration file (None: ``calibration_file.write_path``)
    load: profiles.LoadOptions = field(default_factory=profiles.LoadOptions)


@dataclass
class _Kernel:
    """One usable profile: its simulated kernel, trace, samples and measured latency."""

    name: str
    path: str
    trace: list[TraceEvent]
    samples: list[Sample]
    measured_ns: int
    source: CalibrationSource


def calibrate(
    profile_paths: Sequence[str],
    settings: Settings,
    options: CalibrateOptions | None = None,
    *,
    simulator: Simulator | None = None,
    on_progress: Callable[[str], None] = lambda _m: None,
) -> CalibrateResult:
    """Fit the calibration of one target on ``profile_paths`` and store it (see the module docstring). Raises
    ``simulation.Refused`` in an untrusted workspace; every other problem of a profile skips it with the reason."""
    simulation.require_trust(settings)
    opts = options or CalibrateOptions()
    sim = simulator or Simulator()
    used: list[_Kernel] = []
    skipped: list[SkippedProfile] = []
    target = opts.target
    for path in profile_paths:
        on_progress(f"calibrate: {path}")
        try:
            kernel, generation = _use(path, opts, settings, sim, target)
        except Skip as exc:
            skipped.append({"profile": path, "reason": str(exc)})
            continue
        target = target or generation
        used.append(kernel)
    if not used or target is None:
        return {
            "file": "",
            "target": target or "",
            "used": [],
            "skipped": skipped,
            "table": None,
            "message": "nothing to calibrate on: no profile could be matched to a simulated kernel",
        }
    table = _fit_with_held_out(used, target)
    out = opts.out or calibration_file.write_path(used[0].path, settings)
    from nki_studio.estimate.calibration.store import note, write

    write(out, target, table)
    return {
        "file": out,
        "target": target,
        "used": table["profiles"],
        "skipped": skipped,
        "table": table,
        "message": f"{out}: {note(table, out)['message']} ({target})",
    }


def _fit_with_held_out(used: list[_Kernel], target: str) -> CalibrationTable:
    """The table fitted on every kernel, with the leave-one-kernel-out error and the provenance."""
    from nki_studio.estimate.calibration.fit import fit, held_out
    from nki_studio.estimate.calibration.overlay import Overlay
    from nki_studio.estimate.estimated_schedule import estimated_schedule
    from nki_studio.estimate.execution import kernel_ns
    from nki_studio.model.targets import Target, parse_generation

    limits = Target(parse_generation(target)).limits
    names = sorted({k.name for k in used})
    before: list[float] = []
    after: list[float] = []
    if len(names) > 1:
        for name in names:
            train = [s for k in used if k.name != name for s in k.samples]
            overlay = Overlay(fit(train, target))
            for k in (k for k in used if k.name == name):
                # the estimate's kernel time: the schedule's span and the per-execution fixed cost
                before.append(
                    abs(kernel_ns(estimated_schedule(k.trace, limits).total_ns) / k.measured_ns - 1)
                )
                after.append(
                    abs(kernel_ns(estimated_schedule(k.trace, limits, overlay).total_ns) / k.measured_ns - 1)
                )
    table = fit([s for k in used for s in k.samples], target)
    table["held_out"] = held_out(before, after)
    table["profiles"] = [k.source for k in used]
    return table


def _use(
    path: str, opts: CalibrateOptions, settings: Settings, sim: Simulator, target: str | None
) -> tuple[_Kernel, str]:
    """The profile at ``path`` simulated and matched, with its target. Raises ``Skip``."""
    from nki_studio.estimate.calibration.matching import match
    from nki_studio.estimate.estimated_schedule import estimated_schedule
    from nki_studio.model.targets import Target, parse_generation
    from nki_studio.sim.trace import read_jsonl

    explicit = [Path(opts.kernel.partition("::")[0])] if opts.kernel else []
    load = dataclasses.replace(opts.load, explicit=[*explicit, *opts.load.explicit])
    try:
        report = profiles.load(path, load)
    except profiles.ProfileError as exc:
        raise Skip(f"cannot read the profile: {exc}") from exc
    if not report.profile.has_instructions or report.metrics.kernel.latency_ns <= 0:
        raise Skip("the profile holds no timed instructions to fit on (kernel totals only, or no latency)")
    kernel_path, kernel_name = _kernel_of(report, opts.kernel)
    try:
        with open(kernel_path, encoding="utf-8") as fh:
            source = fh.read()
        prepared = simulation.prepare(kernel_path, source, settings, kernel=kernel_name)
    except OSError as exc:
        raise Skip(f"{kernel_path}: {exc.strerror or exc}") from exc
    except (SpecProblem, ValueError) as exc:
        raise Skip(f"cannot simulate {kernel_path}::{kernel_name}: {exc}") from exc
    generation = opts.target or target or prepared.generation.value
    if prepared.generation.value != generation:
        if not opts.target:  # each target has its own table: a profile of another one is not coerced
            raise Skip(
                f"its kernel's target is {prepared.generation.value}, the other profiles' {generation}: "
                "calibrate each target on its own (--target)"
            )
        prepared = dataclasses.replace(prepared, generation=parse_generation(generation))
    with tempfile.TemporaryDirectory(prefix="nki-calibrate-") as tmp:
        trace_path = os.path.join(tmp, "trace.jsonl")
        result = sim.run(prepared, settings, RunOptions(trace_path=trace_path, calibrated=False), warm=False)
        if result["status"] not in RAN or not os.path.isfile(trace_path):
            raise Skip(
                f"the simulation of {prepared.spec.kernel} did not finish: {result['status']}: "
                f"{result.get('message', '')}"
            )
        with open(trace_path, encoding="utf-8") as fh:
            trace = list(read_jsonl(fh))
    limits = Target(prepared.generation).limits
    local = os.path.realpath(kernel_path)

    def in_kernel(recorded: str) -> bool:
        mapped = report.local_path(recorded)
        return (
            os.path.realpath(mapped) == local
            if mapped
            else os.path.basename(recorded) == os.path.basename(local)
        )

    # matched against the trace as the estimate runs it (merged loads, spills): the instructions it prices
    sched = estimated_schedule(trace, limits)
    matched = match(report.profile, in_kernel, sched.events, sched, limits)
    if not matched.samples:
        raise Skip(
            f"no measured instruction matches a simulated one of {prepared.spec.kernel} (engine, line and order; "
            f"{matched.measured} measured on its lines): is it a profile of this kernel and version?"
        )
    # relative to the project, so a committed calibration file names the same kernel on every machine
    name = (
        f"{os.path.relpath(kernel_path, calibration_file.project_root(kernel_path))}::{prepared.spec.kernel}"
    )
    return (
        _Kernel(
            name,
            kernel_path,
            trace,
            matched.samples,
            report.metrics.kernel.latency_ns,
            {
                "file": path,
                "sha256": _hash(path),
                "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "target": generation,
                "kernel": name,
                "matched": matched.matched,
            },
        ),
        generation,
    )


def _kernel_of(report: profiles.ProfileReport, given: str | None) -> tuple[str, str | None]:
    """The kernel file and name a profile is of: ``given`` (FILE[::KERNEL]), else the local file most of its
    located instructions map to and the kernel defined last before most of them. Raises ``Skip``."""
    if given:
        path, _, name = given.partition("::")
        return path, name or None
    loc = report.profile.locations
    votes: dict[str, list[int]] = {}
    for code, line in zip(loc.file.codes.tolist(), loc.line.tolist(), strict=True):
        local = report.local_path(loc.file.values[code])
        if local is not None:
            votes.setdefault(local, []).append(line)
    if not votes:
        raise Skip(
            "the profile names no kernel file found here: give --kernel FILE::KERNEL (or --source FILE / "
            "path mappings)"
        )
    path, lines = max(votes.items(), key=lambda kv: len(kv[1]))
    try:
        with open(path, encoding="utf-8") as fh:
            kernels = simulation.kernels(fh.read(), path)
    except OSError as exc:
        raise Skip(f"{path}: {exc.strerror or exc}") from exc
    counts: dict[str, int] = {}
    for line in lines:
        before = [k for k in kernels if k.decorator_line <= line]
        if before:
            name = max(before, key=lambda k: k.decorator_line).name
            counts[name] = counts.get(name, 0) + 1
    if not counts:
        raise Skip(
            f"the profile's lines in {path} fall in no kernel of that file: give --kernel FILE::KERNEL"
        )
    return path, max(counts, key=lambda n: counts[n])


def _hash(path: str) -> str:
    """SHA-256 of a profile file, or of a profile folder's files (relative names and bytes, in order)."""
    digest = hashlib.sha256()
    root = Path(path)
    files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
    for f in files:
        digest.update(str(f.relative_to(root) if root.is_dir() else f.name).encode())
        digest.update(f.read_bytes())
    return digest.hexdigest()


def text(result: CalibrateResult) -> list[str]:
    """What the CLI prints."""
    out = [result["message"]]
    for s in result["used"]:
        out.append(
            f"  used    {s['file']}: {s['kernel']} ({s['matched']} instructions and transfers matched)"
        )
    for k in result["skipped"]:
        out.append(f"  skipped {k['profile']}: {k['reason']}")
    table = result["table"]
    if table is not None:
        h = table["held_out"]
        if h["kernels"] and h["before"] is not None and h["after"] is not None:
            out.append(
                f"held-out error (leave one kernel out, {h['kernels']} kernels; mean |estimated/measured - 1|): "
                f"built-in model {h['before']:.1%}, calibrated {h['after']:.1%}"
            )
        else:
            out.append(
                "held-out error: unknown (profiles of one kernel only; calibrate on two or more kernels)"
            )
        out.append(
            f"fitted: {len(table['compute'])} instruction costs, {len(table['dma'])} DMA costs, "
            f"engine scales {', '.join(f'{e} {v:.2f}x' for e, v in table['engine_scale'].items()) or 'none'}"
        )
    return out
