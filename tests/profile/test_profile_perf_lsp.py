"""Bounds and investigations through the real language server: loadProfile puts the bounds and the findings in
the heatmap payload's kernel summary, publishes the findings as ``nki-perf`` diagnostics (Information with
``perfSeverity: information``) on the right line, adds them to the hover, and takes them away on clearProfile."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import perf_kernels as pk
import pytest
import pytest_lsp
from fixturewriters import write_parquet
from lsp_heatmap_client import CONFIG, field
from lsprotocol import types
from nki_studio.estimate.profile import estimate_profile
from nki_studio.model.targets import Target
from pytest_lsp import LanguageClient, client_capabilities
from test_profile_bounds import _timeline


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient) -> Any:
    yield
    await lsp_client.shutdown_session()


async def _until(check: Any, timeout: float = 15.0) -> Any:
    for _ in range(int(timeout / 0.02)):
        got = check()
        if got:
            return got
        await asyncio.sleep(0.02)
    raise AssertionError("timed out")


@pytest.mark.asyncio
async def test_findings_become_diagnostics_hovers_and_kernel_summary(
    client: LanguageClient, tmp_path: Path
) -> None:
    kernels = tmp_path / "ws"
    kernels.mkdir()
    path, trace = pk.trace("transpose", str(kernels))
    prof = write_parquet(_timeline(estimate_profile(trace, Target())), tmp_path / "prof")
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=kernels.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=kernels.as_uri(), name="ws")],
            initialization_options={"nki-studio": {"lintEnabled": False, "perfSeverity": "information"}},
        )
    )
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="nki-studio.loadProfile", arguments=[prof.as_uri()])
    )
    (payload,) = await _until(lambda: client.heatmaps)  # type: ignore[attr-defined]
    line = pk.marker_line(path.read_text(), "transpose") - 1
    kernel = field(payload, "kernel")
    bounds = field(kernel, "bounds")
    assert (
        field(field(bounds, "engines"), field(bounds, "bottleneck"))
        == field(field(field(kernel, "bounds"), "families")[2], "bounds")[0].ns
    )
    assert [field(i, "status") for i in field(kernel, "investigations")] == [
        "nothing found",
        "nothing found",
        "nothing found",
        "found",
    ]
    (finding,) = field(payload, "findings")
    assert field(finding, "line") == line and field(finding, "code") == "NKI706"

    uri = path.resolve().as_uri()
    diags = await _until(lambda: [d for d in client.diagnostics.get(uri, []) if d.source == "nki-perf"])
    (d,) = diags
    assert d.code == "NKI706" and d.range.start.line == line
    assert d.severity == types.DiagnosticSeverity.Information

    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=path.read_text()
            )
        )
    )
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line, character=4),
        )
    )
    assert hover is not None and "Investigations" in hover.contents.value and "NKI706" in hover.contents.value

    def perf() -> list[types.Diagnostic]:
        return [d for d in client.diagnostics.get(uri, []) if d.source == "nki-perf"]

    # the setting switches them off and on again
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"nki-studio": {"lintEnabled": False, "perfInvestigations": False}}
        )
    )
    await _until(lambda: not perf())
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"nki-studio": {"lintEnabled": False, "perfInvestigations": True}}
        )
    )
    await _until(perf)

    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="nki-studio.clearProfile", arguments=[])
    )
    await _until(lambda: not [d for d in client.diagnostics.get(uri, []) if d.source == "nki-perf"])


def test_noqa_and_config_apply_to_perf_findings(tmp_path: Path) -> None:
    from nki_studio.lsp.features.perf_diagnostics import perf_diagnostics

    text = (
        "x = 1\n    nisa.nc_transpose(dst=t, data=d)\n    nisa.nc_transpose(dst=t, data=d)  # noqa: NKI706\n"
    )
    path = tmp_path / "k.py"
    path.write_text(text)
    found = [{"line": n, "code": "NKI706", "message": "transposes"} for n in (1, 2, 7)]  # 7: beyond the text
    (d,) = perf_diagnostics(path.as_uri(), str(path), text, found, "utf-16", None, severity="hint")
    assert (d.code, d.source, d.range.start.line, d.range.start.character) == ("NKI706", "nki-perf", 1, 4)
    assert d.range.end.character == len(text.splitlines()[1])
    assert d.severity == types.DiagnosticSeverity.Hint
    (raised,) = perf_diagnostics(path.as_uri(), str(path), text, found, "utf-16", None, severity="warning")
    assert raised.severity == types.DiagnosticSeverity.Warning
    # the project's severity for the code wins over the setting
    (tmp_path / "pyproject.toml").write_text('[tool.nki-studio]\nseverity = { NKI706 = "error" }\n')
    (configured,) = perf_diagnostics(path.as_uri(), str(path), text, found, "utf-16", None, severity="hint")
    assert configured.severity == types.DiagnosticSeverity.Error
    (tmp_path / "pyproject.toml").write_text('[tool.nki-studio]\nignore = ["NKI706"]\n')
    assert perf_diagnostics(path.as_uri(), str(path), text, found, "utf-16", None, severity="hint") == []
