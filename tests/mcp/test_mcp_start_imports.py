"""What the MCP server imports at start (``nki_studio.mcp.sdk`` and the server's lazy tool imports), each
checked in a fresh interpreter so nothing the test process already imported hides an eager import."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


def _run(code: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120, check=True
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_the_server_module_skips_the_sdk_client_and_every_tool_stack() -> None:
    seen = _run(
        """
        import json, sys
        import nki_studio.mcp.server
        from nki_studio.mcp import sdk
        heavy = ["mcp.client", "mcp.server.mcpserver", "jsonschema", "numpy", "jedi",
                 "nki_studio.nkilint.api", "nki_studio.verify.runner", "nki_studio.mcp.docs"]
        print(json.dumps({"lazy": [sdk.is_lazy("mcp"), sdk.is_lazy("mcp.server")],
                          "imported": [m for m in heavy if m in sys.modules]}))
        """
    )
    assert seen == {"lazy": [True, True], "imported": []}


def test_the_lazy_sdk_packages_complete_on_first_use_of_their_own_names() -> None:
    seen = _run(
        """
        import json
        import nki_studio.mcp.server
        from nki_studio.mcp import sdk
        from mcp import ClientSession, types
        from mcp.server import MCPServer
        import mcp
        print(json.dumps({"lazy": [sdk.is_lazy("mcp"), sdk.is_lazy("mcp.server")],
                          "names": [ClientSession.__name__, MCPServer.__name__, mcp.Tool is types.Tool],
                          "missing": hasattr(mcp, "no_such_name")}))
        """
    )
    assert seen == {"lazy": [False, False], "names": ["ClientSession", "MCPServer", True], "missing": False}


def test_an_sdk_imported_first_is_left_as_it_is() -> None:
    seen = _run(
        """
        import json
        import mcp
        import nki_studio.mcp.server
        from nki_studio.mcp import sdk
        print(json.dumps({"lazy": sdk.is_lazy("mcp"), "client": hasattr(mcp, "ClientSession")}))
        """
    )
    assert seen == {"lazy": False, "client": True}
