"""End-to-end: a rule that prints to stdout and raises does not take the server down; it becomes one
internal-error diagnostic per publish."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsp_harness import HERE, change_doc, open_doc, recording_client, start, wait_diagnostics
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

KERNEL = """import nki
import nki.language as nl


@nki.jit
def add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    return out
"""


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, str(HERE / "raising_rule_server.py")], client_factory=recording_client
    )
)
async def raising(lsp_client: LanguageClient) -> Any:
    await start(lsp_client)
    yield
    await lsp_client.shutdown_session()


def _internal(diags: list[types.Diagnostic]) -> list[types.Diagnostic]:
    return [d for d in diags if d.code == "NKI999"]


async def test_raising_rule_reported_once_and_server_survives(
    raising: LanguageClient, workdir: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    uri = open_doc(raising, workdir / "k.py", KERNEL)
    (d,) = _internal(await wait_diagnostics(raising, uri, 1))
    assert d.range.start.line == 0
    assert "NKI990" in d.message and "test-only-always-raises" in d.message
    # Still answering, and still reporting the failure exactly once per publish after an edit.
    change_doc(raising, uri, 2, KERNEL + "\n# edit\n")
    assert len(_internal(await wait_diagnostics(raising, uri, 2))) == 1
    result = await raising.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=d.range,
            context=types.CodeActionContext(diagnostics=[d]),
        )
    )
    assert result is None  # no noqa offered for an internal error
    tracebacks = [m.message for m in raising.log_messages if "deliberate failure" in m.message]
    assert len(tracebacks) == 1, "the rule failure is logged to the client, once (not on every edit)"
    # The rule's print went to the server's stderr (forwarded here by pytest-lsp), not into the protocol.
    err = ""
    for _ in range(100):
        err += capfd.readouterr().err
        if "stray output from a rule" in err:
            break
        await asyncio.sleep(0.02)
    assert "stray output from a rule" in err
