"""The first keyword-argument completion after the language server starts, and the first hover after it.

Each repetition spawns ``nki-studio serve`` twice; each time it initialises it and opens a kernel, then at
once either asks for the keyword arguments of an ISA call (``nisa.tensor_scalar(dst=a, data=a, op|``), as an
editor does when the user types right after opening a file, or hovers an NKI API name (which needs jedi,
warmed up or not). Timed from the request to the answer. ``--compare-with REV`` measures the server as committed at REV too (extracted to a temporary folder
and put first on ``PYTHONPATH``), alternately with the working tree's, so the ratio holds under a changing
load.

The first start for a new client configuration has no remembered ``initialize`` answer, so no fast path
(``lsp.fastpath``): a run warms that cache with its first start, and the figures are those of later starts.

Usage: .venv/bin/python benchmarks/first_completion_bench.py [--starts 6] [--compare-with REV]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from revisions import server_at

ROOT = Path(__file__).resolve().parents[1]
KERNEL = """import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.tensor_scalar(dst=a, data=a, op
    return out
"""
PROBE_LINE = 8  # 0-based: the open tensor_scalar call
HOVER = types.Position(line=7, character=len("    out = nl.nda"))  # on ``ndarray``


async def _once(pythonpath: str | None, folder: Path, first: str) -> float:
    """Milliseconds to the ``first`` request's answer ("completion" or "hover") on a fresh server."""
    env = {**os.environ, **({"PYTHONPATH": pythonpath} if pythonpath else {})}
    client = LanguageClient("first-completion-bench", "1")
    await client.start_io(sys.executable, "-m", "nki_studio", "serve", "--log-level", "warning", env=env)
    path = folder / "kernel.py"
    path.write_text(KERNEL, encoding="utf-8")
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=folder.as_uri(),
            initialization_options={"nki-studio": {"target": "trn2"}},
        )
    )
    client.initialized(types.InitializedParams())
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=KERNEL)
        )
    )
    line = KERNEL.split("\n")[PROBE_LINE]
    t = time.perf_counter()
    if first == "completion":
        result = await client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=PROBE_LINE, character=len(line)),
            )
        )
        items = result.items if isinstance(result, types.CompletionList) else (result or [])
        ok = sorted(i.label for i in items) == ["op0=", "op1=", "operand0=", "operand1="]
    else:
        hover = await client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=HOVER)
        )
        ok = hover is not None and "ndarray" in str(hover.contents)
    elapsed = (time.perf_counter() - t) * 1e3
    if not ok:
        raise SystemExit(f"unexpected {first} answer: nothing would be measured")
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return elapsed


def _ms(values: list[float]) -> str:
    return f"p50 {statistics.median(values):.0f} ms (min {min(values):.0f}, max {max(values):.0f}, n={len(values)})"


async def main_async(starts: int, rev: str | None) -> None:
    """Run and print the figures."""
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="nki-first-completion-") as tmp:
        variants: list[tuple[str, str | None]] = [("working tree", None)]
        if rev:
            variants.insert(0, (rev, server_at(rev, Path(tmp))))
        figures: dict[str, tuple[list[float], list[float]]] = {label: ([], []) for label, _ in variants}
        for n in range(starts):  # alternate, so every variant sees the same load
            for label, path in variants:
                for k, first in enumerate(("completion", "hover")):
                    folder = Path(tmp) / f"ws{n}-{k}-{label.replace(' ', '_')}"
                    folder.mkdir()
                    figures[label][k].append(await _once(path, folder, first))
        for label, (completion, hover) in figures.items():
            print(
                f"[{label}] first keyword completion: {_ms(completion)}; first hover (own start): {_ms(hover)}"
            )
        if rev:
            (old_c, old_h), (new_c, new_h) = figures[rev], figures["working tree"]
            print(
                f"old/new: first completion {statistics.median(old_c) / statistics.median(new_c):.2f}x, "
                f"first hover {statistics.median(old_h) / statistics.median(new_h):.2f}x"
            )
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def main(argv: list[str] | None = None) -> int:
    """Parse the options and run."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--starts", type=int, default=6)
    p.add_argument("--compare-with", metavar="REV")
    args = p.parse_args(argv)
    asyncio.run(main_async(args.starts, args.compare_with))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
