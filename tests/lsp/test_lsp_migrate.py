"""End-to-end: "Migrate kernel to NKI 0.7" on a legacy document: offered, refused while untrusted, and when
trusted the proven rewrite arrives as a workspace edit with the proof's message."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsp_harness import open_doc, start
from lsprotocol import types
from nki_studio.protocol.commands import MIGRATE
from pytest_lsp import LanguageClient

LEGACY = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


# nki-studio: simulate a=float32[128,64]
@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:128, 0:64]
    nl.store(out[i_p, i_f], value=nl.load(a[i_p, i_f]) * 2)
    return out
"""


async def _offered(client: LanguageClient, uri: str) -> list[str]:
    """Titles of the migrate actions offered at the top of the document. lsprotocol's client structures every
    code action carrying a ``command`` as a ``Command`` (its union hook looks for the key only), so the action
    arrives as a Command whose ``command`` is the action's command object printed: checked by its text."""
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(0, 0), types.Position(0, 0)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    offered = [a for a in result or [] if "NKI 0.7" in a.title]
    assert all(MIGRATE.id in str(a.command) and uri in str(a.command) for a in offered)
    return [a.title for a in offered]


def _recorder(client: LanguageClient) -> list[types.WorkspaceEdit]:
    edits: list[types.WorkspaceEdit] = []

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply(ls: LanguageClient, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        edits.append(params.edit)
        return types.ApplyWorkspaceEditResult(applied=True)

    return edits


async def _run(client: LanguageClient, uri: str) -> Any:
    assert await _offered(client, uri) == ["Migrate kernel to NKI 0.7 (proven by simulating both versions)"]
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=MIGRATE.id, arguments=[uri])
    )


async def test_untrusted_refuses(bare_client: LanguageClient, workdir: Path) -> None:
    edits = _recorder(bare_client)
    await start(bare_client, {"trustedWorkspace": False, "lintEnabled": False}, root=workdir)
    uri = open_doc(bare_client, workdir / "k.py", LEGACY)
    result = await _run(bare_client, uri)
    assert result["status"] == "refused" and not edits
    await asyncio.sleep(0.1)
    assert any("untrusted" in m.message for m in bare_client.messages)


async def test_trusted_applies_the_proven_rewrite(bare_client: LanguageClient, workdir: Path) -> None:
    edits = _recorder(bare_client)
    await start(bare_client, {"trustedWorkspace": True, "lintEnabled": False}, root=workdir)
    uri = open_doc(bare_client, workdir / "k.py", LEGACY)
    result = await _run(bare_client, uri)
    assert result["status"] == "proven", result["message"]
    (edit,) = edits
    (change,) = edit.document_changes or []
    assert isinstance(change, types.TextDocumentEdit) and change.text_document.uri == uri
    assert change.edits[0].new_text == result["migrated"] and "neuronxcc" not in result["migrated"]
    await asyncio.sleep(0.1)
    assert "migrated to NKI 0.7: equivalent on 3 inputs" in [m.message for m in bare_client.messages]


async def test_not_offered_on_a_07_document(client: LanguageClient, workdir: Path) -> None:
    text = (Path(__file__).resolve().parents[2] / "examples" / "tensor_add.py").read_text(encoding="utf-8")
    assert await _offered(client, open_doc(client, workdir / "t.py", text)) == []
