"""MCP server speed through the real ``mcp`` client SDK (stdio_client + ClientSession) against
``nki-studio mcp`` rooted at examples/: server start to the first tool answer, warm ``lint`` latency, and the
``simulate`` overhead beyond the simulation itself.

Usage: .venv/bin/python benchmarks/mcp_bench.py [--starts 5] [--lints 30] [--simulates 8] [--compare-with REV]

* start → first answer: from spawning the server process to the first ``lint`` result (initialize and the
  tool list included), one new server per repetition. Targets: <= 1 s.
* warm lint: p50 of ``lint`` on examples/layernorm.py once the server answered once. Target: <= 100 ms.
* simulate overhead: client-side wall time of ``simulate`` on examples/tensor_add.py minus the worker's own
  simulation time (``seconds.simulation``). It includes the reference, the oracle, the cost estimate, the
  worker hand-over and the protocol, and is printed split into the wait for the spare worker and the rest.
  Each call waits until the spare worker is warm again (``--pause``), as an agent does between calls; ``--pause 0`` shows back-to-back calls. Target: <= 300 ms.
* ``--compare-with REV``: the same start figure, and the import time of the server module, for the server as
  committed at git revision REV (extracted to a temporary folder and put first on ``PYTHONPATH``), measured
  alternately with the working tree's in this run, so the ratio old/new holds under a changing load.
Figures are wall-clock on this machine; it is shared, so compare runs made back to back.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from revisions import server_at
from targets import goal

ROOT = Path(__file__).resolve().parents[1]
PARAMS = StdioServerParameters(
    command=sys.executable, args=["-m", "nki_studio", "mcp", "--root", str(ROOT / "examples")], cwd=str(ROOT)
)


def _ms(values: list[float]) -> str:
    return f"p50 {statistics.median(values) * 1e3:.0f} ms (min {min(values) * 1e3:.0f}, max {max(values) * 1e3:.0f}, n={len(values)})"


def _params(pythonpath: str | None) -> StdioServerParameters:
    if pythonpath is None:
        return PARAMS
    env = {**os.environ, "PYTHONPATH": pythonpath}
    return StdioServerParameters(command=PARAMS.command, args=PARAMS.args, cwd=PARAMS.cwd, env=env)


async def _first_answer(pythonpath: str | None = None) -> float:
    started = time.perf_counter()
    async with stdio_client(_params(pythonpath)) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("lint", {"file": "layernorm.py"})
        elapsed = time.perf_counter() - started
        assert not result.is_error, result.content
    return elapsed


async def _warm(lints: int, simulates: int, pause: float) -> tuple[list[float], ...]:
    lint_s: list[float] = []
    overhead: list[float] = []
    simulation: list[float] = []
    waited: list[float] = []
    async with stdio_client(PARAMS) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.call_tool("lint", {"file": "layernorm.py"})
        for _ in range(lints):
            t = time.perf_counter()
            result = await session.call_tool("lint", {"file": "layernorm.py"})
            lint_s.append(time.perf_counter() - t)
            assert not result.is_error
        await anyio.sleep(pause)
        for _ in range(simulates):
            t = time.perf_counter()
            result = await session.call_tool("simulate", {"file": "tensor_add.py"})
            wall = time.perf_counter() - t
            assert not result.is_error and result.structured_content["passed"], result.content
            seconds = result.structured_content["seconds"]
            simulation.append(float(seconds["simulation"]))
            overhead.append(wall - float(seconds["simulation"]))
            waited.append(float(seconds["wait"]))
            await anyio.sleep(pause)
    return lint_s, overhead, simulation, waited


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _import_s(pythonpath: str | None) -> tuple[float, float]:
    """Wall and CPU time of a fresh interpreter importing the MCP server module (what ``nki-studio mcp``
    loads before it answers)."""
    env = {**os.environ, **({"PYTHONPATH": pythonpath} if pythonpath else {})}
    cpu, t = _children_cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-c", "import nki_studio.mcp.server"], check=True, env=env, cwd=ROOT)
    return time.perf_counter() - t, _children_cpu() - cpu


def _compare(rev: str, starts: int) -> None:
    """Old (``rev``) and new alternately: wall time to the first answer, and CPU time (user + system) of the
    server process over that session and of the bare import, which the machine's load disturbs far less."""
    with tempfile.TemporaryDirectory(prefix="nki-mcp-bench-") as tmp:
        old = server_at(rev, Path(tmp))
        figures: dict[str, dict[str, list[float]]] = {}
        for _ in range(starts):  # alternate, so both see the same load
            for label, path in (("old", old), ("new", None)):
                cpu = _children_cpu()
                wall = anyio.run(_first_answer, path)
                session_cpu = _children_cpu() - cpu
                import_wall, import_cpu = _import_s(path)
                for what, value in (
                    ("start → first lint answer, wall", wall),
                    ("server CPU over that session (start, initialize, one lint, exit)", session_cpu),
                    ("import nki_studio.mcp.server, wall", import_wall),
                    ("import nki_studio.mcp.server, CPU", import_cpu),
                ):
                    figures.setdefault(what, {"old": [], "new": []})[label].append(value)
        for what, runs in figures.items():
            ratio = statistics.median(runs["old"]) / statistics.median(runs["new"])
            print(f"{what}: {rev} {_ms(runs['old'])}; working tree {_ms(runs['new'])}; old/new {ratio:.2f}")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--starts", type=int, default=5)
    p.add_argument("--lints", type=int, default=30)
    p.add_argument("--simulates", type=int, default=8)
    p.add_argument(
        "--pause", type=float, default=6.0, help="seconds between simulate calls (spare worker warm)"
    )
    p.add_argument(
        "--compare-with", metavar="REV", help="also measure the server at git revision REV, alternately"
    )
    args = p.parse_args(argv)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.compare_with:
        _compare(args.compare_with, args.starts)
    starts = [anyio.run(_first_answer) for _ in range(args.starts)]
    print(
        f"server start → first lint answer: {_ms(starts)}  {goal(statistics.median(starts) * 1e3, 1000, 'ms', 'p50')}"
    )
    # Reference points measured alongside: what the interpreter and the SDK's own import cost on this machine.
    for what, code in (("python start", "pass"), ("python + import mcp (the SDK alone)", "import mcp")):
        runs = []
        for _ in range(args.starts):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            runs.append(time.perf_counter() - t)
        print(f"  reference, {what}: {_ms(runs)}")
    lint_s, overhead, simulation, waited = anyio.run(_warm, args.lints, args.simulates, args.pause)
    print(
        f"warm lint (examples/layernorm.py): {_ms(lint_s)}  {goal(statistics.median(lint_s) * 1e3, 100, 'ms', 'p50')}"
    )
    print(
        f"simulate overhead beyond the simulation (examples/tensor_add.py): {_ms(overhead)}  "
        f"{goal(statistics.median(overhead) * 1e3, 300, 'ms', 'p50')}"
    )
    print(f"  of which waiting for the spare worker to be ready: {_ms(waited)}")
    rest = [o - w for o, w in zip(overhead, waited, strict=True)]
    print(f"  the rest (protocol, spec, reference, oracle, hand-over): {_ms(rest)}")
    print(f"  the simulation itself: {_ms(simulation)}; pause between calls {args.pause:g} s")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
