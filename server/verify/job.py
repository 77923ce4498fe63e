"""One simulation job, executed inside the worker process (never in the server): memory limit, inputs,
simulation, reference, oracle and the estimate, turned into the structured result, a
:class:`~nki_studio.protocol.simulation.SimulationResult` (keys and their types are declared there).
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import sys
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from nki_studio.protocol.calibration import CalibrationNote, CalibrationTable
from nki_studio.protocol.simulation import ErrorInfo, SimulationResult, Spec, Status, Timings
from nki_studio.verify import memory_guard

Send = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class Job:
    """What the runner asks the worker to do."""

    path: str
    spec: Spec  # SimSpec.to_json()
    target: str = "trn2"
    nki_version: str | None = None
    backend: str = "auto"  # auto | official | embedded
    memory_bytes: int = 4 << 30
    trace_path: str | None = None
    precise: bool = True
    strict: bool = False
    # Folders importable after the kernel's own: the caller's folder when the file is a staged copy of
    # unsaved text (``nki_studio.verify.unsaved``), so its helper modules and references still import.
    search_path: tuple[str, ...] = ()
    # The module the kernel file is in its package (``sim.packages``) when ``path`` is a staged copy: the
    # dotted name and the package root. A saved file's package is found from its own folder.
    module_name: str | None = None
    module_root: str | None = None
    # The user's calibration of this target (``service.calibration``): the table the estimate prices with, and
    # what the estimate says about it (applied, or ignored and why).
    calibration: CalibrationTable | None = None
    calibration_note: CalibrationNote | None = None
    # Write the kernel's outputs here (NumPy .npz, arr_0, arr_1 ... in output order): the migration's proof
    # compares two runs' outputs exactly, which the result's summaries cannot.
    outputs_path: str | None = None

    def to_json(self) -> str:
        """One JSON line for the worker's stdin."""
        return json.dumps(self.__dict__) + "\n"


def preload() -> None:
    """Import everything a job needs, before the job arrives (warm start)."""
    import ml_dtypes  # noqa: F401
    import numpy
    import numpy.random
    from nki_studio.estimate import section  # noqa: F401
    from nki_studio.sim import api, dropin  # noqa: F401
    from nki_studio.verify import inputs, oracle  # noqa: F401

    with dropin.installed():  # imports every module the ``nki`` drop-in aliases
        pass
    numpy.random.default_rng(0).standard_normal(1)  # numpy.random's extension modules load lazily


def _error_info(exc: BaseException) -> ErrorInfo:
    """Message, kind and user file:line + helper call chain of an exception."""
    from nki_studio.sim.errors import SimulationError
    from nki_studio.sim.userframe import shorten_stack, traceback_location

    if isinstance(exc, SimulationError) and exc.file:
        loc_file, loc_line, stack = exc.file, exc.line, list(exc.stack)
        message = getattr(exc, "message", str(exc))
    else:
        loc = traceback_location(exc.__traceback__)
        loc_file, loc_line, stack = loc.file, loc.line, list(loc.stack)
        message = f"{type(exc).__name__}: {exc}"
    return {
        "message": message,
        "kind": type(exc).__name__,
        "file": loc_file,
        "line": loc_line,
        "stack": shorten_stack(stack),  # an infinite recursion: first and last cycle, with the count
    }


def _resolve_function(ref: str, module: Any) -> Callable[..., Any]:
    """``fn`` from the kernel's module, or ``module:fn`` / ``module.fn`` importable from the kernel's folder."""
    if ":" in ref:
        mod_name, name = ref.split(":", 1)
    elif "." in ref:
        mod_name, name = ref.rsplit(".", 1)
    else:
        fn = getattr(module, ref, None)
        if not callable(fn):
            raise LookupError(f"no function {ref!r} in {getattr(module, '__file__', 'the kernel file')}")
        return fn
    fn = getattr(importlib.import_module(mod_name), name, None)
    if not callable(fn):
        raise LookupError(f"module {mod_name!r} has no function {name!r}")
    return fn


def _inputs(fn: Callable[..., Any], module: Any, seed: int) -> Any:
    """The argument tuple of an ``inputs=`` function, given the kernel's ``module`` and the spec's ``seed`` when it
    takes parameters of those names (a kernel taking an object of a class its file defines, such as a dataclass of
    options, gets one built from the module being simulated: the original's or the migrated one's)."""
    import inspect

    try:
        takes: Collection[str] = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        takes = ()
    given = {"module": module, "seed": seed}
    return fn(**{name: value for name, value in given.items() if name in takes})


def _positional_prefix(kernel: Any, names: list[str]) -> int:
    """How many leading ``names`` are the kernel's leading parameters, in order (the rest go by keyword)."""
    import inspect

    try:
        parameters = inspect.signature(getattr(kernel, "func", kernel)).parameters.values()
        params = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return len(names)
    count = 0
    while count < len(names) and count < len(params) and names[count] == params[count]:
        count += 1
    return count


def _copy(value: Any) -> Any:
    import numpy as np

    return value.copy() if isinstance(value, np.ndarray) else value


def _as_outputs(value: Any) -> list[Any]:
    import numpy as np

    if value is None:
        return []
    if isinstance(value, (tuple, list)):
        return [np.asarray(v) for v in value]
    return [np.asarray(value)]


def empty_result(job: Job, kernel: str, status: Status, message: str) -> SimulationResult:
    """A result of ``job`` with nothing computed yet: what a run fills in, or what a worker that gave no result
    answers with."""
    return {
        "status": status,
        "message": message,
        "backend": None,
        "kernel": kernel,
        "path": job.path,
        "spec": job.spec,
        "timings": {},
        "oracle": None,
        "peak": None,
        "warnings": [],
        "error": None,
        "estimate": None,
    }


def run(job: Job, send: Send) -> SimulationResult:
    """Execute ``job``; every failure becomes a result, never an exception."""
    from nki_studio.verify.spec import SimSpec

    spec = SimSpec.from_json(job.spec)
    result = empty_result(job, spec.kernel, "error", "")
    timings = result["timings"]

    def hard_stop(message: str) -> None:  # the RSS watcher ends a kernel that did not stop at the limit
        # a copy: the main thread may still be writing to ``result`` (the process exits right after this)
        final: SimulationResult = {**result, "timings": {"simulation": 0.0, **result["timings"]}}
        final["peakRssBytes"] = memory_guard.peak_rss_bytes()
        send({"type": "result", "result": _memory_limit(final, job, message, None)})

    try:
        guard = memory_guard.limit(job.memory_bytes, hard_stop)
        try:
            _run_stages(job, spec, result, send)
        finally:
            guard.stop()
        guard.raise_if_exceeded()
    except BaseException as exc:  # the kernel may raise anything, SystemExit included
        from nki_studio.sim.errors import ResourceLimitError, SimulationTimeout

        gc.collect()  # a MemoryError leaves little room: free what the failed run held first
        info = _error_info(exc)
        if isinstance(exc, MemoryError) or (
            isinstance(exc, ResourceLimitError) and not isinstance(exc, SimulationTimeout)
        ):
            _memory_limit(result, job, info["message"], info)
        else:
            _set_error(result, "error", info)
    timings.setdefault("simulation", 0.0)
    result["peakRssBytes"] = memory_guard.peak_rss_bytes()
    return result


def _memory_limit(result: SimulationResult, job: Job, what: str, info: ErrorInfo | None) -> SimulationResult:
    """``result`` as a ``memory_limit`` failure, one message whichever guard (``memory_guard``) stopped it."""
    info = (
        info
        if info is not None
        else {"message": what, "kind": "MemoryLimitExceeded", "file": "", "line": 0, "stack": []}
    )
    info["message"] = (
        f"the kernel exceeded the memory limit of {job.memory_bytes / (1 << 20):.0f} MiB "
        f"({what}); if it really needs more, raise --memory-mb / nki-studio.simulationMemoryLimitMb"
    )
    return _set_error(result, "memory_limit", info)


def _set_error(result: SimulationResult, status: Status, info: ErrorInfo) -> SimulationResult:
    """Status, error and the located message of a failed run."""
    where = f"{info['file']}:{info['line']}"
    prefix = f"{where}: " if info["file"] and where not in info["message"] else ""
    result["status"], result["error"], result["message"] = status, info, f"{prefix}{info['message']}"
    return result


def _run_stages(job: Job, spec: Any, result: SimulationResult, send: Send) -> None:
    from nki_studio.estimate.heap import prefer_heap_for_large_arrays
    from nki_studio.estimate.section import estimate_section
    from nki_studio.model.targets import parse_generation
    from nki_studio.sim import load_kernel_module, simulate
    from nki_studio.sim.packages import ModuleLocation, package_module
    from nki_studio.verify import oracle
    from nki_studio.verify.inputs import make_inputs

    prefer_heap_for_large_arrays()  # this process runs one kernel and its estimate: large temporaries reused

    timings: Timings = result["timings"]
    folder = os.path.dirname(os.path.abspath(job.path))
    named = ModuleLocation(job.module_name, job.module_root) if job.module_name and job.module_root else None
    location = named or package_module(job.path, job.search_path)
    # The package root stays importable while the kernel runs (imports inside functions, the reference).
    roots = (location.root,) if location else ()
    for at, extra in enumerate((folder, *roots, *job.search_path)):
        if extra not in sys.path:
            sys.path.insert(at, extra)
    generation = parse_generation(job.target)
    # No version named: simulate() infers it from the kernel's code and says so in its warnings.
    target = {"target": generation.value, "nki_version": job.nki_version}

    t = time.perf_counter()
    module = load_kernel_module(job.path, backend=job.backend, location=location)
    if spec.inputs:
        args = list(_inputs(_resolve_function(spec.inputs, module), module, spec.seed))
        names = [f"arg{i}" for i in range(len(args))]
    else:
        args = make_inputs(spec, module)
        names = [n for n, _ in spec.args]
    before = [(n, _copy(a)) for n, a in zip(names, args, strict=False)]
    timings["inputs"] = time.perf_counter() - t
    kernel = getattr(module, spec.kernel)
    n_positional = _positional_prefix(kernel, names) if not spec.inputs else len(args)

    def call(fn: Callable[..., Any], values: list[Any], **options: Any) -> Any:
        """Parameters after a skipped (defaulted) one go by keyword, so nothing shifts position."""
        keywords = dict(zip(names[n_positional:], values[n_positional:], strict=True))
        if fn is simulate:
            return simulate(kernel, *values[:n_positional], kernel_kwargs=keywords, **options)
        return fn(*values[:n_positional], **keywords)

    send({"type": "progress", "message": f"simulating {spec.kernel}"})
    t = time.perf_counter()
    sim = call(
        simulate,
        args,
        **target,
        precise=job.precise,
        strict=job.strict,
        trace=True,
        lnc=spec.lnc if spec.lnc > 1 else None,
        backend=job.backend,
        allocation_budget=job.memory_bytes,
        checkin=_heartbeat(spec.kernel, send),
        **({"ranks": spec.ranks} if spec.ranks > 1 else {}),
    )
    timings["simulation"] = time.perf_counter() - t
    result["backend"] = sim.backend
    result["warnings"] = list(sim.warnings)
    result["devicePrints"] = list(sim.report.device_prints)
    result["instructions"] = sim.report.instructions
    if sim.report.ignored_config:
        result["ignoredConfig"] = list(sim.report.ignored_config)
    result["peak"] = sim.peak_json()
    outputs = _as_outputs(sim.outputs)
    if job.outputs_path:
        import numpy as np
        from nki_studio.sim.dtypes import dtype_name

        arrays = [np.asarray(o) for o in outputs]
        # .npz keeps NumPy's own dtypes only (ml_dtypes' bfloat16/float8 come back as raw bytes): names alongside
        np.savez(job.outputs_path, *arrays, dtypes=np.array([dtype_name(a.dtype) for a in arrays]))

    expected = None
    if spec.reference:
        send({"type": "progress", "message": f"running reference {spec.reference}"})
        t = time.perf_counter()
        expected = call(_resolve_function(spec.reference, module), [_copy(a) for _, a in before])
        timings["reference"] = time.perf_counter() - t

    send({"type": "progress", "message": "checking the outputs"})
    t = time.perf_counter()
    verdict = oracle.evaluate(outputs, expected, before, args, spec.atol, spec.rtol)
    timings["oracle"] = time.perf_counter() - t
    if sim.trace is not None and not job.strict and any(o.nan_count for o in verdict.outputs):
        send(
            {"type": "progress", "message": "NaN in the outputs: re-running in strict mode to find the read"}
        )
        t = time.perf_counter()
        result["uninitializedRead"] = _first_uninitialized_read(
            lambda: call(
                simulate,
                [_copy(a) for _, a in before],
                **target,
                precise=job.precise,
                strict=True,
                lnc=spec.lnc if spec.lnc > 1 else None,
                backend="embedded",
                allocation_budget=job.memory_bytes,
                **({"ranks": spec.ranks} if spec.ranks > 1 else {}),
            )
        )
        timings["strictRerun"] = time.perf_counter() - t
        where = result["uninitializedRead"]
        for output in verdict.outputs:
            if output.nan_count:
                output.notes.append(
                    f"strict re-run: first read of never-written memory at {where['file']}:{where['line']}: "
                    f"{where['message']}"
                    if where
                    else "strict re-run found no read of never-written memory: the NaN was computed, or written from "
                    "an input"
                )
    result["oracle"] = verdict.to_json()

    if sim.trace is not None:
        if job.trace_path:
            from nki_studio.sim.trace import write_jsonl

            with open(job.trace_path, "w", encoding="utf-8") as stream:
                write_jsonl(sim.trace, stream)
        t = time.perf_counter()
        result["estimate"] = estimate_section(
            sim.trace, generation, names, calibration=job.calibration, calibration_note=job.calibration_note
        )
        timings["estimate"] = time.perf_counter() - t
        from nki_studio.sim.trace_columns import call_sites

        result["callSites"] = call_sites(sim.trace)

    if verdict.passed and expected is not None:
        result["status"], result["message"] = "passed", f"{spec.kernel} matches the reference"
    elif verdict.passed:
        result["status"] = "no_reference"
        result["message"] = (
            f"{spec.kernel} ran — no reference to compare (outputs finite, inputs unchanged); add "
            "reference=<function> to its simulate spec to check the numbers"
        )
    else:
        failed = ", ".join(f"{name} {m.name}" for name, m in verdict.failed_metrics()) or "; ".join(
            verdict.problems
        )
        result["status"], result["message"] = "failed", f"{spec.kernel}: oracle failed: {failed}"


def _first_uninitialized_read(run_strict: Callable[[], Any]) -> ErrorInfo | None:
    """Where a strict-mode run stops at a read of never-written memory (None if it does not)."""
    from nki_studio.sim.errors import UninitializedReadError

    try:
        run_strict()
    except UninitializedReadError as exc:
        return _error_info(exc)
    except Exception:  # any other failure was not there in the normal run: nothing to locate
        return None
    return None


def _heartbeat(kernel: str, send: Send, every_s: float = 1.0) -> Callable[[], None]:
    """A simulator check-in hook that reports the instruction count about once a second."""
    state = {"count": 0, "next": time.perf_counter() + every_s}

    def checkin() -> None:
        state["count"] += 1
        if state["count"] % 256 == 0 and time.perf_counter() >= state["next"]:
            state["next"] = time.perf_counter() + every_s
            send({"type": "progress", "message": f"simulating {kernel}: {state['count']:,} instructions"})

    return checkin


def run_json(line: str, send: Send) -> SimulationResult:
    """Parse a job line and run it."""
    return run(Job(**json.loads(line)), send)
