"""Hover and completion at the file's NKI version: a legacy ``neuronxcc.nki`` kernel gets the legacy API's
signatures and docs (the legacy stubs), labelled, with what ``nki-studio migrate`` does with names 0.7 removed;
a current kernel keeps the current API. No version is configured: the code decides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsp_harness import CONFIG, open_doc, start
from lsprotocol import types
from pytest_lsp import LanguageClient

LEGACY = """from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.compiler as ncc


@nki.baremetal
def add_rows(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(512)[None, :]
    x = nl.load(a[i_p, i_f], mask=(i_p < 100))
    acc = nisa.nc_matmul(x, x)
    y = nl.static_cast(acc, nl.bfloat16)
    for k in nl.affine_range(4):
        y = nl.exp(y)
    nl.store(out[i_p, i_f], y, mask=(i_p < 100))
    return out
"""
CURRENT = """import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def add_rows(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a[0:128, 0:512])
    y = nl.exp(x)
    nisa.dma_copy(dst=out[0:128, 0:512], src=y)
    return out
"""
LABEL = "NKI legacy (neuronxcc.nki, Neuron <= 2.26)"

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(config=CONFIG, scope="module", loop_scope="module")
async def client(lsp_client: LanguageClient) -> Any:
    await start(lsp_client, {"target": "trn2"})  # no nkiVersion: each file's imports decide
    yield
    await lsp_client.shutdown_session()


def _position(text: str, needle: str, offset: int = 0) -> types.Position:
    index = text.index(needle) + offset
    return types.Position(line=text.count("\n", 0, index), character=index - (text.rfind("\n", 0, index) + 1))


async def _hover(client: LanguageClient, uri: str, text: str, needle: str, offset: int = 0) -> str:
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=_position(text, needle, offset)
        )
    )
    if hover is None:
        return ""
    assert isinstance(hover.contents, types.MarkupContent)
    return hover.contents.value


async def _complete(client: LanguageClient, path: Path, text: str, line: str) -> list[types.CompletionItem]:
    """Completions at the end of ``line`` typed as a new line after the kernel's ``return``."""
    edited = text.replace("    return out\n", f"{line}\n    return out\n")
    uri = open_doc(client, path, edited)
    result = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=_position(edited, line, len(line))
        )
    )
    if result is None:
        return []
    return result.items if isinstance(result, types.CompletionList) else result


async def test_hover_in_legacy_code_shows_the_legacy_api_and_its_migration(
    client: LanguageClient, tmp_path: Path
) -> None:
    uri = open_doc(client, tmp_path / "legacy.py", LEGACY)
    arange = await _hover(client, uri, LEGACY, "arange", 1)
    assert LABEL in arange and "neuronxcc.nki.language.arange(" in arange and "v2.26.1" in arange, arange
    assert "Migration to NKI 0.7" in arange and "become slices" in arange

    matmul = await _hover(client, uri, LEGACY, "nc_matmul", 1)
    assert "neuronxcc.nki.isa.nc_matmul(stationary" in matmul and "dst" not in matmul.split("```")[1], matmul
    assert "becomes an allocation of t and nisa.nc_matmul(dst=t, ...)" in matmul

    cast = await _hover(client, uri, LEGACY, "static_cast", 1)
    assert LABEL in cast and "nl.copy(x, dtype=...)" in cast  # the manual recipe migrate lists

    baremetal = await _hover(client, uri, LEGACY, "baremetal", 1)
    assert LABEL in baremetal and "rewritten to nki.jit" in baremetal

    # a name the legacy API shares with 0.7: the legacy label and the iterator's rewrite, the current docs
    loop = await _hover(client, uri, LEGACY, "affine_range", 1)
    assert LABEL in loop and "rewritten to Python's range(...)" in loop

    # mod_alloc is declared by annotation on an allocator object: still hovered
    assert "Modular allocation" in await _hover(
        client,
        open_doc(client, tmp_path / "alloc.py", LEGACY + "ncc.sbuf.mod_alloc\n"),
        LEGACY + "ncc.sbuf.mod_alloc\n",
        "mod_alloc",
        1,
    )


async def test_hover_in_current_code_is_the_current_api(client: LanguageClient, tmp_path: Path) -> None:
    uri = open_doc(client, tmp_path / "current.py", CURRENT)
    exp = await _hover(client, uri, CURRENT, "exp", 1)
    assert "nki.language.exp(" in exp and LABEL not in exp and "Migration" not in exp, exp
    dma = await _hover(client, uri, CURRENT, "dma_copy", 1)
    assert "nki.isa.dma_copy(dst" in dma and LABEL not in dma


async def test_completion_offers_the_legacy_names_in_legacy_code_only(
    client: LanguageClient, tmp_path: Path
) -> None:
    legacy = {i.label for i in await _complete(client, tmp_path / "l.py", LEGACY, "    nl.")}
    assert {"arange", "mgrid", "par_dim", "static_cast", "loop_reduce", "program_id", "exp"} <= legacy
    assert "tiles" not in legacy  # 0.7 only
    current = {i.label for i in await _complete(client, tmp_path / "c.py", CURRENT, "    nl.")}
    assert "exp" in current and not {"arange", "mgrid", "par_dim", "static_cast", "loop_reduce"} & current

    entry = {i.label for i in await _complete(client, tmp_path / "e.py", LEGACY, "    nki.")}
    assert {"baremetal", "benchmark", "simulate_kernel", "jit"} <= entry
    compiler = {i.label for i in await _complete(client, tmp_path / "n.py", LEGACY, "    ncc.")}
    assert {"sbuf", "psum", "skip_middle_end_transformations"} <= compiler

    items = await _complete(client, tmp_path / "r.py", LEGACY, "    nl.static_")
    assert [i.label for i in items] == ["static_cast", "static_range"]
    resolved = await client.completion_item_resolve_async(items[0])
    assert isinstance(resolved.documentation, types.MarkupContent)
    assert LABEL in resolved.documentation.value and "Migration to NKI 0.7" in resolved.documentation.value
    assert resolved.detail and resolved.detail.startswith("neuronxcc.nki.language.static_cast(x")


async def test_keyword_completion_follows_the_version(client: LanguageClient, tmp_path: Path) -> None:
    legacy = {i.label for i in await _complete(client, tmp_path / "kl.py", LEGACY, "    nl.exp(y, ")}
    assert {"mask=", "dtype="} <= legacy
    isa = {
        i.label
        for i in await _complete(
            client, tmp_path / "ki.py", LEGACY, "    nisa.activation(op=nl.exp, data=y, "
        )
    }
    assert {"mask=", "dtype=", "bias=", "scale="} <= isa and "dst=" not in isa
    current = {i.label for i in await _complete(client, tmp_path / "kc.py", CURRENT, "    nl.exp(y, ")}
    assert "dtype=" in current and "mask=" not in current
