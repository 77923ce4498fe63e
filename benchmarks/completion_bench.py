"""Completion latency on a generated 2,000-line kernel module, through the real ``nki-studio serve`` process.

Each sample types a prefix into the module (didChange, as the editor sends it while typing) and times the
completion request: attribute completion after ``nl.``/``nisa.`` at several places of the module and keyword
arguments inside an ISA call. Baseline in the same session: hover on a file that does not import nki (the
server answers it without jedi), i.e. the protocol round trip alone. Target: completion p95 <= 100 ms.

Usage: .venv/bin/python benchmarks/completion_bench.py [--lines 2000] [--samples 60] [--no-lint] [--features intelligence]
The first run is the full server; the second only the given features, to separate our handler from the time
other features spend on the event loop when the document changes.
Figures are wall-clock on this machine with the lint feature running on the same edits (as in the editor).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lint_bench import generate  # the same generated kernel module as the lint benchmark
from lsprotocol import types
from pygls.lsp.client import LanguageClient
from targets import goal

PROBES = (
    "        nl.",
    "        nisa.tensor_",
    "        nisa.tensor_scalar(dst=y, data=y, op",
    "        nl.sb",
)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def run(lines: int, samples: int, lint: bool, features: str | None) -> list[float]:
    text = generate(lines)
    body_lines = [
        i for i, line in enumerate(text.split("\n")) if line.startswith("        nisa.tensor_reduce(")
    ]
    with tempfile.TemporaryDirectory() as tmp:
        path, plain = Path(tmp) / "kernels.py", Path(tmp) / "plain.py"
        path.write_text(text)
        plain.write_text("import os\n\nos.getcwd()\n")
        client = LanguageClient("completion-bench", "1")
        await client.start_io(*_server_command(features))
        await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                initialization_options={"nki-studio": {"target": "trn2", "lintEnabled": lint}},
            )
        )
        client.initialized(types.InitializedParams())
        uri, plain_uri = path.as_uri(), plain.as_uri()
        for u, t in ((uri, text), (plain_uri, plain.read_text())):
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    text_document=types.TextDocumentItem(uri=u, language_id="python", version=1, text=t)
                )
            )

        completion_ms: list[float] = []
        baseline_ms: list[float] = []
        counts: list[int] = []
        version = 1
        for n in range(samples + 3):  # the first rounds warm jedi's caches up and are not counted
            probe = PROBES[n % len(PROBES)]
            at = body_lines[(n * 7) % len(body_lines)]
            new_lines = text.split("\n")
            new_lines.insert(at, probe)
            version += 1
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text="\n".join(new_lines))],
                )
            )
            t0 = time.perf_counter()
            result = await client.text_document_completion_async(
                types.CompletionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    position=types.Position(line=at, character=len(probe)),
                )
            )
            elapsed = (time.perf_counter() - t0) * 1000
            t1 = time.perf_counter()
            await client.text_document_hover_async(
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=plain_uri),
                    position=types.Position(line=2, character=4),
                )
            )
            base = (time.perf_counter() - t1) * 1000
            items = result.items if isinstance(result, types.CompletionList) else (result or [])
            if not items:
                raise SystemExit(
                    f"no completion for {probe!r} at line {at + 1}: the benchmark would measure nothing"
                )
            if n >= 3:
                completion_ms.append(elapsed)
                baseline_ms.append(base)
                counts.append(len(items))
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()

    label = f"features {features}" if features else "all features"
    p50, p95 = statistics.median(completion_ms), percentile(completion_ms, 0.95)
    b50 = statistics.median(baseline_ms)
    print(
        f"module: {text.count(chr(10))} lines; {len(completion_ms)} completion requests after typing "
        f"({', '.join(repr(p.strip()) for p in PROBES)}), items per response: {min(counts)}-{max(counts)}"
    )
    print(
        f"[{label}{'' if lint else ', lint off'}] completion: p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {max(completion_ms):.1f} ms "
        f"{goal(p95, 100, 'ms', 'p95')}"
    )
    print(
        f"baseline (hover on a non-nki file, protocol round trip): p50 {b50:.1f} ms; completion p50 / baseline p50 = "
        f"{p50 / b50:.1f}x"
    )
    return completion_ms


def _server_command(features: str | None) -> list[str]:
    """``nki-studio serve``, or the same server with only the given feature modules (to attribute the cost)."""
    if features is None:
        return [sys.executable, "-m", "nki_studio", "serve", "--log-level", "warning"]
    code = (
        "import sys; from nki_studio.lsp import logs; from nki_studio.lsp.server import create_server; "
        f"logs.configure_stderr('warning'); create_server({features!r}.split(',')).start_io(sys.stdin.buffer, sys.stdout.buffer)"
    )
    return [sys.executable, "-c", code]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--samples", type=int, default=60)
    parser.add_argument(
        "--no-lint", action="store_true", help="disable the lint feature (isolates its CPU load)"
    )
    parser.add_argument(
        "--features",
        default="intelligence",
        help="comma-separated feature modules of the second run (default: intelligence alone)",
    )
    args = parser.parse_args()
    asyncio.run(run(args.lines, args.samples, not args.no_lint, None))
    asyncio.run(run(args.lines, args.samples, not args.no_lint, args.features))


if __name__ == "__main__":
    main()
