"""Unit tests of the server's feature registry and merged providers (in process, no stdio)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from nki_studio.lsp.jobs import CancelToken, JobCancelled
from nki_studio.lsp.server import FEATURES, WARM_UP_QUIET_S, create_server
from nki_studio.service.settings import Settings
from pygls.workspace import Workspace


def test_broken_feature_is_skipped_and_remembered() -> None:
    server = create_server(("lint", "no_such_feature"))
    assert server.loaded_features == ["lint"]
    assert "no_such_feature" in server.failed_features


def test_every_listed_feature_loads() -> None:
    server = create_server()
    assert server.loaded_features == list(FEATURES) and not server.failed_features


def _hover_params() -> types.HoverParams:
    return types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri="file:///k.py"),
        position=types.Position(line=0, character=0),
    )


async def test_hover_providers_are_merged_and_failures_contained() -> None:
    server = create_server(())

    def first(params: Any) -> types.Hover:
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="**one**"))

    async def second(params: Any) -> types.Hover:
        return types.Hover(contents="two")

    def broken(params: Any) -> types.Hover:
        raise RuntimeError("provider bug")

    def nothing(params: Any) -> None:
        return None

    for provider in (first, broken, nothing, second):
        server.add_hover_provider(provider)
    handler = server.protocol.fm.features[types.TEXT_DOCUMENT_HOVER]
    hover = await handler(_hover_params())
    assert isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.value == "**one**\n\n---\n\ntwo"


async def test_code_action_kinds_accumulate() -> None:
    server = create_server(())
    server.add_code_action_provider(
        lambda p: [types.CodeAction(title="a")], kinds=[types.CodeActionKind.QuickFix]
    )
    server.add_code_action_provider(lambda p: None, kinds=[types.CodeActionKind.RefactorRewrite])
    options = server.protocol.fm.feature_options[types.TEXT_DOCUMENT_CODE_ACTION]
    assert list(options.code_action_kinds) == [
        types.CodeActionKind.QuickFix,
        types.CodeActionKind.RefactorRewrite,
    ]
    handler = server.protocol.fm.features[types.TEXT_DOCUMENT_CODE_ACTION]
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri="file:///k.py"),
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
        context=types.CodeActionContext(diagnostics=[]),
    )
    assert [a.title for a in await handler(params)] == ["a"]


def test_warm_ups_wait_for_the_first_diagnostics() -> None:
    server = create_server(())
    server.protocol._workspace = Workspace(None)  # what initialize sets up
    server.text_document_publish_diagnostics = lambda params: None  # type: ignore[method-assign]  # no client
    ran: list[str] = []
    server.after_startup(lambda: ran.append("jedi"))
    assert ran == []
    server.publish_diagnostics("file:///k.py", "nkilint", [])
    assert ran == ["jedi"]
    server.publish_diagnostics("file:///k.py", "nkilint", [])
    server.after_startup(lambda: ran.append("late"))  # start-up is over: runs at once
    assert ran == ["jedi", "late"]


async def test_after_the_first_diagnostics_warm_ups_wait_for_a_pause_in_the_edits() -> None:
    server = create_server(())
    server.protocol._workspace = Workspace(None)
    server.text_document_publish_diagnostics = lambda params: None  # type: ignore[method-assign]  # no client
    server._loop = asyncio.get_running_loop()  # what initialize sets
    ran: list[str] = []
    server.after_startup(lambda: ran.append("jedi"))
    server.publish_diagnostics("file:///k.py", "nkilint", [])
    assert ran == [] and server._quiet is not None
    first = server._quiet.when()
    did_change = server.protocol.fm.features[types.TEXT_DOCUMENT_DID_CHANGE]
    did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri="file:///k.py", version=2),
            content_changes=[],
        )
    )
    assert ran == [] and server._quiet.when() > first  # typing on: the wait starts again
    await asyncio.sleep(WARM_UP_QUIET_S + 0.2)
    assert ran == ["jedi"]


def test_a_superseded_lint_is_dropped_not_reported_as_an_engine_error(workdir: Path) -> None:
    from nki_studio.lsp.features.lint import LintFeature, _Snapshot

    feature = LintFeature(create_server(()))
    path = workdir / "k.py"
    snap = _Snapshot(
        uri=path.as_uri(),
        path=str(path),
        version=1,
        text="x = 1\n",
        settings=Settings(),
        encoding="utf-16",
        reuse=False,
    )
    token = CancelToken()
    token.cancel()  # an edit came in while the config was being read
    with pytest.raises(JobCancelled):
        feature.run(snap, token)


async def test_versions_the_fast_path_linted_are_not_linted_again(workdir: Path) -> None:
    """The full server replays the edits the fast path followed: their lints would publish the diagnostics of
    older versions after the newer ones the client has; only the versions from the last one published are
    linted."""
    from nki_studio.lsp.fastpath.handover import EarlyLint, Handover
    from nki_studio.lsp.features.lint import LintFeature
    from nki_studio.nkilint.incremental import IncrementalLinter

    path = workdir / "k.py"
    uri = path.as_uri()
    published = {"uri": uri, "diagnostics": [], "version": 3}
    handover = Handover(
        initialize_result={},
        lints={uri: EarlyLint(published=published, linter=IncrementalLinter(str(path)), version=3)},
    )
    server = create_server(())
    server.protocol._workspace = Workspace(None)
    feature = LintFeature(server, handover)
    for version, linted in ((1, False), (2, False), (3, True)):
        server.workspace.put_text_document(
            types.TextDocumentItem(uri=uri, language_id="python", version=version, text="x = 1\n")
        )
        feature.schedule(uri, 60.0)  # a long debounce: the job waits, so it can be seen
        assert feature.jobs.pending(uri) is linted, version
    feature.jobs.cancel_all()


def test_one_entry_per_problem() -> None:
    """The same code and message on the same range, from two features or two kernels, is published once."""
    from nki_studio.lsp.server import _one_per_problem

    def diag(line: int, message: str, source: str) -> types.Diagnostic:
        at = types.Range(
            start=types.Position(line=line, character=0), end=types.Position(line=line, character=5)
        )
        return types.Diagnostic(range=at, message=message, code="NKI610", source=source)

    first, twin, other_line = (
        diag(3, "boom", "nki-sim"),
        diag(3, "boom", "nki-sim"),
        diag(4, "boom", "nki-sim"),
    )
    assert _one_per_problem([first, twin, other_line, diag(3, "other", "nki-sim")]) == [
        first,
        other_line,
        diag(3, "other", "nki-sim"),
    ]
