""" "Migrate kernel to NKI 0.7": a code action on files with something to migrate (legacy ``neuronxcc.nki`` code,
whose NKI208 warning points here, or NKI 0.5/0.6 code) running the ``nki-studio.migrate`` command: the service
rewrites the document's text and proves the rewrite by simulating both versions; the edit is applied only when
proven, and the proof's message is shown either way. Refused in an untrusted workspace (the proof runs the
kernel)."""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types
from nki_studio.lsp.server import NkiLanguageServer
from nki_studio.protocol.commands import MIGRATE, Refusal
from nki_studio.protocol.migration import MigrationResult
from nki_studio.service import migration, simulation
from pygls.uris import to_fs_path

TITLE = "Migrate kernel to NKI 0.7 (proven by simulating both versions)"


class MigrateFeature:
    """The action and its command."""

    def __init__(self, server: NkiLanguageServer) -> None:
        self.server = server

    def _text(self, uri: str) -> tuple[str, str] | None:
        doc = self.server.workspace.text_documents.get(uri)
        path = to_fs_path(uri)
        return (path, doc.source) if doc is not None and path is not None else None

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        """The action, when the document has something to migrate."""
        uri = params.text_document.uri
        got = self._text(uri)
        if got is None or not migration.needs_migration(got[1]):
            return None
        command = types.Command(title=TITLE, command=MIGRATE.id, arguments=[uri])
        return [types.CodeAction(title=TITLE, kind=types.CodeActionKind.RefactorRewrite, command=command)]

    async def command(self, *args: Any) -> MigrationResult | Refusal:
        """``nki-studio.migrate`` with ``[uri]``: migrate and prove; apply the edit when proven."""
        uri = str(args[0]) if args else ""
        if not self.server.trusted:
            refused = simulation.refusal()
            self._show(types.MessageType.Warning, refused["message"])
            return {"status": "refused", "message": refused["message"]}
        got = self._text(uri)
        if got is None:
            raise ValueError(f"not an open document: {uri!r}")
        path, text = got
        version = self.server.workspace.get_text_document(uri).version
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(
            self.server.request_executor,
            lambda: migration.migrate(path, self.server.settings, source=text),
        )
        proven = result["status"] == "proven"
        if proven:
            end = types.Position(line=len(text.splitlines()) + 1, character=0)
            edit = types.TextEdit(range=types.Range(types.Position(0, 0), end), new_text=result["migrated"])
            document = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
            change = types.TextDocumentEdit(text_document=document, edits=[edit])
            self.server.workspace_apply_edit(
                types.ApplyWorkspaceEditParams(
                    edit=types.WorkspaceEdit(document_changes=[change]), label=TITLE
                )
            )
        kind = (
            types.MessageType.Info if proven or result["status"] == "unchanged" else types.MessageType.Warning
        )
        manual = (
            f" ({len(result['manual'])} manual steps: see `nki-studio migrate`)" if result["manual"] else ""
        )
        self._show(kind, f"{result['message']}{manual}")
        return result

    def _show(self, kind: types.MessageType, message: str) -> None:
        self.server.window_show_message(types.ShowMessageParams(type=kind, message=message))


def register(server: NkiLanguageServer) -> None:
    """Wire the action and the command into the server."""
    feature = MigrateFeature(server)

    async def actions(params: types.CodeActionParams) -> list[types.CodeAction] | None:
        # parses the document a few times: off the event loop, in the pool of requests a user waits for
        return await asyncio.get_running_loop().run_in_executor(
            server.request_executor, feature.code_actions, params
        )

    server.add_code_action_provider(actions, kinds=[types.CodeActionKind.RefactorRewrite])

    @server.command(MIGRATE.id)
    async def migrate_command(ls: NkiLanguageServer, *args: Any) -> MigrationResult | Refusal:
        return await feature.command(*args)
