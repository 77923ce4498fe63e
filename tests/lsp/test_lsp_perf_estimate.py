"""Simulate-on-save publishes the estimate's investigations as ``nki-perf`` diagnostics, through the real server
over pipes: a purpose-built kernel that reloads an input gets one NKI703 on the reloading line (a Hint by
default, no Problems entry; marked estimated, in the hover too), which ``perfInvestigations: false`` and ``# noqa`` take away; a clean kernel
(every DMA row 4 KiB, each input loaded once, no matmul) gets none."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsp_harness import change_doc, open_doc, start
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.slow  # a server and a simulation worker per test

_HEAD = """import nki
import nki.isa as nisa
import nki.language as nl


# nki-studio: simulate x=bfloat16[128,2048]
@nki.jit
def kernel(x):
    out = nl.ndarray((128, 2048), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 2048), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
"""
# bfloat16[128, 2048]: 4 KiB per partition row, so no DMA descriptor is small (NKI701 stays silent)
CLEAN = (
    _HEAD
    + """    y = nl.ndarray((128, 2048), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=y, src=t)
    nisa.dma_copy(dst=out, src=y)
    return out
"""
)
RELOAD = (
    _HEAD
    + """    again = nl.ndarray((128, 2048), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=again, src=x)  # reload
    y = nl.ndarray((128, 2048), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=y, data1=t, data2=again, op=nl.add)
    nisa.dma_copy(dst=out, src=y)
    return out
"""
)
RELOAD_LINE = next(i for i, line in enumerate(RELOAD.splitlines()) if line.endswith("# reload"))  # 0-based


async def _until(check: Any, timeout: float = 90.0) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while not (got := check()):
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)
    return got


def _perf(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    return [d for d in client.diagnostics.get(uri, []) if d.source == "nki-perf"]


def _did_save(client: LanguageClient, uri: str) -> None:
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


def _save(client: LanguageClient, path: Path, uri: str, version: int, text: str) -> None:
    """Write ``text`` to disk (the worker runs the file), send it as the new version and save."""
    path.write_text(text)
    change_doc(client, uri, version, text)
    _did_save(client, uri)


async def test_simulate_on_save_publishes_the_estimates_findings(
    bare_client: LanguageClient, workdir: Path
) -> None:
    client = bare_client
    results: list[Any] = []
    client.feature("nki/simulationResult")(lambda ls, params: results.append(params))
    client.feature("nki/heatmap")(lambda ls, params: None)
    await start(client, {"trustedWorkspace": True, "lintEnabled": False}, root=workdir)
    path = workdir / "reload.py"
    path.write_text(RELOAD)
    uri = open_doc(client, path, RELOAD)
    _did_save(client, uri)

    (d,) = await _until(lambda: _perf(client, uri))
    assert (d.code, d.range.start.line, d.severity) == (
        "NKI703",
        RELOAD_LINE,
        types.DiagnosticSeverity.Hint,  # the default perfSeverity
    )
    assert d.message.startswith("Estimated") and "input `x`" in d.message
    assert results[-1].status == "no_reference"  # ran; the spec names no reference
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=RELOAD_LINE, character=6),
        )
    )
    assert hover is not None and "**Investigations** (estimated)" in hover.contents.value

    # the setting switches them off and on again
    def settings(on: bool) -> None:
        options = {"trustedWorkspace": True, "lintEnabled": False, "perfInvestigations": on}
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"nki-studio": options})
        )

    settings(False)
    await _until(lambda: not _perf(client, uri))
    settings(True)
    await _until(lambda: _perf(client, uri))

    # the clean kernel: every investigation ran and found nothing, and the diagnostic goes away
    count = len(results)
    _save(client, path, uri, 2, CLEAN)
    await _until(lambda: not _perf(client, uri))
    result = (await _until(lambda: results[count:]))[-1]
    assert result.status == "no_reference"  # ran; the spec names no reference
    statuses = {i.kind: i.status for i in result.estimate.investigations}
    assert statuses == dict.fromkeys(
        ("dma-efficiency", "redundant-dma", "tensor-engine", "transposes"), "nothing found"
    )

    # back to the reload, then a noqa on its line: still found by the estimate, but not shown
    _save(client, path, uri, 3, RELOAD)
    await _until(lambda: _perf(client, uri))
    lines = RELOAD.splitlines(keepends=True)
    lines[RELOAD_LINE] = lines[RELOAD_LINE].replace("# reload", "# reload  # noqa: NKI703")
    count = len(results)
    _save(client, path, uri, 4, "".join(lines))
    await _until(lambda: not _perf(client, uri))
    result = (await _until(lambda: results[count:]))[-1]
    found = [f.code for i in result.estimate.investigations for f in i.findings]
    assert found == ["NKI703"]
