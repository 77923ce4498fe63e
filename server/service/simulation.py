"""Simulate a kernel, decided once for every front end: the trust decision (one refusal, one message), the
kernel's spec (comment, ``[tool.nki-studio.simulate]``, inference, the caller's overrides), its target
generation and NKI version (the settings' explicit values over ``[tool.nki-studio]``), the job, and the run in
a sandboxed worker (``nki_studio.verify.runner``: its own process group, wall-clock timeout, memory limit).

The front ends only translate: the language server runs ``Simulator.run`` from a thread and publishes, the
CLI prints, the MCP server returns tool results.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from nki_studio.core.findings import Finding
from nki_studio.core.simulation_codes import ON_CHIP_PEAK
from nki_studio.model.targets import DEFAULT_GENERATION, Generation, NkiVersion
from nki_studio.protocol.simulation import AnyResult, SimulationNotice, SimulationResult, Spec
from nki_studio.service import calibration_file
from nki_studio.service.settings import Settings, project_config
from nki_studio.verify import spec as verify_spec
from nki_studio.verify.job import Job
from nki_studio.verify.runner import WorkerPool, run_job
from nki_studio.verify.spec import (
    KernelInfo,
    SimSpec,
    comment_findings,
    find_kernels,
    inferred_fields,
    parse_fields,
    resolve,
)

if TYPE_CHECKING:
    from nki_studio.model.analysis import KernelArgs

REFUSAL = (
    "nki-studio runs no kernel in an untrusted workspace: simulating or profiling executes the kernel's code "
    "(here, or on the remote host). Trust the workspace (for the MCP server: start it without --untrusted) "
    "to enable it."
)

SpecProblemKind = Literal["no_kernel", "bad_spec"]


class Refused(Exception):
    """The workspace is not trusted: nothing that executes the user's kernel may run."""

    def __init__(self) -> None:
        super().__init__(REFUSAL)


def require_trust(settings: Settings) -> None:
    """The one trust decision: raise ``Refused`` unless the workspace is trusted."""
    if not settings.trusted_workspace:
        raise Refused


def refusal(kernel: str | None = None) -> SimulationNotice:
    """The refusal as the result a front end answers with (``status: refused``)."""
    notice: SimulationNotice = {"status": "refused", "message": REFUSAL}
    if kernel is not None:
        notice["kernel"] = kernel
    return notice


class SpecProblem(ValueError):
    """No spec can be resolved: ``kind`` says whether the kernel is missing or its inputs are incomplete."""

    def __init__(
        self,
        kind: SpecProblemKind,
        message: str,
        *,
        kernels: list[str] | None = None,
        problems: list[str] | None = None,
        resolution_findings: list[Finding] | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.kernels = kernels or []
        self.problems = problems or []
        self.findings = resolution_findings or []  # NKI601 on the spec comment


@dataclass(frozen=True)
class Kernel:
    """A kernel ready to run: its file, spec, target and declaration."""

    path: str
    spec: SimSpec
    generation: Generation
    nki_version: str | None
    info: KernelInfo | None
    source: str | None = None  # unsaved text standing in for the file at ``path`` (which need not exist)


def overrides(inputs: str | None = None, reference: str | None = None) -> dict[str, Any]:
    """The spec fields a caller gives on top of the file's (``--inputs``/``inputs``, ``--reference``).
    Raises ``SpecProblem``."""
    out: dict[str, Any] = {}
    if inputs:
        fields, errors = parse_fields(inputs)
        if errors:
            raise SpecProblem("bad_spec", "inputs: " + "; ".join(str(e) for e in errors))
        out.update(fields)
    if reference:
        out["reference"] = reference
    return out


def target_of(
    path: str, settings: Settings, *, lenient: bool = False
) -> tuple[Generation, NkiVersion | None]:
    """The generation and the *named* NKI version of ``path`` (None: nothing names it; the simulation then
    infers it from the kernel's code and says so). ``lenient``: a broken ``pyproject.toml`` gives the
    defaults (the editor reports it as a lint finding) instead of raising ``nkilint.config.ConfigError``."""
    from nki_studio.nkilint.config import ConfigError

    try:
        config = project_config(path, settings)
    except ConfigError:
        if not lenient:
            raise
        return settings.target or DEFAULT_GENERATION, settings.nki_version
    return config.target.generation, config.named_nki_version


def prepare(
    path: str,
    source: str,
    settings: Settings,
    *,
    kernel: str | None = None,
    override: dict[str, Any] | None = None,
    unsaved: bool = False,
    lenient: bool = False,
) -> Kernel:
    """The kernel ``kernel`` (None: the first) of ``source`` (the text of ``path``) with its spec and target.
    ``unsaved``: the worker runs ``source`` from a private staged copy instead of the file. Raises
    ``SpecProblem`` (and ``ConfigError`` unless ``lenient``)."""
    resolution = resolve(source, path, kernel, override=override or {})
    kernels = find_kernels(source, path)
    if resolution.spec is None:
        names = [k.name for k in kernels]
        kind: SpecProblemKind = "no_kernel" if not names or (kernel and kernel not in names) else "bad_spec"
        raise SpecProblem(
            kind,
            "cannot simulate: " + "; ".join(resolution.problems),
            kernels=names,
            problems=list(resolution.problems),
            resolution_findings=list(resolution.findings),
        )
    generation, version = target_of(path, settings, lenient=lenient)
    info = next((k for k in kernels if k.name == resolution.spec.kernel), None)
    return Kernel(
        path,
        resolution.spec,
        generation,
        str(version) if version else None,
        info,
        source if unsaved else None,
    )


def kernels(source: str, path: str) -> list[KernelInfo]:
    """The kernels of ``source`` (decorated functions), each with its lines and spec comment line."""
    return find_kernels(source, path)


def parses(source: str, path: str) -> bool:
    """Whether ``source`` parses (while a line is half typed it does not: its kernels are unknown)."""
    return verify_spec.parses(source, path)


def specified_kernels(source: str, path: str, override: dict[str, Any] | None = None) -> list[KernelInfo]:
    """The kernels of ``source`` whose spec is given (comment, pyproject or ``override``), not inferred."""
    return [
        k
        for k in find_kernels(source, path)
        if resolve(source, path, k.name, override=override or {}, infer=False).spec is not None
    ]


def saved_specs(source: str, path: str, check_cancelled: Callable[[], None] = lambda: None) -> list[Spec]:
    """The specs simulate-on-save runs: every kernel with a given spec (``check_cancelled`` raises to stop)."""
    specs: list[Spec] = []
    for kernel in find_kernels(source, path):
        check_cancelled()
        resolution = resolve(source, path, kernel.name, infer=False)
        if resolution.spec is not None:
            specs.append(resolution.spec.to_json())
    return specs


def from_spec(path: str, spec: Spec, settings: Settings) -> Kernel:
    """A saved file's kernel from a spec already resolved (simulate-on-save), its target read leniently."""
    generation, version = target_of(path, settings, lenient=True)
    return Kernel(path, SimSpec.from_json(spec), generation, str(version) if version else None, None)


def inferred_spec_comment(source: str, path: str, kernel: str) -> str | None:
    """The spec comment the value interpreter infers for ``kernel`` from its asserts (the "Add simulate spec"
    action); None when inference does not pin every parameter (nothing honest to offer)."""
    fields = inferred_fields(source, path, kernel)
    resolution = resolve(source, path, kernel, inferred=fields, use_pyproject=False)
    return resolution.spec.to_comment() if resolution.spec is not None else None


def template_spec_comment(source: str, path: str, kernel: KernelInfo) -> str:
    """A spec comment to edit for ``kernel`` when inference does not pin every parameter: what it does pin,
    then a placeholder ``dtype[shape]`` for each parameter still missing (``verify.spec.example_comment``)."""
    return verify_spec.example_comment(kernel, inferred_fields(source, path, kernel.name))


def spec_arguments(source: str, path: str) -> KernelArgs:
    """Argument shapes and dtypes from the file's simulate specs, for editor features that size allocations
    from them (a malformed spec just gives none)."""
    return verify_spec.spec_arguments(source, path)


def spec_findings(source: str, path: str, *, typing: bool = False) -> list[Finding] | None:
    """NKI601 spec problems of ``source``; None while it does not parse (a half-typed line: every spec would
    look misplaced, so the caller keeps what it showed). ``typing``: the text is being edited, so a value
    still being typed at the end of a spec comment is not reported yet (``verify.spec.comment_findings``)."""
    if not verify_spec.parses(source, path):
        return None
    return comment_findings(source, path, typing=typing)


def findings(source: str, path: str, results: Mapping[str, AnyResult]) -> list[Finding]:
    """The problems of ``results`` (kernel -> its last result, run on ``source``) located on the kernel's lines:
    errors, oracle failures, warnings. The on-chip memory peaks are not problems: they are shown by
    :func:`peak_notes` (hover) and the kernel panel."""
    found: list[Finding] = []
    if results:
        infos = {k.name: k for k in find_kernels(source, path)}
        for name, result in results.items():
            found.extend(
                f for f in result_findings(result, path, infos.get(name)) if f.code != ON_CHIP_PEAK.code
            )
    return found


def peak_notes(results: Mapping[str, AnyResult], path: str) -> dict[int, list[str]]:
    """1-based line -> the SBUF/PSUM peaks reached at that line's allocation (for the hover), per result."""
    from nki_studio.verify.report import peak_findings  # numpy: only once results exist

    notes: dict[int, list[str]] = {}
    for result in results.values():
        peak: Mapping[str, Any] = result.get("peak") or {}  # type: ignore[assignment]  # absent from notices
        for f in peak_findings(peak, path):
            notes.setdefault(f.span.line, []).append(f.message)
    return notes


def result_findings(result: AnyResult, path: str, info: KernelInfo | None) -> list[Finding]:
    """A result's errors, oracle failures and memory peaks as findings on the kernel's lines of ``path``."""
    from nki_studio.verify.report import findings as located  # numpy: only once results exist

    return located(result, path, info)


def official_available() -> bool:
    """Whether AWS's ``nki.simulate`` (Neuron SDK) is importable here (``--backend official``)."""
    from nki_studio.sim import official

    return official.available()


@dataclass(frozen=True)
class RunOptions:
    """How one run differs from the settings' defaults."""

    timeout_s: float | None = None  # at most the settings' simulationTimeout
    trace_path: str | None = None  # write the instruction trace as JSON Lines
    backend: str = "auto"  # auto | official | embedded
    strict: bool = False  # stop at the first read of never-written memory
    cancelled: Callable[[], bool] = field(default=lambda: False)
    on_progress: Callable[[str], None] | None = None
    calibrated: bool = True  # False: the built-in model only (calibrate itself compares against it)
    outputs_path: str | None = None  # write the outputs as .npz (the migration's proof)


class Simulator:
    """Runs kernels in sandboxed workers under the settings' limits, keeping one warm spare worker once
    ``warm_up`` was called (never in an untrusted workspace). Thread-safe."""

    def __init__(self, *, one_at_a_time: bool = False) -> None:
        self._pool: WorkerPool | None = None
        self._lock = threading.Lock()
        # One simulation at a time (the MCP server): each worker may use the whole memory limit, so calls
        # fired at once queue instead of multiplying it.
        self._serial = threading.Lock() if one_at_a_time else None

    def warm_up(self, settings: Settings) -> None:
        """Start the spare worker now (it imports NumPy and the simulator in its own process)."""
        with self._lock:
            if self._pool is None and settings.trusted_workspace:
                self._pool = WorkerPool(warm=True)

    def close(self) -> None:
        """Kill every worker (trust withdrawn, server shutdown)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def run(
        self, kernel: Kernel, settings: Settings, options: RunOptions | None = None, *, warm: bool = True
    ) -> SimulationResult:
        """Simulate ``kernel``; the worker is gone when this returns. Raises ``Refused`` in an untrusted
        workspace. ``warm``: take the spare worker (and keep one); False: a fresh worker for this run only."""
        require_trust(settings)
        opts = options or RunOptions()
        if warm:
            self.warm_up(settings)
        limit = settings.simulation_timeout_s
        if opts.timeout_s:
            limit = min(float(opts.timeout_s), limit)
        table, note = calibration_file.for_estimate(kernel.path, kernel.generation.value, settings)
        job = Job(
            path=os.path.abspath(kernel.path),
            spec=kernel.spec.to_json(),
            target=kernel.generation.value,
            nki_version=kernel.nki_version,
            backend=opts.backend,
            memory_bytes=settings.simulation_memory_mb << 20,
            trace_path=opts.trace_path,
            strict=opts.strict,
            calibration=table if opts.calibrated else None,
            calibration_note=note if opts.calibrated else None,
            outputs_path=opts.outputs_path,
        )

        def go() -> SimulationResult:
            return run_job(
                job,
                pool=self._pool if warm else None,
                timeout_s=limit,
                cancelled=opts.cancelled,
                on_progress=opts.on_progress,
                source=kernel.source,
            )

        if self._serial is None:
            return go()
        with self._serial:  # the timeout counts from the hand-over, not from the wait here
            return go()
