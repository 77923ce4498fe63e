"""pytest-lsp harness helpers: the real ``nki-studio serve`` process over stdio, driven by a test client.

The client records every publishDiagnostics with its version so tests can wait for the result of one
particular edit (``wait_diagnostics``). Lint debounce is 0 unless a test sets it.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

SERVER = [sys.executable, "-m", "nki_studio", "serve"]
HERE = Path(__file__).parent

# An NKI version of 0.7 or 0.6 is forced in the tests that depend on it; default is whatever is installed.
DEFAULT_OPTIONS: dict[str, Any] = {"lintDebounceMs": 0, "logLevel": "debug"}


def recording_client() -> LanguageClient:
    """A pytest-lsp client that keeps every publishDiagnostics (with its version) and registration."""
    client = LanguageClient()
    features = dict(DEFAULT_CLIENT_FEATURES)
    default_publish = features.pop(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    register_lsp_features(client, features)
    client.published = {}  # type: ignore[attr-defined]
    client.registrations = []  # type: ignore[attr-defined]

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(ls: LanguageClient, params: types.RegistrationParams) -> None:
        ls.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def lens_refresh(ls: LanguageClient, params: None) -> None:
        """Acknowledged, as VS Code does (the capabilities these tests declare support the refresh)."""

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def publish(ls: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        default_publish(ls, params)
        ls.published.setdefault(params.uri, []).append(params)  # type: ignore[attr-defined]

    return client


async def wait_diagnostics(
    client: LanguageClient, uri: str, version: int | None = None, *, after: int = 0, timeout: float = 60.0
) -> list[types.Diagnostic]:
    """The diagnostics of the first publish for ``uri`` (with ``version`` if given) after the first ``after``."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        for params in client.published.get(uri, [])[after:]:  # type: ignore[attr-defined]
            if version is None or params.version == version:
                return list(params.diagnostics)
        if asyncio.get_running_loop().time() > deadline:
            got = [(p.version, len(p.diagnostics)) for p in client.published.get(uri, [])]  # type: ignore[attr-defined]
            raise AssertionError(f"no diagnostics for {uri} v{version} within {timeout}s; got {got}")
        await asyncio.sleep(0.01)


async def wait_log(client: LanguageClient, text: str, timeout: float = 60.0) -> str:
    """The first window/logMessage containing ``text`` (the full server's; the fast path only logs to stderr)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        for m in client.log_messages:
            if text in m.message:
                return m.message
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"no log message with {text!r} within {timeout}s")
        await asyncio.sleep(0.01)


async def first_lint(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    """The first diagnostics of v1, once the full server has linted v1 itself. They may come before it loaded
    (lsp.fastpath), and a test that counts later publishes must not see the full server's own first one."""
    diagnostics = await wait_diagnostics(client, uri, 1)
    await wait_log(client, f"lint {uri} v1:")
    return diagnostics


def published_count(client: LanguageClient, uri: str) -> int:
    """How many publishDiagnostics the client has seen for ``uri``."""
    return len(client.published.get(uri, []))  # type: ignore[attr-defined]


def open_doc(client: LanguageClient, path: Path, text: str, version: int = 1) -> str:
    """didOpen ``text`` as the content of ``path``; returns the uri."""
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
        )
    )
    return uri


def change_doc(client: LanguageClient, uri: str, version: int, text: str) -> None:
    """Replace the whole document (full-text change)."""
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def apply_edits(text: str, edits: Sequence[types.TextEdit]) -> str:
    """Apply LSP edits (UTF-16 positions) to ``text``, last edit first."""
    lines = text.splitlines(keepends=True)

    def offset(pos: types.Position) -> int:
        before = sum(len(line) for line in lines[: pos.line])
        line = lines[pos.line] if pos.line < len(lines) else ""
        units = 0
        for i, ch in enumerate(line):
            if units >= pos.character:
                return before + i
            units += 2 if ord(ch) > 0xFFFF else 1
        return before + len(line.rstrip("\r\n"))

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        start, end = offset(edit.range.start), offset(edit.range.end)
        text = text[:start] + edit.new_text + text[end:]
    return text


def edits_of(action: types.CodeAction, uri: str) -> list[types.TextEdit]:
    """The text edits a code action makes to ``uri`` (documentChanges or changes form)."""
    assert action.edit is not None
    if action.edit.document_changes:
        out: list[types.TextEdit] = []
        for change in action.edit.document_changes:
            assert isinstance(change, types.TextDocumentEdit) and change.text_document.uri == uri
            out.extend(e for e in change.edits if isinstance(e, types.TextEdit))
        return out
    assert action.edit.changes is not None
    return list(action.edit.changes[uri])


async def start(
    client: LanguageClient, options: dict[str, Any] | None = None, root: Path | None = None
) -> None:
    """initialize + initialized with VS Code's capabilities and the given initializationOptions."""
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            initialization_options={"nki-studio": {**DEFAULT_OPTIONS, **(options or {})}},
            root_uri=root.as_uri() if root else None,
        )
    )


async def start_workspace(client: LanguageClient, root: Path, trusted: bool) -> None:
    """initialize as VS Code does on the workspace folder ``root``, which a ``pyproject.toml`` sets to trn2, trusted
    or not, with no simulation on save."""
    (root / "pyproject.toml").write_text('[tool.nki-studio]\ntarget = "trn2"\n')
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
            initialization_options={"nki-studio": {"trustedWorkspace": trusted, "simulateOnSave": False}},
        )
    )


async def execute(client: LanguageClient, command: str, *arguments: Any) -> Any:
    """The server's answer to ``workspace/executeCommand`` ``command`` with ``arguments``."""
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=list(arguments))
    )


# Test documents. NKI001: unused suppression (engine rule with a removal fix); NKI101: try/except in a kernel
# (NKI <= 0.6 only).
UNUSED_NOQA = """import nki
import nki.language as nl


@nki.jit
def add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = 1  # noqa: NKI301
    return out
"""

TRY_KERNEL = """import nki
import nki.language as nl


@nki.jit
def kernel(x):
    try:
        n = x.shape[0]
    except IndexError:
        n = 1
    out = nl.ndarray((n, 4), dtype=x.dtype, buffer=nl.shared_hbm)
    return out
"""


CONFIG = ClientServerConfig(server_command=SERVER, client_factory=recording_client)
