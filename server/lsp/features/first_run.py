"""Commands for a kernel's first simulation (``service.first_run``): ``nki-studio.specGuesses`` (each
parameter with a guess, the last run's values among them), ``nki-studio.writeSpec`` (the spec comment from the
user's values) and ``nki-studio.referenceTemplate`` (a reference function to fill in). The extension asks, then
applies the edits; parsing runs in the request pool, off the event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from nki_studio.lsp.server import NkiLanguageServer
from nki_studio.protocol.commands import (
    REFERENCE_TEMPLATE,
    SPEC_GUESSES,
    WRITE_SPEC,
    ReferenceTemplate,
    SpecGuesses,
    SpecWrite,
)
from nki_studio.service import first_run
from pygls.uris import to_fs_path

R = TypeVar("R")


def register(server: NkiLanguageServer, last_args: Callable[[str, str], dict[str, str]]) -> None:
    """Register the commands; ``last_args(uri, kernel)``: the values of the kernel's last run (name -> value)."""

    async def with_text(uri: Any, compute: Callable[[str, str], R]) -> R | None:
        path = to_fs_path(str(uri))
        doc = server.workspace.text_documents.get(str(uri))
        if path is None or doc is None:
            return None
        text = doc.source
        return await asyncio.get_running_loop().run_in_executor(
            server.request_executor, lambda: compute(path, text)
        )

    @server.command(SPEC_GUESSES.id)
    async def spec_guesses(ls: NkiLanguageServer, uri: str, kernel: str) -> SpecGuesses | None:
        last = last_args(uri, kernel)
        return await with_text(uri, lambda path, text: first_run.guesses(text, path, kernel, last))

    @server.command(WRITE_SPEC.id)
    async def write_spec(
        ls: NkiLanguageServer, uri: str, kernel: str, values: dict[str, str]
    ) -> SpecWrite | None:
        return await with_text(uri, lambda path, text: first_run.write_spec(text, path, kernel, dict(values)))

    @server.command(REFERENCE_TEMPLATE.id)
    async def reference_template(ls: NkiLanguageServer, uri: str, kernel: str) -> ReferenceTemplate | None:
        return await with_text(uri, lambda path, text: first_run.reference_template(text, path, kernel))
