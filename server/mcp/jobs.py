"""Simulation jobs for the tools: resolve a kernel's spec from the tool arguments and run it in the sandboxed
worker (``nki_studio.verify.runner``: its own process group, wall-clock timeout, memory limit,
nothing left behind). One warm spare worker is kept, so a call pays for the simulation, not the imports."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any

from nki_studio.mcp.config import McpConfig
from nki_studio.mcp.errors import Kind, ToolFailure
from nki_studio.mcp.targets import file_config
from nki_studio.mcp.workspace import Workspace
from nki_studio.model.targets import Generation
from nki_studio.nkilint.engine import parse
from nki_studio.protocol.simulation import SimulationResult
from nki_studio.verify.job import Job
from nki_studio.verify.runner import WorkerPool, run_job
from nki_studio.verify.spec import KernelInfo, SimSpec, find_kernels, parse_fields, resolve


@dataclass(frozen=True)
class Prepared:
    """A kernel ready to run: its file, spec, target and the kernel's declaration."""

    path: str
    spec: SimSpec
    generation: Generation
    nki_version: str | None
    kernel: KernelInfo | None
    source: str | None = None  # unsaved text standing in for the file at ``path`` (which need not exist)


def prepare(ws: Workspace, args: dict[str, Any], argument: str = "file") -> Prepared:
    """The spec for ``args`` (file or source [+ path], kernel, inputs, reference, target, nki_version).
    Raises ToolFailure."""
    unsaved = args.get("source")
    if unsaved is not None:
        path, source = ws.unsaved(args.get("path") or args.get(argument)), str(unsaved)
    else:
        path = str(ws.resolve(args.get(argument, ""), argument=argument))
        try:
            with open(path, encoding="utf-8-sig") as fh:
                source = fh.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise ToolFailure("not_found", f"{argument}: cannot read {args.get(argument)}: {exc}") from exc
    tree = parse(source, path)
    if not hasattr(tree, "body"):  # a Finding: the file does not parse
        span = tree.span
        raise ToolFailure(
            "syntax_error",
            f"{ws.relative(path)}:{span.line}:{span.column}: {tree.message}",
            file=ws.relative(path),
            line=span.line,
            column=span.column,
        )
    override: dict[str, Any] = {}
    if args.get("inputs"):
        fields, errors = parse_fields(str(args["inputs"]))
        if errors:
            raise ToolFailure("bad_spec", "inputs: " + "; ".join(str(e) for e in errors), argument="inputs")
        override.update(fields)
    if args.get("reference"):
        override["reference"] = str(args["reference"])
    name = args.get("kernel") or None
    resolution = resolve(source, path, name, override=override)
    if resolution.spec is None:
        kinds = [k.name for k in find_kernels(source, path)]
        kind: Kind = "no_kernel" if not kinds or (name and name not in kinds) else "bad_spec"
        raise ToolFailure(
            kind,
            "cannot simulate: " + "; ".join(resolution.problems),
            kernels=kinds,
            problems=list(resolution.problems),
        )
    config = file_config(path, args)
    version = config.named_nki_version
    kernel = next((k for k in find_kernels(source, path) if k.name == resolution.spec.kernel), None)
    return Prepared(
        path,
        resolution.spec,
        config.target.generation,
        str(version) if version else None,
        kernel,
        str(unsaved) if unsaved is not None else None,
    )


class Simulator:
    """Runs prepared kernels in sandboxed workers under the server's limits."""

    def __init__(self, config: McpConfig) -> None:
        self.config = config
        self._pool: WorkerPool | None = None
        self._lock = threading.Lock()
        # One simulation at a time: each worker may use the whole memory limit, so an agent firing several
        # calls at once queues them instead of multiplying it (other tools keep answering meanwhile).
        self._one_at_a_time = threading.Lock()

    def warm_up(self) -> None:
        """Start the spare worker now (it imports NumPy and the simulator in its own process)."""
        with self._lock:
            if self._pool is None and self.config.trusted:
                self._pool = WorkerPool(warm=True)

    def run(
        self, job: Prepared, *, timeout_s: float | None = None, trace_path: str | None = None
    ) -> SimulationResult:
        """Simulate ``job`` (refused unless the server is trusted); the worker is gone when this returns."""
        if not self.config.trusted:
            raise ToolFailure(
                "refused",
                "this server was started untrusted (--untrusted): it lints and reads profiles but runs no kernel",
            )
        self.warm_up()
        limit = min(float(timeout_s), self.config.timeout_s) if timeout_s else self.config.timeout_s
        request = Job(
            path=os.path.abspath(job.path),
            spec=job.spec.to_json(),
            target=job.generation.value,
            nki_version=job.nki_version,
            memory_bytes=self.config.memory_mb << 20,
            trace_path=trace_path,
        )
        with self._one_at_a_time:  # the timeout counts from the hand-over, not from the wait here
            return run_job(request, pool=self._pool, timeout_s=limit, source=job.source)

    def close(self) -> None:
        """Kill every worker (server shutdown)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()
