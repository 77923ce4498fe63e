"""``nki_studio.sim.simulate``: run a kernel (function or file) and get NumPy outputs plus a report.

Backends: ``embedded`` (this package), ``official`` (the Neuron SDK's ``nki.simulate`` when importable,
see ``official.py``), ``auto`` (official when available, else embedded).

Callers bound a run with ``deadline_s`` (time), ``allocation_budget`` (bytes the kernel may allocate),
``max_instructions`` and ``checkin`` (called every instruction). Failures raise ``SimulationError``
subclasses naming the kernel line; nothing is left behind (sys.modules restored, memory released).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from nki_studio.core.findings import Finding
from nki_studio.model.targets import (
    Generation,
    NkiVersion,
    Target,
    generation_from_env,
    parse_generation,
    parse_nki_version,
)
from nki_studio.sim import dropin, dtypes, official
from nki_studio.sim.context import SimOptions
from nki_studio.sim.errors import SimulationError
from nki_studio.sim.launch import KernelRun, find_kernel, jit_options, run_kernel, unwrap
from nki_studio.sim.lnc_config import configured_lnc
from nki_studio.sim.memory import Allocation
from nki_studio.sim.nki_compiler import ignored_options, surfaces_allocation_oom
from nki_studio.sim.packages import ModuleLocation
from nki_studio.sim.trace import TraceEvent
from nki_studio.sim.userframe import SourceLocation
from nki_studio.sim.versioning import infer_nki_version

BACKENDS = ("auto", "official", "embedded")


@dataclass
class RegionUsage:
    """Peak use of one on-chip region (bytes per partition) and what was live at the peak."""

    capacity_bytes: int
    peak_bytes: int
    live_at_peak: tuple[Allocation, ...] = ()


@dataclass
class SimReport:
    """Everything a run measured besides its outputs."""

    backend: str
    target: str
    nki_version: str
    precise: bool
    lnc: int
    instructions: int = 0
    elapsed_s: float = 0.0
    sbuf: RegionUsage | None = None  # max over logical cores; None with the official backend
    psum: RegionUsage | None = None
    warnings: list[str] = field(default_factory=list)
    device_prints: list[str] = field(default_factory=list)
    trace: Sequence[TraceEvent] = field(default_factory=list)  # a CompactTrace when traced
    inputs_modified: list[int] = field(default_factory=list)  # indices of arguments the kernel wrote
    traced: bool = False
    ignored_config: list[str] = field(default_factory=list)  # nki.compiler options accepted, not simulated


@dataclass
class SimResult:
    """Outputs (the kernel's return value with tensors as NumPy arrays) and the report."""

    output: Any
    report: SimReport
    rank_outputs: list[Any] = field(default_factory=list)  # one output per collective rank

    @property
    def outputs(self) -> list[np.ndarray]:
        """The returned arrays, flattened in return order."""
        found: list[np.ndarray] = []

        def walk(v: Any) -> None:
            if isinstance(v, np.ndarray):
                found.append(v)
            elif isinstance(v, (tuple, list)):
                for x in v:
                    walk(x)
            elif isinstance(v, dict):
                for x in v.values():
                    walk(x)

        walk(self.output)
        return found

    @property
    def backend(self) -> str:
        """ "embedded" or "official"."""
        return self.report.backend

    @property
    def warnings(self) -> list[str]:
        """Warnings, each prefixed with the kernel file:line when known."""
        return self.report.warnings

    @property
    def trace(self) -> Sequence[TraceEvent] | None:
        """Trace events (None unless ``trace=True`` with the embedded backend)."""
        return self.report.trace if self.report.traced else None

    def peak_json(self) -> dict[str, Any] | None:
        """Peak SBUF/PSUM use as JSON-ready data: ``{"sbuf": {"capacityBytes", "peakBytes", "live": [...]}, ...}``
        (bytes per partition; each live entry has name, shape, dtype, bytesPerPartition, file, line)."""
        if self.report.sbuf is None or self.report.psum is None:
            return None
        return {
            kind: {
                "capacityBytes": usage.capacity_bytes,
                "peakBytes": usage.peak_bytes,
                "live": [
                    {
                        "name": a.name,
                        "shape": list(a.shape),
                        "dtype": a.dtype,
                        "bytesPerPartition": a.bytes_per_partition,
                        "file": a.file,
                        "line": a.line,
                    }
                    for a in usage.live_at_peak
                ],
            }
            for kind, usage in (("sbuf", self.report.sbuf), ("psum", self.report.psum))
        }


PythonSubsetCheck = Callable[[str, NkiVersion], Sequence[Finding]]


def _reject_python_subset(path: str, nki_version: NkiVersion, check: PythonSubsetCheck) -> None:
    """Raise for Python the target NKI version does not compile: the findings ``check`` returns for the file
    (e.g. ``nki_studio.nkilint.api.check_python_subset``, the linter's NKI1xx rules)."""
    findings = check(path, nki_version)
    if findings:
        first = findings[0]
        listing = "; ".join(f"line {f.span.line}: {f.code} {f.message}" for f in findings[:10])
        raise SimulationError(
            f"the kernel uses Python that NKI {nki_version} does not compile: {listing}",
            location=SourceLocation(os.path.abspath(path), first.span.line),
        )


def _target(target: Target | Generation | str | None, nki_version: NkiVersion | str | None) -> Target:
    if isinstance(target, Target):
        base = target
    elif isinstance(target, Generation):
        base = Target(generation=target)
    elif isinstance(target, str):
        base = Target(generation=parse_generation(target))
    else:
        env = generation_from_env()
        base = Target(generation=env) if env else Target()
    if nki_version is None:
        return base
    version = parse_nki_version(nki_version) if isinstance(nki_version, str) else nki_version
    return Target(generation=base.generation, nki_version=version)


def _report(run: KernelRun, backend: str, opts: SimOptions, ignored_config: list[str]) -> SimReport:
    ctx = run.ctx
    usage: dict[str, RegionUsage] = {}
    for kind in ("sbuf", "psum"):
        cap = ctx.cores[0].memory.capacity[kind]
        best = max((c.memory.peaks[kind] for c in ctx.cores), key=lambda p: p.bytes_per_partition)
        usage[kind] = RegionUsage(cap, best.bytes_per_partition, best.live)
    warnings = list(ctx.warnings)
    for core in ctx.cores:
        warnings.extend(core.memory.warnings)
    return SimReport(
        backend=backend,
        target=opts.target.generation.value,
        nki_version=str(opts.nki_version),
        precise=opts.precise,
        lnc=opts.lnc,
        instructions=ctx.instructions,
        elapsed_s=run.elapsed_s,
        sbuf=usage["sbuf"],
        psum=usage["psum"],
        warnings=warnings,
        device_prints=list(ctx.shared.get("device_print", [])),
        trace=ctx.recorder.events if ctx.recorder is not None else [],
        inputs_modified=run.inputs_modified,
        traced=ctx.recorder is not None,
        ignored_config=ignored_config,
    )


def load_kernel_module(
    path: str,
    backend: str = "embedded",
    sys_path: tuple[str, ...] = (),
    location: ModuleLocation | None = None,
) -> Any:
    """Load a kernel file as a module: against the embedded ``nki`` unless the official backend is used. A
    file inside a package loads as its module of that package (``sim.packages``); ``location`` says which
    when ``path`` stands in for the package's file (a staged copy of unsaved text)."""
    if backend == "official" or (backend == "auto" and official.available()):
        return official.load_module(path)
    return dropin.load_module(path, None, sys_path, location)


def simulate(
    kernel_or_path: object,
    *args: Any,
    kernel_name: str | None = None,
    target: Target | Generation | str | None = None,
    nki_version: NkiVersion | str | None = None,
    precise: bool | None = None,
    strict: bool = False,
    trace: bool = False,
    lnc: int | None = None,
    backend: str = "embedded",
    kernel_kwargs: dict[str, Any] | None = None,
    capacity: str = "error",
    python_subset: PythonSubsetCheck | None = None,
    deadline_s: float | None = None,
    allocation_budget: int | None = None,
    max_instructions: int | None = None,
    checkin: Callable[[], None] | None = None,
    sys_path: tuple[str, ...] = (),
    ranks: int = 1,
    rank_args: list[tuple[Any, ...]] | None = None,
) -> SimResult:
    """Simulate a kernel on NumPy (or torch) arguments.

    ``kernel_or_path``: an ``@nki.jit`` kernel, ``kernel[lnc]``, a plain function, or a ``.py`` path
    (with ``kernel_name``, or its only kernel). ``target`` defaults to NKI_NC_VERSION, then
    NEURON_PLATFORM_TARGET_OVERRIDE, then trn2; ``nki_version`` to the one the kernel's code implies
    (``sim.versioning``; a ``Target`` names its own), else the newest; ``precise`` to NKI_PRECISE_FP
    (default on). ``lnc`` overrides the launch degree (``kernel[2]`` sets it too). ``python_subset`` (a checker
    such as ``nki_studio.nkilint.api.check_python_subset``) rejects constructs the target NKI version does not
    compile (file paths only; the simulator does not import the linter itself). ``ranks`` runs one kernel
    instance per collective rank
    (in lockstep, ``sim.schedule``); rank ``r`` gets ``rank_args[r]`` or a private copy of ``args``. See the module docstring
    for the bounds.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, not {backend!r}")
    tgt = _target(target, nki_version)
    use_official = backend == "official" or (backend == "auto" and official.available())
    opts = SimOptions(
        target=tgt,
        precise=dtypes.precise_default() if precise is None else precise,
        strict=strict,
        trace=trace,
        capacity=capacity,
        allocation_budget=allocation_budget,
        max_instructions=max_instructions,
        checkin=checkin,
        ranks=ranks,
    )
    path = os.fspath(kernel_or_path) if isinstance(kernel_or_path, (str, os.PathLike)) else None
    if use_official:
        if path is not None and python_subset is not None:
            _reject_python_subset(path, tgt.nki_version, python_subset)
        output = official.run(
            kernel_or_path if path is None else path,
            args,
            kernel_name=kernel_name,
            target=tgt,
            precise=opts.precise,
            lnc=lnc,
            kernel_kwargs=kernel_kwargs or {},
        )
        report = SimReport(
            backend="official",
            target=tgt.generation.value,
            nki_version=str(tgt.nki_version),
            precise=opts.precise,
            lnc=lnc or 1,
            warnings=["official nki.simulate: no SBUF/PSUM capacity accounting or trace"],
        )
        return SimResult(output, report)
    with dropin.installed(opts):
        if path is not None:
            module = dropin.load_module(path, opts, sys_path)
            kernel = find_kernel(module, kernel_name, path)
        else:
            kernel = kernel_or_path
        func, launched = unwrap(kernel)
        if nki_version is None and not isinstance(target, Target):  # a Target names its version
            version, opts.nki_version_note = infer_nki_version(func, tgt.nki_version, path)
            opts.target = Target(tgt.generation, version)
        if path is not None and python_subset is not None:  # against the inferred version, not the default
            _reject_python_subset(path, opts.nki_version, python_subset)
        opts.lnc = lnc or launched or configured_lnc() or 1
        opts.program_order_capacity = surfaces_allocation_oom(jit_options(kernel))
        opts.jit_arguments = tuple(jit_options(kernel))
        if opts.lnc not in (1, 2):
            raise SimulationError(f"lnc must be 1 or 2, not {opts.lnc}")
        if rank_args is not None and len(rank_args) != ranks:
            raise SimulationError(f"rank_args has {len(rank_args)} entries for {ranks} ranks")
        run = run_kernel(
            func,
            args,
            kernel_kwargs or {},
            opts,
            grid=launched is not None or lnc is not None or configured_lnc() is not None,
            deadline_s=deadline_s,
            rank_args=rank_args,
        )
    report = _report(run, "embedded", opts, ignored_options(jit_options(kernel)))
    return SimResult(run.output, report, run.rank_outputs)


__all__ = [
    "BACKENDS",
    "RegionUsage",
    "SimReport",
    "SimResult",
    "find_kernel",
    "load_kernel_module",
    "simulate",
]
