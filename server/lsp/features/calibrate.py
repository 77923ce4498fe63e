"""The ``nki-studio.calibrate`` command: ``service.calibration.calibrate`` on profiles named by URI (the kernel
panel's "Calibrate from this profile" button sends the loaded profile's). It simulates kernels, so an
untrusted workspace gets the one refusal; the fit runs on a job thread and the answer is the service's result.
Later simulations' estimates use the file (``service.calibration_file``); nothing is re-run here.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types
from nki_studio.lsp.server import NkiLanguageServer
from nki_studio.protocol.calibration import CalibrateResult
from nki_studio.protocol.commands import CALIBRATE, Refusal
from nki_studio.service import calibration, simulation
from nki_studio.service.calibration import CalibrateOptions
from nki_studio.service.profiles import LoadOptions
from pygls.exceptions import JsonRpcException
from pygls.uris import to_fs_path


class CalibrateError(JsonRpcException):
    """Bad arguments: an error response with the reason."""

    CODE = -32602  # InvalidParams


def _path(uri: Any) -> str:
    if not isinstance(uri, str) or not uri:
        raise CalibrateError(f"{CALIBRATE.id} needs profile URIs")
    return (to_fs_path(uri) or uri) if "://" in uri else uri


async def calibrate(server: NkiLanguageServer, *args: Any) -> CalibrateResult | Refusal:
    """Run ``calibrate`` for ``[uri]`` or ``[{"profiles": [uri...], "kernel"?, "target"?}]``."""
    first = args[0] if args else None
    spec = first if isinstance(first, dict) else {"profiles": [first]}
    if not server.trusted:
        refused = simulation.refusal()
        server.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=refused["message"])
        )
        return {"status": "refused", "message": refused["message"]}
    profiles = spec.get("profiles")
    if not isinstance(profiles, list) or not profiles:
        raise CalibrateError(f"{CALIBRATE.id} needs profile URIs")
    kernel = spec.get("kernel")
    if isinstance(kernel, str) and kernel:
        file, sep, name = kernel.rpartition("::") if "::" in kernel else (kernel, "", "")
        kernel = f"{_path(file)}{sep}{name}"
    target = spec.get("target")
    settings = server.settings
    ws = server.workspace
    roots = [Path(p) for f in ws.folders.values() if (p := to_fs_path(f.uri))]
    options = CalibrateOptions(
        kernel=kernel if isinstance(kernel, str) and kernel else None,
        target=target if isinstance(target, str) else None,
        load=LoadOptions(roots=roots, mappings={m.remote: m.local for m in settings.path_mappings}),
    )
    paths = [_path(p) for p in profiles]
    loop = asyncio.get_running_loop()
    result = await loop.run_in_executor(
        server.executor, lambda: calibration.calibrate(paths, settings, options)
    )
    level = types.MessageType.Info if result["file"] else types.MessageType.Warning
    skipped = "; ".join(f"{s['profile']}: {s['reason']}" for s in result["skipped"])
    server.window_show_message(
        types.ShowMessageParams(
            type=level, message=result["message"] + (f" (skipped {skipped})" if skipped else "")
        )
    )
    return result


def register(server: NkiLanguageServer) -> None:
    """Register the command."""

    @server.command(CALIBRATE.id)
    async def calibrate_command(ls: NkiLanguageServer, *args: Any) -> CalibrateResult | Refusal:
        return await calibrate(ls, *args)
