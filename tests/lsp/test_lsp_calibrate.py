"""``nki-studio.calibrate`` through the real ``nki-studio serve`` (pytest-lsp): refused in an untrusted workspace;
trusted, it fits on a profile, writes the project's calibration file and the next simulation's estimate says
it is calibrated."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "profile"))
import fixturegen
from fixturewriters import write_parquet
from lsp_harness import execute, start_workspace

pytestmark = pytest.mark.slow  # a server and simulation workers
DATA = Path(__file__).resolve().parents[1] / "verify" / "data"
CONFIG = ClientServerConfig(server_command=[sys.executable, "-m", "nki_studio", "serve"])


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient) -> Any:
    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(ls: LanguageClient, params: types.RegistrationParams) -> None:
        return None

    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def lens_refresh(ls: LanguageClient, params: None) -> None:
        """Acknowledged, as VS Code does (a simulation's result changes the Simulate lens)."""

    yield
    await lsp_client.shutdown_session()


def _profile(root: Path) -> Path:
    kernel = root / "add.py"
    kernel.write_text((DATA / "add_kernel.py").read_text(encoding="utf-8"), encoding="utf-8")
    timeline = fixturegen.kernel_file_timeline(kernel, remote_dir=str(root), n_instructions=60)
    return write_parquet(timeline, root / "profile_parquet")


async def test_untrusted_calibrate_is_refused(client: LanguageClient, tmp_path: Path) -> None:
    await start_workspace(client, tmp_path, trusted=False)
    answer = await execute(client, "nki-studio.calibrate", _profile(tmp_path).as_uri())
    assert answer["status"] == "refused" and "untrusted" in answer["message"]
    assert not (tmp_path / ".nki-studio").exists()


async def test_calibrate_writes_the_file_and_the_next_estimate_uses_it(
    client: LanguageClient, tmp_path: Path
) -> None:
    await start_workspace(client, tmp_path, trusted=True)
    profile = _profile(tmp_path)
    answer = await execute(client, "nki-studio.calibrate", {"profiles": [profile.as_uri()]})
    assert answer["file"] == str(tmp_path / ".nki-studio" / "calibration.json"), answer
    assert answer["used"][0]["kernel"].endswith("add.py::add") and answer["target"] == "trn2"
    assert any("calibrated on 1 of your profiles" in m.message for m in client.messages)
    uri = (tmp_path / "add.py").as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri,
                language_id="python",
                version=1,
                text=(tmp_path / "add.py").read_text(encoding="utf-8"),
            )
        )
    )
    result = await execute(client, "nki-studio.simulate", uri, "add")
    assert result["estimate"]["calibration"]["status"] == "applied", result.get("message")
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    titles = [lens.command.title for lens in lenses or [] if lens.command]
    assert any("calibrated on 1 of your profiles, held-out error unknown" in t for t in titles), titles
