"""End-to-end: the real server over stdio publishes lint diagnostics and keeps up with edits."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsp_harness import (
    UNUSED_NOQA,
    change_doc,
    first_lint,
    open_doc,
    published_count,
    start,
    wait_diagnostics,
)
from lsprotocol import types
from nki_studio.nkilint.api import lint_source
from pytest_lsp import LanguageClient


async def test_open_publishes_diagnostics(client: LanguageClient, workdir: Path) -> None:
    uri = open_doc(client, workdir / "k.py", UNUSED_NOQA)
    diags = await wait_diagnostics(client, uri, 1)
    (d,) = [d for d in diags if d.code == "NKI001"]
    assert d.source == "nkilint"
    assert d.severity == types.DiagnosticSeverity.Warning
    assert d.range.start.line == 7 and d.range.start.character == _utf16_start(UNUSED_NOQA, workdir, "NKI001")
    assert list(d.tags or ()) == [types.DiagnosticTag.Unnecessary]
    assert isinstance(d.data, dict) and d.data["fix"]["edits"]


async def test_edit_updates_diagnostics(client: LanguageClient, workdir: Path) -> None:
    uri = open_doc(client, workdir / "k.py", UNUSED_NOQA)
    assert any(d.code == "NKI001" for d in await wait_diagnostics(client, uri, 1))
    change_doc(client, uri, 2, UNUSED_NOQA.replace("  # noqa: NKI301", ""))
    assert await wait_diagnostics(client, uri, 2) == []
    change_doc(client, uri, 3, UNUSED_NOQA.replace("x = 1", "y = 2"))
    assert [d.code for d in await wait_diagnostics(client, uri, 3)] == ["NKI001"]


async def test_utf16_columns(client: LanguageClient, workdir: Path) -> None:
    # "😀" is one code point but two UTF-16 units: the start is one unit right of the code-point column.
    text = UNUSED_NOQA.replace("x = 1  # noqa", "x = '😀'  # noqa")
    uri = open_doc(client, workdir / "k.py", text)
    (d,) = [d for d in await wait_diagnostics(client, uri, 1) if d.code == "NKI001"]
    assert d.range.start.character == _utf16_start(text, workdir, "NKI001")
    (f,) = [f for f in lint_source(text, str(workdir / "k.py")) if f.code == "NKI001"]
    assert d.range.start.character == (f.span.column - 1) + 1


def _utf16_start(text: str, workdir: Path, code: str) -> int:
    """The UTF-16 start column of the engine's finding, computed independently of the server."""
    (f,) = [f for f in lint_source(text, str(workdir / "k.py")) if f.code == code]
    prefix = text.splitlines()[f.span.line - 1][: f.span.column - 1]
    return len(prefix.encode("utf-16-le")) // 2


async def test_close_clears_diagnostics(client: LanguageClient, workdir: Path) -> None:
    uri = open_doc(client, workdir / "k.py", UNUSED_NOQA)
    assert await first_lint(client, uri)
    seen = published_count(client, uri)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert await wait_diagnostics(client, uri, after=seen) == []


HALF_TYPED = [
    "import nki\n\n@nki.jit\ndef k(a):\n    x = nl.\n",
    "import nki\n\n@nki.jit\ndef k(a:\n",
    "import nki\n\n@nki.jit\ndef k(a):\n    for i in range(\n        return a\n",
    "import nki\n@nki.jit\ndef k(a):\n\treturn a\n        return a\n",
    "import nki\n@nki.jit\ndef k(a):\n    s = '''unterminated\n",
    "\x00",
    "",
]


async def test_half_typed_files(client: LanguageClient, workdir: Path) -> None:
    for i, text in enumerate(HALF_TYPED):
        uri = open_doc(client, workdir / f"k{i}.py", text)
        diags = await wait_diagnostics(client, uri, 1)
        assert len(diags) <= 1, text
        assert all(d.code == "NKI000" for d in diags), text
        # The server still answers requests ...
        result = await asyncio.wait_for(
            client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    range=types.Range(
                        start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
                    ),
                    context=types.CodeActionContext(diagnostics=diags),
                )
            ),
            timeout=5,
        )
        assert result is None  # no fix and no noqa for a syntax error
        # ... and recovers once the text is valid again.
        change_doc(client, uri, 2, "import nki\n")
        assert await wait_diagnostics(client, uri, 2) == [], text


async def test_superseded_versions_are_not_published(bare_client: LanguageClient, workdir: Path) -> None:
    """With a debounce, a burst of edits yields diagnostics for the last version only."""
    lsp_client = bare_client
    await start(lsp_client, {"lintDebounceMs": 300})
    uri = open_doc(lsp_client, workdir / "k.py", UNUSED_NOQA)
    await wait_diagnostics(lsp_client, uri, 1)
    for version in range(2, 8):
        change_doc(lsp_client, uri, version, UNUSED_NOQA + f"\n# edit {version}\n")
        await asyncio.sleep(0.02)
    await wait_diagnostics(lsp_client, uri, 7)
    await asyncio.sleep(0.4)  # anything still in flight would arrive now
    versions = [p.version for p in lsp_client.published[uri]]  # type: ignore[attr-defined]
    assert versions == [1, 7]


HELPER = """import nki.language as nl


def make_tile(n):
    return nl.ndarray((n, 4), dtype=nl.float32, buffer=nl.sbuf)
"""

MAIN = """import nki
import nki.language as nl

from helper import make_tile


@nki.jit
def kernel(x):
    t = make_tile(256)
    out = nl.ndarray((128, 4), dtype=x.dtype, buffer=nl.shared_hbm)
    return out
"""


async def test_saving_a_helper_module_relints_its_importers(client: LanguageClient, workdir: Path) -> None:
    helper = workdir / "helper.py"
    helper.write_text(HELPER)
    uri = open_doc(client, workdir / "main.py", MAIN)
    (d,) = [d for d in await first_lint(client, uri) if d.code == "NKI301"]
    (rel,) = d.related_information or []
    assert rel.location.uri == helper.as_uri() and rel.location.range.start.line == 4
    assert rel.location.range.start.character == HELPER.splitlines()[4].index("nl.ndarray")
    # The helper is fixed and saved: the kernel that inlines it is linted again.
    fixed = HELPER.replace("((n, 4)", "((n // 2, 4)")
    helper.write_text(fixed)
    helper_uri = open_doc(client, helper, fixed)
    await wait_diagnostics(client, helper_uri, 1)
    seen = published_count(client, uri)
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=helper_uri))
    )
    assert [d.code for d in await wait_diagnostics(client, uri, after=seen)] == []


async def test_save_after_lint_reuses_the_result(client: LanguageClient, workdir: Path) -> None:
    uri = open_doc(client, workdir / "k.py", UNUSED_NOQA)
    first = await first_lint(client, uri)
    seen = published_count(client, uri)
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert await wait_diagnostics(client, uri, after=seen) == first
    logs = [m.message for m in client.log_messages if uri in m.message]
    assert any("v1: unchanged since the last run, reused" in m for m in logs), logs
    assert sum("v1:" in m and "engine" in m for m in logs) == 1  # the engine ran once for v1
