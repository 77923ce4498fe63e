"""A pytest-lsp client that records ``nki/heatmap`` notifications; shared by the profile and remote LSP tests."""

from __future__ import annotations

import sys
from typing import Any

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features


def heatmap_client() -> LanguageClient:
    """A client whose ``heatmaps`` list collects every ``nki/heatmap`` payload the server sends."""
    client = LanguageClient()
    register_lsp_features(client, DEFAULT_CLIENT_FEATURES)
    client.heatmaps = []  # type: ignore[attr-defined]

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(ls: LanguageClient, params: types.RegistrationParams) -> None:
        return None

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def lens_refresh(ls: LanguageClient, params: None) -> None:
        """Acknowledged, as VS Code does (a simulation's result changes the Simulate lens)."""

    @client.feature("nki/heatmap")
    def heatmap(ls: LanguageClient, params: Any) -> None:
        ls.heatmaps.append(params)  # type: ignore[attr-defined]

    return client


CONFIG = ClientServerConfig(
    server_command=[sys.executable, "-m", "nki_studio", "serve"], client_factory=heatmap_client
)


def field(obj: Any, key: str) -> Any:
    """A key of a JSON result, whether the client decoded it as a dict or as an attribute object."""
    return obj[key] if isinstance(obj, dict) else getattr(obj, key)
