"""Hover with no NKI version named: the version the file's code is written for (legacy ``neuronxcc.nki``
imports, as the linter infers it), said in the hover, and the facts and notes computed for it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsp_harness import CONFIG, open_doc, start
from lsprotocol import types
from pytest_lsp import LanguageClient

LEGACY = """import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nl.tiles
    return out
"""
CURRENT = LEGACY.replace("neuronxcc.nki", "nki")

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(config=CONFIG, scope="module", loop_scope="module")
async def client(lsp_client: LanguageClient) -> Any:
    await start(lsp_client, {"target": "trn2"})  # no nkiVersion setting: the code decides
    yield
    await lsp_client.shutdown_session()


async def _hover(client: LanguageClient, uri: str, text: str, needle: str) -> str:
    index = text.index(needle)
    line = text.count("\n", 0, index)
    position = types.Position(line=line, character=index - (text.rfind("\n", 0, index) + 1))
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    return hover.contents.value


async def test_hover_in_legacy_code_uses_the_inferred_version(client: LanguageClient, tmp_path: Path) -> None:
    # the allocation facts are computed for the legacy target
    text = await _hover(client, open_doc(client, tmp_path / "old.py", LEGACY), LEGACY, "buffer=nl.sbuf")
    assert "computed for trn2, NKI legacy" in text and "bytes per partition: 2,048" in text, text
    assert "legacy neuronxcc.nki assumed from `import neuronxcc.nki as nki` on line 1" in text
    current = await _hover(client, open_doc(client, tmp_path / "new.py", CURRENT), CURRENT, "tiles")
    assert "Needs NKI 0.7" not in current and "assumed" not in current
    assert "NKI 0.7" in await _hover(
        client, open_doc(client, tmp_path / "n2.py", CURRENT), CURRENT, "buffer=nl.sbuf"
    )
