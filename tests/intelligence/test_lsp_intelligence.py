"""Completion, hover, signature help and definition of the NKI API through the real server (pytest-lsp)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsp_harness import CONFIG, open_doc, start
from lsprotocol import types
from pytest_lsp import LanguageClient

KERNEL = """import nki
import nki.language as nl
import nki.isa as nisa

from helpers import scale_tile


def local_helper(t):
    return t


@nki.jit
def kernel(a):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
    acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    nisa.dma_copy(dst=t, src=a)
    nisa.nc_matmul(acc, t, t)
    local_helper(t)
    scale_tile(t)
    return out
"""
HELPERS = "def scale_tile(t):\n    return t\n"
PLAIN = "import numpy as np\nimport os\n\nx = np.zeros(3)\nos.\n"


# One server for the module (starting one takes seconds); each test opens its own documents.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(config=CONFIG, scope="module", loop_scope="module")
async def client(lsp_client: LanguageClient) -> Any:
    await start(lsp_client, {"target": "trn2", "nkiVersion": "0.6"})
    yield
    await lsp_client.shutdown_session()


def _pos(text: str, needle: str, offset: int = 0, nth: int = 0) -> types.Position:
    index = -1
    for _ in range(nth + 1):
        index = text.index(needle, index + 1)
    index += offset
    line = text.count("\n", 0, index)
    return types.Position(line=line, character=index - (text.rfind("\n", 0, index) + 1))


def _edit(text: str, line_no: int, new: str) -> str:
    lines = text.split("\n")
    lines.insert(line_no, new)
    return "\n".join(lines)


async def _complete(client: LanguageClient, tmp_path: Path, text: str, position: types.Position) -> list[str]:
    uri = open_doc(client, tmp_path / "k.py", text)
    result = await client.text_document_completion_async(
        types.CompletionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
    )
    if result is None:
        return []
    items = result.items if isinstance(result, types.CompletionList) else result
    return [i.label for i in items]


async def _hover(client: LanguageClient, uri: str, position: types.Position) -> str:
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
    )
    if hover is None:
        return ""
    assert isinstance(hover.contents, types.MarkupContent)
    return hover.contents.value


async def test_completion_after_module_prefixes(client: LanguageClient, tmp_path: Path) -> None:
    text = _edit(KERNEL, 20, "    nl.")
    labels = await _complete(client, tmp_path, text, types.Position(line=20, character=7))
    assert {"ndarray", "sbuf", "psum", "shared_hbm", "bfloat16", "tile_size"} <= set(labels)
    assert "nc_matmul" not in labels and "print" not in labels  # only nl's names, no builtins

    resolved = await client.completion_item_resolve_async(types.CompletionItem(label="ndarray"))
    assert isinstance(resolved.documentation, types.MarkupContent)
    assert (
        "Allocate an uninitialised tensor" in resolved.documentation.value
        and "trn2: 128 partitions" in resolved.documentation.value
    )
    assert resolved.detail and resolved.detail.startswith("nki.language.ndarray(shape")

    text = _edit(KERNEL, 20, "    nisa.tensor_t")
    labels = await _complete(client, tmp_path, text, types.Position(line=20, character=17))
    assert {"tensor_tensor", "tensor_tensor_scan"} <= set(labels) and "ndarray" not in labels


async def test_completion_of_isa_keyword_arguments(client: LanguageClient, tmp_path: Path) -> None:
    text = _edit(KERNEL, 20, "    nisa.tensor_scalar(dst=t, o")
    labels = await _complete(
        client, tmp_path, text, types.Position(line=20, character=len("    nisa.tensor_scalar(dst=t, o"))
    )
    assert {"op0=", "operand0=", "op1=", "operand1="} <= set(labels)


async def test_hover_shows_signature_engine_and_target_limits(client: LanguageClient, tmp_path: Path) -> None:
    uri = open_doc(client, tmp_path / "k.py", KERNEL)
    text = await _hover(client, uri, _pos(KERNEL, "nc_matmul", 2))
    assert "nc_matmul(dst: NkiTensor, stationary: NkiTensor, moving: NkiTensor" in text
    assert "Engine: Tensor" in text
    assert "trn2: K <= 128, M <= 128, N <= 512" in text

    text = await _hover(client, uri, _pos(KERNEL, "dma_copy", 2))
    assert "Engine: DMA" in text and "never PSUM" in text


async def test_hover_warns_about_generation_and_version(client: LanguageClient, tmp_path: Path) -> None:
    source = KERNEL.replace("    local_helper(t)\n", "    nisa.activate2\n    nl.fori_loop\n    nl.tiles\n")
    uri = open_doc(client, tmp_path / "k.py", source)
    assert "Not available on trn2 (needs trn3 only)" in await _hover(
        client, uri, _pos(source, "activate2", 2)
    )
    assert "Needs NKI 0.7; the target is NKI 0.6" in await _hover(client, uri, _pos(source, "nl.tiles", 4))
    assert "Needs NKI 0.7" not in await _hover(client, uri, _pos(source, "fori_loop", 2))


async def test_hover_on_allocation_shows_interpreter_facts(client: LanguageClient, tmp_path: Path) -> None:
    uri = open_doc(client, tmp_path / "k.py", KERNEL)
    text = await _hover(client, uri, _pos(KERNEL, "    t = nl.ndarray", 4))  # on the assigned name
    assert "shape: `(128, 512)`" in text and "dtype: `bfloat16`" in text and "buffer: `sbuf`" in text
    assert "bytes per partition: 1,024" in text
    psum = await _hover(client, uri, _pos(KERNEL, "(128, 512), dtype=nl.float32, buffer=nl.psum", 3))
    assert "buffer: `psum`" in psum and "bytes per partition: 2,048 (12.5% of PSUM" in psum
    hbm = await _hover(client, uri, _pos(KERNEL, "out = nl"))
    assert "NkiTensor" not in text  # a variable is not an API name: no class docs
    assert "buffer: `shared_hbm`" in hbm and "bytes per partition" not in hbm


SPEC_KERNEL = """import nki
import nki.language as nl


# nki-studio: simulate x=bfloat16[256,640]
@nki.jit
def kernel(x):
    n, d = x.shape
    buf = nl.ndarray((128, d), dtype=x.dtype, buffer=nl.sbuf)
    return buf
"""


async def test_hover_on_allocation_uses_the_simulate_spec(client: LanguageClient, tmp_path: Path) -> None:
    uri = open_doc(client, tmp_path / "k.py", SPEC_KERNEL)
    text = await _hover(client, uri, _pos(SPEC_KERNEL, "    buf = nl.ndarray", 4))
    assert "shape: `(128, 640)`" in text and "dtype: `bfloat16`" in text
    assert "bytes per partition: 1,280" in text
    unspecified = SPEC_KERNEL.replace("# nki-studio: simulate x=bfloat16[256,640]\n", "")
    uri = open_doc(client, tmp_path / "plain.py", unspecified)
    text = await _hover(client, uri, _pos(unspecified, "    buf = nl.ndarray", 4))
    assert "shape: `(128, ?)`" in text  # without a spec the kernel does not pin d down


async def test_signature_help_parameters(client: LanguageClient, tmp_path: Path) -> None:
    text = _edit(KERNEL, 20, "    nisa.tensor_tensor(t, t, ")
    uri = open_doc(client, tmp_path / "k.py", text)
    help_ = await client.text_document_signature_help_async(
        types.SignatureHelpParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=20, character=len("    nisa.tensor_tensor(t, t, ")),
        )
    )
    assert help_ is not None and help_.signatures
    sig = help_.signatures[0]
    labels = [p.label for p in sig.parameters or []]
    assert [str(label).split(":")[0] for label in labels] == ["dst", "data1", "data2", "op", "engine", "name"]
    assert help_.active_parameter == 2
    assert isinstance(sig.documentation, types.MarkupContent) and "element-wise" in sig.documentation.value


async def test_definition_of_user_helpers(client: LanguageClient, tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text(HELPERS)
    uri = open_doc(client, tmp_path / "k.py", KERNEL)
    for needle, nth, target_uri, line in (
        ("local_helper", 1, uri, 7),
        ("scale_tile", 1, (tmp_path / "helpers.py").as_uri(), 0),
    ):
        result = await client.text_document_definition_async(
            types.DefinitionParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=_pos(KERNEL, needle, 1, nth)
            )
        )
        assert isinstance(result, list) and result, needle
        loc = result[0]
        assert isinstance(loc, types.Location)
        assert (loc.uri, loc.range.start.line) == (target_uri, line), needle


async def test_files_without_nki_imports_get_nothing(client: LanguageClient, tmp_path: Path) -> None:
    uri = open_doc(client, tmp_path / "plain.py", PLAIN)
    doc = types.TextDocumentIdentifier(uri=uri)
    end = types.Position(line=4, character=3)
    assert (
        await client.text_document_completion_async(types.CompletionParams(text_document=doc, position=end))
        is None
    )
    assert await _hover(client, uri, _pos(PLAIN, "zeros", 1)) == ""
    assert (
        await client.text_document_signature_help_async(
            types.SignatureHelpParams(text_document=doc, position=_pos(PLAIN, "(3", 1))
        )
        is None
    )
    assert (
        await client.text_document_definition_async(
            types.DefinitionParams(text_document=doc, position=_pos(PLAIN, "np.zeros", 0))
        )
        is None
    )
