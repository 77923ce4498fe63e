"""End-to-end: settings (initializationOptions, didChangeConfiguration) and pyproject.toml changes re-lint."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsp_harness import (
    TRY_KERNEL,
    UNUSED_NOQA,
    first_lint,
    open_doc,
    published_count,
    start,
    wait_diagnostics,
)
from lsprotocol import types
from pytest_lsp import LanguageClient


def _codes(diags: list[types.Diagnostic]) -> list[str]:
    return [str(d.code) for d in diags]


def _configure(client: LanguageClient, settings: dict[str, object]) -> None:
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"nki-studio": settings})
    )


async def test_settings_change_relints(bare_client: LanguageClient, workdir: Path) -> None:
    await start(bare_client, {"nkiVersion": "0.6"})
    uri = open_doc(bare_client, workdir / "k.py", TRY_KERNEL)
    assert _codes(await first_lint(bare_client, uri)) == ["NKI101"]
    seen = published_count(bare_client, uri)
    _configure(bare_client, {"nkiVersion": "0.7"})
    assert _codes(await wait_diagnostics(bare_client, uri, after=seen)) == []
    seen = published_count(bare_client, uri)
    _configure(bare_client, {"nkiVersion": "0.6"})
    assert _codes(await wait_diagnostics(bare_client, uri, after=seen)) == ["NKI101"]
    seen = published_count(bare_client, uri)
    _configure(bare_client, {"nkiVersion": "0.6", "lintEnabled": False})
    assert await wait_diagnostics(bare_client, uri, after=seen) == []


async def test_pulled_configuration(bare_client: LanguageClient, workdir: Path) -> None:
    """A client that answers workspace/configuration (null didChangeConfiguration payload, as VS Code sends)."""
    bare_client.set_configuration({"nkiVersion": "0.6"}, section="nki-studio")
    await start(bare_client, {})
    uri = open_doc(bare_client, workdir / "k.py", TRY_KERNEL)
    # The pull happens right after `initialized`; the first publish may predate it.
    deadline = asyncio.get_running_loop().time() + 10
    while _codes(bare_client.diagnostics.get(uri, [])) != ["NKI101"]:
        assert asyncio.get_running_loop().time() < deadline, bare_client.diagnostics.get(uri)
        await asyncio.sleep(0.02)
    await first_lint(bare_client, uri)
    bare_client.set_configuration({"nkiVersion": "0.7"}, section="nki-studio")
    seen = published_count(bare_client, uri)
    bare_client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    assert _codes(await wait_diagnostics(bare_client, uri, after=seen)) == []


async def test_bad_setting_is_reported_and_ignored(bare_client: LanguageClient, workdir: Path) -> None:
    await start(bare_client, {"nkiVersion": "0.6", "target": "trn9", "lintDebounceMs": -3})
    uri = open_doc(bare_client, workdir / "k.py", TRY_KERNEL)
    assert _codes(await wait_diagnostics(bare_client, uri, 1)) == ["NKI101"]
    # The first diagnostics may come before the full server has loaded (lsp.fastpath); its warnings follow.
    deadline = asyncio.get_running_loop().time() + 30
    while True:
        warnings = [m.message for m in bare_client.log_messages if m.type == types.MessageType.Warning]
        # The two problems reach the client as separate log messages: wait for both.
        reported = [
            k for k in ("nki-studio.lintDebounceMs", "nki-studio.target") if any(k in m for m in warnings)
        ]
        if len(reported) == 2 or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.05)
    assert any("nki-studio.target" in m and "trn9" in m for m in warnings), warnings
    assert any("nki-studio.lintDebounceMs" in m for m in warnings), warnings


async def test_pyproject_change_relints(bare_client: LanguageClient, workdir: Path) -> None:
    await start(bare_client, {"nkiVersion": "0.6"})
    uri = open_doc(bare_client, workdir / "k.py", TRY_KERNEL)
    assert _codes(await first_lint(bare_client, uri)) == ["NKI101"]
    for _ in range(100):  # the registration request follows `initialized` asynchronously
        watchers = [
            r for r in bare_client.registrations if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
        ]  # type: ignore[attr-defined]
        if watchers:
            break
        await asyncio.sleep(0.02)
    assert watchers and "pyproject.toml" in str(watchers[0].register_options)
    pyproject = workdir / "pyproject.toml"
    pyproject.write_text('[tool.nki-studio]\nignore = ["NKI101"]\n')
    seen = published_count(bare_client, uri)
    bare_client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Changed)]
        )
    )
    assert _codes(await wait_diagnostics(bare_client, uri, after=seen)) == []
    # A broken config is reported (NKI002) and defaults apply, so linting goes on.
    pyproject.write_text('[tool.nki-studio]\nnki-version = "banana"\n')
    seen = published_count(bare_client, uri)
    bare_client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert _codes(await wait_diagnostics(bare_client, uri, after=seen)) == ["NKI002", "NKI101"]


async def test_rule_docs_link_defaults_to_local_page(client: LanguageClient, workdir: Path) -> None:
    uri = open_doc(client, workdir / "k.py", UNUSED_NOQA)
    (d,) = await wait_diagnostics(client, uri, 1)
    page = Path(__file__).resolve().parents[2] / "docs" / "rules" / "NKI001.md"
    assert d.code_description is not None and d.code_description.href == page.as_uri()


async def test_rule_docs_link(bare_client: LanguageClient, workdir: Path) -> None:
    await start(bare_client, {"nkiVersion": "0.6", "ruleDocsBaseUrl": "https://example.org/nki/rules/"})
    uri = open_doc(bare_client, workdir / "k.py", TRY_KERNEL)
    (d,) = await wait_diagnostics(bare_client, uri, 1)
    assert d.code_description is not None
    assert d.code_description.href == "https://example.org/nki/rules/NKI101.md"
