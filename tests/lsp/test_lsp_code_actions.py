"""End-to-end: quick fixes from Diagnostic.data and ``# noqa`` insertion, applied and re-linted."""

from __future__ import annotations

import ast
from pathlib import Path

from lsp_harness import (
    TRY_KERNEL,
    UNUSED_NOQA,
    apply_edits,
    change_doc,
    edits_of,
    open_doc,
    start,
    wait_diagnostics,
)
from lsprotocol import types
from pytest_lsp import LanguageClient


async def _actions(client: LanguageClient, uri: str, diag: types.Diagnostic) -> list[types.CodeAction]:
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diag.range,
            context=types.CodeActionContext(
                diagnostics=[diag], trigger_kind=types.CodeActionTriggerKind.Invoked
            ),
        )
    )
    return [a for a in (result or []) if isinstance(a, types.CodeAction)]


async def test_fix_action_applies_and_clears(client: LanguageClient, workdir: Path) -> None:
    uri = open_doc(client, workdir / "k.py", UNUSED_NOQA)
    (diag,) = [d for d in await wait_diagnostics(client, uri, 1) if d.code == "NKI001"]
    actions = await _actions(client, uri, diag)
    fixes = [a for a in actions if a.is_preferred]
    assert len(fixes) == 1 and fixes[0].kind == types.CodeActionKind.QuickFix and "NKI001" in fixes[0].title
    fixed = apply_edits(UNUSED_NOQA, edits_of(fixes[0], uri))
    assert "# noqa" not in fixed and "x = 1\n" in fixed
    ast.parse(fixed)
    change_doc(client, uri, 2, fixed)
    assert [d.code for d in await wait_diagnostics(client, uri, 2)] == []


async def test_noqa_action_suppresses(bare_client: LanguageClient, workdir: Path) -> None:
    await start(bare_client, {"nkiVersion": "0.6"})
    uri = open_doc(bare_client, workdir / "k.py", TRY_KERNEL)
    (diag,) = [d for d in await wait_diagnostics(bare_client, uri, 1) if d.code == "NKI101"]
    noqa = [a for a in await _actions(bare_client, uri, diag) if "noqa" in a.title]
    assert len(noqa) == 1 and not noqa[0].is_preferred
    fixed = apply_edits(TRY_KERNEL, edits_of(noqa[0], uri))
    assert fixed.splitlines()[diag.range.start.line] == "    try:  # noqa: NKI101"
    change_doc(bare_client, uri, 2, fixed)
    # Suppressed, and the new comment is used (no NKI001).
    assert [d.code for d in await wait_diagnostics(bare_client, uri, 2)] == []


async def test_noqa_action_extends_existing_comment(bare_client: LanguageClient, workdir: Path) -> None:
    await start(bare_client, {"nkiVersion": "0.6"})
    text = TRY_KERNEL.replace("    try:\n", "    try:  # noqa: NKI120\n")
    uri = open_doc(bare_client, workdir / "k.py", text)
    (diag,) = [d for d in await wait_diagnostics(bare_client, uri, 1) if d.code == "NKI101"]
    (noqa,) = [a for a in await _actions(bare_client, uri, diag) if "noqa" in a.title]
    fixed = apply_edits(text, edits_of(noqa, uri))
    assert fixed.splitlines()[diag.range.start.line] == "    try:  # noqa: NKI120, NKI101"


async def test_actions_respect_only_filter(client: LanguageClient, workdir: Path) -> None:
    uri = open_doc(client, workdir / "k.py", UNUSED_NOQA)
    (diag,) = [d for d in await wait_diagnostics(client, uri, 1) if d.code == "NKI001"]
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diag.range,
            context=types.CodeActionContext(
                diagnostics=[diag], only=[types.CodeActionKind.SourceOrganizeImports]
            ),
        )
    )
    assert not result


async def test_deprecation_fix_end_to_end(client: LanguageClient, workdir: Path) -> None:
    """A real rule's fix (NKI201 nl.affine_range -> range), tagged Deprecated, applied through the action."""
    text = UNUSED_NOQA.replace(
        "    x = 1  # noqa: NKI301\n", "    for i in nl.affine_range(4):\n        pass\n"
    )
    uri = open_doc(client, workdir / "k.py", text)
    (diag,) = [d for d in await wait_diagnostics(client, uri, 1) if d.code == "NKI201"]
    assert list(diag.tags or ()) == [types.DiagnosticTag.Deprecated]
    (fix,) = [a for a in await _actions(client, uri, diag) if a.is_preferred]
    fixed = apply_edits(text, edits_of(fix, uri))
    assert "    for i in range(4):\n" in fixed
    change_doc(client, uri, 2, fixed)
    assert await wait_diagnostics(client, uri, 2) == []


async def test_no_fix_offered_for_stale_diagnostics(bare_client: LanguageClient, workdir: Path) -> None:
    """After an edit that is not linted yet (long debounce), the old fix could hit the wrong text."""
    await start(bare_client, {"lintDebounceMs": 60_000})
    uri = open_doc(bare_client, workdir / "k.py", UNUSED_NOQA)
    (diag,) = [d for d in await wait_diagnostics(bare_client, uri, 1) if d.code == "NKI001"]
    assert any(a.is_preferred for a in await _actions(bare_client, uri, diag))
    change_doc(bare_client, uri, 2, "# a new first line\n" + UNUSED_NOQA)
    assert not any(a.is_preferred for a in await _actions(bare_client, uri, diag))
