"""Simulation jobs for the tools: the tool arguments translated to the service's (``service.simulation``:
spec, target, trust, the sandboxed worker), its refusals and spec problems translated to tool failures. One
warm spare worker is kept, so a call pays for the simulation, not the imports."""

from __future__ import annotations

from typing import Any

from nki_studio.mcp.config import McpConfig
from nki_studio.mcp.errors import ToolFailure
from nki_studio.mcp.targets import config_failure, tool_settings
from nki_studio.mcp.workspace import Workspace
from nki_studio.nkilint.config import ConfigError
from nki_studio.nkilint.engine import parse
from nki_studio.protocol.simulation import SimulationResult
from nki_studio.service import simulation
from nki_studio.service.settings import Settings
from nki_studio.service.simulation import Kernel, Refused, RunOptions, SpecProblem


def prepare(ws: Workspace, settings: Settings, args: dict[str, Any], argument: str = "file") -> Kernel:
    """The kernel ``args`` name (file or source [+ path], kernel, inputs, reference, target, nki_version),
    resolved by the service. Raises ToolFailure."""
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
    try:
        override = simulation.overrides(_text(args, "inputs"), _text(args, "reference"))
    except SpecProblem as exc:
        raise ToolFailure(exc.kind, str(exc), argument="inputs") from exc
    try:
        return simulation.prepare(
            path,
            source,
            tool_settings(settings, args),
            kernel=args.get("kernel") or None,
            override=override,
            unsaved=unsaved is not None,
        )
    except SpecProblem as exc:
        raise ToolFailure(exc.kind, str(exc), kernels=exc.kernels, problems=exc.problems) from exc
    except ConfigError as exc:
        raise config_failure(exc) from exc


def _text(args: dict[str, Any], key: str) -> str | None:
    return str(args[key]) if args.get(key) else None


class Simulator:
    """The service's simulator under the server's settings, one simulation at a time."""

    def __init__(self, config: McpConfig) -> None:
        self.config = config
        self._simulator = simulation.Simulator(one_at_a_time=True)

    def warm_up(self) -> None:
        """Start the spare worker now (it imports NumPy and the simulator in its own process)."""
        self._simulator.warm_up(self.config.settings)

    def run(
        self, job: Kernel, *, timeout_s: float | None = None, trace_path: str | None = None
    ) -> SimulationResult:
        """Simulate ``job`` (refused unless the server is trusted); the worker is gone when this returns."""
        try:
            return self._simulator.run(
                job, self.config.settings, RunOptions(timeout_s=timeout_s, trace_path=trace_path)
            )
        except Refused as exc:
            raise ToolFailure("refused", str(exc)) from exc

    def close(self) -> None:
        """Kill every worker (server shutdown)."""
        self._simulator.close()
