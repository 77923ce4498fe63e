"""``nki-studio simulate FILE[::KERNEL]``: run a kernel in the sandboxed simulator, check it against its
reference and print the estimate (the scheduled timeline, with its bounds).

Inputs come from the spec comment above the kernel, inference, or ``[tool.nki-studio.simulate]``
(``--inputs`` overrides them all). Exit codes: 0 the kernel ran and the oracle passed, 1 the kernel failed,
timed out, ran out of memory or failed the oracle, 2 usage error (no such file/kernel, malformed spec).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from typing import Any

from nki_studio.cli.limits import add_limits
from nki_studio.nkilint.config import ConfigError
from nki_studio.protocol.simulation import SimulationResult
from nki_studio.service import simulation
from nki_studio.service.reports import simulation_exit_code, simulation_text
from nki_studio.service.settings import Settings, strict
from nki_studio.service.simulation import Kernel, RunOptions, Simulator, SpecProblem


def register(subparsers: Any) -> None:
    """Add the ``simulate`` sub-command."""
    p = subparsers.add_parser(
        "simulate",
        help="simulate a kernel, check it against its reference, estimate its cost",
        description="Simulate an NKI kernel in a separate process. Exit 0: ran and matched, 1: kernel or "
        "oracle failure, 2: usage error.",
    )
    p.add_argument("target_file", metavar="FILE[::KERNEL]", help="kernel file, optionally ::kernel_name")
    p.add_argument(
        "--inputs",
        metavar="SPEC",
        help="argument spec, e.g. 'x=bfloat16[128,512] seed=3' "
        "(same grammar as the '# nki-studio: simulate' comment)",
    )
    p.add_argument("--reference", metavar="FN", help="reference function (name in FILE, or module:function)")
    p.add_argument("--target", help="target generation: trn1, trn2, trn3 (default: pyproject, else trn2)")
    p.add_argument("--nki-version", help="NKI version semantics, e.g. 0.6 or 0.7")
    p.add_argument(
        "--backend",
        choices=("auto", "official", "embedded"),
        default="auto",
        help="simulator: AWS's nki.simulate when installed (auto), or ours (embedded)",
    )
    add_limits(p)
    p.add_argument("--json", action="store_true", help="print the structured result as JSON")
    p.add_argument("--trace", metavar="OUT.jsonl", help="write the instruction trace as JSON Lines")
    p.add_argument("--strict", action="store_true", help="stop at the first read of never-written memory")
    p.add_argument(
        "--analyze",
        action="store_true",
        help="also print the bounds and line-level investigations of the estimated profile (--json always "
        "carries them in its estimate section)",
    )
    p.set_defaults(func=run)


def _usage(message: str) -> int:
    print(f"nki-studio simulate: {message}", file=sys.stderr)
    return 2


def _progress_printer(stop: threading.Event, status: list[str]) -> None:
    """Once a run takes longer than two seconds: an elapsed-time line on stderr, redrawn every second on a
    terminal, a plain line every ten seconds otherwise (CI logs)."""
    started = time.perf_counter()
    tty = sys.stderr.isatty()
    if stop.wait(2.0):
        return
    while True:
        elapsed = time.perf_counter() - started
        if tty:
            print(f"\r\033[K  {status[-1]}... {elapsed:.0f} s", end="", file=sys.stderr, flush=True)
        else:
            print(f"  {status[-1]}... {elapsed:.0f} s", file=sys.stderr, flush=True)
        if stop.wait(1.0 if tty else 10.0):
            break
    if tty:
        print("\r\033[K", end="", file=sys.stderr, flush=True)  # clear the progress line


def run(args: argparse.Namespace) -> int:
    """Execute ``simulate``; returns the exit code."""
    path, _, kernel = args.target_file.partition("::")
    if not os.path.isfile(path):
        return _usage(f"no such file: {path}")
    if any(v is not None and v <= 0 for v in (args.timeout, args.memory_mb)):
        return _usage("--timeout and --memory-mb must be positive")
    if args.backend == "official" and not simulation.official_available():
        return _usage(
            "--backend official: AWS's nki.simulate (Neuron SDK) is not importable here; "
            "use --backend embedded or auto"
        )
    try:
        settings = settings_of(args)
        override = simulation.overrides(args.inputs, args.reference)
    except ValueError as exc:  # SpecProblem too: its message names ``inputs``
        return _usage(f"--{exc}" if isinstance(exc, SpecProblem) else str(exc))
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    if kernel:
        names: list[str | None] = [kernel]
    else:  # every kernel with a spec; else the first kernel, with inferred inputs
        names = [k.name for k in simulation.specified_kernels(source, path, override)] or [None]
    kernels = []
    for name in names:
        try:
            kernels.append(simulation.prepare(path, source, settings, kernel=name, override=override))
        except SpecProblem as exc:
            for f in exc.findings:
                print(f"{path}:{f.span.line}:{f.span.column}: {f.code} {f.message}", file=sys.stderr)
            return _usage(str(exc))
        except ConfigError as exc:
            return _usage(str(exc))
    simulator = Simulator()
    results = [_run(args, simulator, settings, k, _trace_path(args, k, len(kernels) > 1)) for k in kernels]
    if args.json:  # the estimate section holds the bounds and investigations with or without --analyze
        print(json.dumps(results[0] if len(results) == 1 else results, indent=2, default=str))
    elif args.analyze:
        from nki_studio.cli.simulate_analyze import analysis_text

        print("\n\n".join(f"{simulation_text(r)}\n\n{analysis_text(r)}" for r in results))
    else:
        print("\n\n".join(simulation_text(r) for r in results))
    return max(simulation_exit_code(r) for r in results)


def settings_of(args: argparse.Namespace) -> Settings:
    """The options as settings (the editor's keys): running the command is the user's trust decision.
    Raises ValueError naming a bad value."""
    options = {
        "target": args.target,
        "nkiVersion": args.nki_version,
        "simulationTimeout": args.timeout,
        "simulationMemoryLimitMb": args.memory_mb,
    }
    return strict(Settings(trusted_workspace=True), {k: v for k, v in options.items() if v is not None})


def _trace_path(args: argparse.Namespace, kernel: Kernel, several: bool) -> str | None:
    """Where ``--trace`` writes the kernel's trace: one file per kernel when there are several."""
    trace = os.path.abspath(args.trace) if args.trace else None
    if trace and several:  # one trace per kernel: OUT.<kernel>.jsonl
        root, ext = os.path.splitext(trace)
        trace = f"{root}.{kernel.spec.kernel}{ext or '.jsonl'}"
    return trace


def _run(
    args: argparse.Namespace, simulator: Simulator, settings: Settings, kernel: Kernel, trace: str | None
) -> SimulationResult:
    status = [f"simulating {kernel.spec.kernel}"]
    stop = threading.Event()
    ticker = threading.Thread(target=_progress_printer, args=(stop, status), daemon=True)
    if not args.json:
        ticker.start()
    options = RunOptions(
        trace_path=trace, backend=args.backend, strict=args.strict, on_progress=status.append
    )
    try:
        return simulator.run(kernel, settings, options, warm=False)
    finally:
        stop.set()
        if ticker.is_alive():
            ticker.join()
