"""Editor intelligence for NKI without the SDK: completion, hover, signature help and go-to-definition.

Backed by jedi with our stubs (``nki_studio/stubs``) on its path (``nki_jedi``). Only documents that import nki
or neuronxcc.nki get anything; other Python files are left to the editor's Python support. jedi runs on one
dedicated thread (it is not thread-safe), never on the event loop. Hover goes through the server's merged hover
(``add_hover_provider``) so the profile/simulate hovers still show; it adds the API docs with the configured
target's limits, and on a tensor allocation the shape, dtype, buffer and bytes per partition computed by the
abstract interpreter (``model.analysis.describe_allocations``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types
from nki_studio.lsp.features.nki_jedi import (
    NkiJedi,
    api_module,
    imports_nki,
    is_legacy_module,
    target_notes,
)
from nki_studio.lsp.features.stub_keywords import StubParameter, keyword_completions
from nki_studio.lsp.server import NkiLanguageServer
from nki_studio.migrate.hints import migration_hint
from nki_studio.model.analysis import AllocationInfo, describe_allocations
from nki_studio.model.capacity import capacity_share
from nki_studio.model.targets import LEGACY, LEGACY_API_LABEL, Target
from nki_studio.model.version_signals import VersionSignal
from nki_studio.nkilint.engine import assumed_version_note
from nki_studio.service.settings import code_target, file_target
from nki_studio.service.simulation import spec_arguments
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace.position_codec import PositionCodec

if TYPE_CHECKING:  # jedi is imported on the jedi thread, not at server start-up
    from jedi.api.classes import BaseName, Completion, Signature

log = logging.getLogger(__name__)

T = TypeVar("T")
API_HOVER_CACHE_SIZE = 512  # hover texts of distinct API names kept (the NKI API has a few hundred)

_KINDS = {
    "module": types.CompletionItemKind.Module,
    "class": types.CompletionItemKind.Class,
    "function": types.CompletionItemKind.Function,
    "instance": types.CompletionItemKind.Variable,
    "param": types.CompletionItemKind.Variable,
    "property": types.CompletionItemKind.Property,
    "statement": types.CompletionItemKind.Constant,
    "keyword": types.CompletionItemKind.Keyword,
}


@dataclass(frozen=True)
class _Request:
    """A document snapshot and a cursor in jedi's coordinates (1-based line, code-point column)."""

    uri: str
    path: str | None
    text: str
    version: int | None
    line: int
    column: int


class IntelligenceFeature:
    """Owns the jedi thread and the per-document caches."""

    def __init__(self, server: NkiLanguageServer) -> None:
        self.server = server
        self.thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nki-jedi")
        self.jedi: NkiJedi | None = None
        self._completions: dict[
            str, Completion | StubParameter
        ] = {}  # label -> item of the latest completion, for resolve
        self._allocations: dict[str, tuple[tuple[int | None, Target, int], list[AllocationInfo]]] = {}
        self._root: str | None = None
        # (API name's definition, target) -> its hover markdown: the signature and docstring come from the stubs
        # or the installed SDK, which do not change while the server runs (inferred), and reading them was
        # most of a hover's cost, which a storm of edits made wait for the GIL. Jedi thread only.
        self._api_hovers: dict[tuple[Any, ...], str] = {}

    # ---- plumbing ------------------------------------------------------------------------------------------
    def start(self, root: str | None) -> None:
        """Create the jedi project and parse the stubs in the background."""

        def init() -> None:
            self.jedi = NkiJedi(root)
            try:
                self.jedi.warm_up()
            except Exception:
                log.exception("jedi warm-up failed; completion may be slow the first time")

        self.thread.submit(init)

    def _backend(self) -> NkiJedi:
        """The jedi wrapper (jedi thread only), rooted at the workspace once the client told us its root."""
        if self.jedi is None or (self.jedi.root is None and self._root is not None):
            self.jedi = NkiJedi(self._root)
        return self.jedi

    async def _run(self, fn: Callable[[], T], default: T) -> T:
        """Run ``fn`` on the jedi thread; a failure (jedi on a half-typed file, a broken import) is logged and
        answered with ``default`` so the editor shows nothing rather than an error."""
        try:
            return await asyncio.get_running_loop().run_in_executor(self.thread, fn)
        except Exception:
            log.exception("editor intelligence: %s failed", getattr(fn, "__qualname__", fn))
            return default

    def _request(self, uri: str, position: types.Position) -> _Request | None:
        """Snapshot on the event loop; None for documents that do not import nki."""
        doc = self.server.workspace.text_documents.get(uri)
        if doc is None:
            return None
        text = doc.source
        self._root = self._root or self.server.workspace.root_path
        if not imports_nki(text):
            return None
        lines = text.split("\n")
        codec = PositionCodec(self.server.workspace.position_encoding)
        pos = codec.position_from_client_units(lines, position) if position.line < len(lines) else position
        return _Request(uri, to_fs_path(uri), text, doc.version, pos.line + 1, pos.character)

    def target(self, path: str | None, text: str | None = None) -> tuple[Target, VersionSignal | None]:
        """The editor's target, else the project's ``[tool.nki-studio]``, else the defaults; with the file's
        ``text``, a version nothing names is the one its code is written for (``service.settings.code_target``),
        returned with the use it was inferred from."""
        if text is None:
            return file_target(path, self.server.settings), None
        return code_target(path, self.server.settings, text)

    # ---- completion ----------------------------------------------------------------------------------------
    async def completion(self, params: types.CompletionParams) -> types.CompletionList | None:
        req = self._request(params.text_document.uri, params.position)
        if req is None:
            return None
        # Keyword arguments of an NKI call come from the stubs' table on the event loop: the first one after
        # start does not wait for jedi's warm-up on its thread (stub_keywords). The rest goes to jedi.
        items: Sequence[Completion | StubParameter] | None = keyword_completions(
            req.text, req.line, req.column
        )
        if items is None:
            none: list[Completion] = []
            items = await self._run(
                lambda: self._backend().complete(req.text, req.path, req.line, req.column), none
            )
        if not items:
            return None
        self._completions = {c.name_with_symbols: c for c in items}
        return types.CompletionList(
            is_incomplete=False,
            items=[
                types.CompletionItem(
                    label=c.name_with_symbols,
                    kind=_KINDS.get(c.type, types.CompletionItemKind.Text),
                    detail=_module_of(c),
                    sort_text=f"{i:04d}",
                )
                for i, c in enumerate(items)
            ],
        )

    async def resolve(self, item: types.CompletionItem) -> types.CompletionItem:
        """Docs of one completion item (computed only when the editor shows it)."""
        completion = self._completions.get(item.label)
        if completion is None:
            return item
        target, _ = self.target(None)

        def docs() -> tuple[str, str, _ApiVersion]:
            return (
                _signature_line(completion),
                completion.docstring(raw=True),
                _api_version(
                    completion.module_name, completion.name, legacy=is_legacy_module(completion.module_name)
                ),
            )

        signature, doc, version = await self._run(docs, ("", "", _ApiVersion()))
        item.detail = signature or item.detail
        item.documentation = types.MarkupContent(
            kind=types.MarkupKind.Markdown, value=_api_markdown(completion.name, "", doc, target, version)
        )
        return item

    # ---- hover ---------------------------------------------------------------------------------------------
    async def hover(self, params: types.HoverParams) -> types.Hover | None:
        req = self._request(params.text_document.uri, params.position)
        if req is None:
            return None
        target, assumed = self.target(req.path, req.text)
        parts: list[str] = []

        def api() -> str | None:
            names = self._backend().api_names(req.text, req.path, req.line, req.column)
            if not names:
                return None
            name = names[0]
            # Legacy docs for a legacy definition, and for a current name (re-exported by the legacy stubs) in code
            # written for the legacy API.
            legacy = is_legacy_module(name.module_name) or target.nki_version <= LEGACY
            key = (name.module_path, name.full_name, name.name, name.line, name.column, target, legacy)
            markdown = self._api_hovers.get(key)
            if markdown is None:
                if len(self._api_hovers) >= API_HOVER_CACHE_SIZE:
                    self._api_hovers.clear()
                markdown = _api_markdown(
                    name.name,
                    _signature_line(name),
                    name.docstring(raw=True),
                    target,
                    _api_version(name.module_name, name.name, legacy=legacy),
                )
                self._api_hovers[key] = markdown
            return markdown

        def both() -> tuple[AllocationInfo | None, str | None]:
            # One trip to the jedi thread: while lint and edits keep the server busy, every hand-over between
            # threads waits its turn for the GIL. Each half failing alone still lets the other answer.
            return _logged(lambda: self._allocation_at(req, target)), _logged(api)

        nothing: tuple[AllocationInfo | None, str | None] = (None, None)
        alloc, doc = await self._run(both, nothing)
        if alloc is not None:
            parts.append(allocation_markdown(alloc, target))
        if doc is not None:
            parts.append(doc)
        if not parts:
            return None
        if assumed is not None:  # the version the facts and notes were computed for came from the code
            parts.append(f"_{assumed_version_note(assumed)}_")
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(parts))
        )

    def _allocation_at(self, req: _Request, target: Target) -> AllocationInfo | None:
        """The allocation whose call spans the cursor, or whose line the cursor is on before the call
        (the assigned name)."""
        # Only the kernel around the cursor is interpreted: while the user types, every hover is on a new version.
        key = (req.version, target, req.line)
        cached = self._allocations.get(req.uri)
        if cached is None or cached[0] != key:
            path = req.path or "<unknown>"
            args = spec_arguments(req.text, path)
            cached = (key, describe_allocations(req.text, path, target, args, line=req.line))
            self._allocations[req.uri] = cached
        col = req.column + 1  # Span columns are 1-based
        on_line = [a for a in cached[1] if a.span.line <= req.line <= a.span.end_line]
        for a in on_line:
            starts_before = (a.span.line, a.span.column) <= (req.line, col)
            ends_after = (req.line, col) < (a.span.end_line, a.span.end_column)
            if starts_before and ends_after:
                return a
        before = [a for a in on_line if a.span.line == req.line and col < a.span.column]
        return before[0] if before else None

    def forget(self, uri: str) -> None:
        """A document closed: drop its allocation facts, and (on the jedi thread) what jedi cached of it."""
        self._allocations.pop(uri, None)
        path = to_fs_path(uri)
        if path is not None:
            self.thread.submit(lambda: self.jedi.forget(path) if self.jedi is not None else None)

    # ---- signature help ------------------------------------------------------------------------------------
    async def signature_help(self, params: types.SignatureHelpParams) -> types.SignatureHelp | None:
        req = self._request(params.text_document.uri, params.position)
        if req is None:
            return None

        def compute() -> list[tuple[Signature, str, list[tuple[str, str]]]]:
            sigs = self._backend().signatures(req.text, req.path, req.line, req.column)
            return [(s, s.docstring(raw=True), [(p.to_string(), p.name) for p in s.params]) for s in sigs]

        no_signatures: list[tuple[Signature, str, list[tuple[str, str]]]] = []
        sigs = await self._run(compute, no_signatures)
        if not sigs:
            return None
        infos = []
        for sig, doc, params_ in sigs:
            infos.append(
                types.SignatureInformation(
                    label=sig.to_string(),
                    documentation=types.MarkupContent(kind=types.MarkupKind.Markdown, value=doc),
                    parameters=[types.ParameterInformation(label=label) for label, _ in params_],
                    active_parameter=sig.index,
                )
            )
        return types.SignatureHelp(signatures=infos, active_signature=0, active_parameter=sigs[0][0].index)

    # ---- definition ----------------------------------------------------------------------------------------
    async def definition(self, params: types.DefinitionParams) -> list[types.Location] | None:
        req = self._request(params.text_document.uri, params.position)
        if req is None:
            return None

        def compute() -> list[tuple[str, int, int, int]]:
            out = []
            for n in self._backend().definitions(req.text, req.path, req.line, req.column):
                assert n.module_path is not None and n.line is not None
                out.append((str(n.module_path), n.line - 1, n.column or 0, len(n.name)))
            return out

        nothing: list[tuple[str, int, int, int]] = []
        found = await self._run(compute, nothing)
        locations = []
        for path, line, column, length in found:
            uri = from_fs_path(path) or Path(path).as_uri()
            start = types.Position(line=line, character=column)
            end = types.Position(line=line, character=column + length)
            locations.append(types.Location(uri=uri, range=types.Range(start=start, end=end)))
        return locations or None


# ---- markdown ----------------------------------------------------------------------------------------------


def _logged(fn: Callable[[], T | None]) -> T | None:
    """``fn()``, or None after logging its failure (jedi on a half-typed file, an interpreter bug)."""
    try:
        return fn()
    except Exception:
        log.exception("editor intelligence: %s failed", getattr(fn, "__qualname__", fn))
        return None


def allocation_markdown(alloc: AllocationInfo, target: Target) -> str:
    """Hover text of an allocation as computed by the interpreter."""
    shape = (
        "unknown"
        if alloc.shape is None
        else "(" + ", ".join("?" if d is None else str(d) for d in alloc.shape) + ")"
    )
    lines = [
        f"**`{alloc.api}`** in `{alloc.function}` — computed for {target.generation.value}, NKI {target.nki_version}",
        "",
        f"- shape: `{shape}`",
        f"- dtype: `{alloc.dtype or 'unknown'}`",
        f"- buffer: `{alloc.buffer or 'unknown'}`",
    ]
    if alloc.bytes_per_partition is not None:
        limits = target.limits
        capacity = (
            limits.psum_bytes_per_partition if alloc.buffer == "psum" else limits.sbuf_bytes_per_partition
        )
        share = capacity_share(alloc.bytes_per_partition, capacity, alloc.buffer or "buffer")
        lines.append(f"- bytes per partition: {alloc.bytes_per_partition:,} ({share})")
    if alloc.instances > 1:
        lines.append(f"- live copies at once: at least {alloc.instances}")
    return "\n".join(lines)


@dataclass(frozen=True)
class _ApiVersion:
    """What a hover says about the API version of a name: the legacy label, and for a name NKI 0.7 removed what
    ``nki-studio migrate`` does with it."""

    label: str | None = None
    migration: str | None = None


def _api_version(module: str | None, name: str, *, legacy: bool) -> _ApiVersion:
    if not legacy:
        return _ApiVersion()
    short = api_module(module)
    # A current ISA instruction re-exported by the legacy stubs is called the same way in 0.7: nothing to migrate.
    hint = None if short == "isa" and not is_legacy_module(module) else migration_hint(short, name)
    return _ApiVersion(LEGACY_API_LABEL, hint)


def _api_markdown(
    name: str, signature: str, doc: str, target: Target, version: _ApiVersion = _ApiVersion()
) -> str:
    parts = [f"**{version.label}**"] if version.label else []
    if signature:
        parts.append(f"```python\n{signature}\n```")
    if doc:
        parts.append(doc)
    if version.migration:
        parts.append(f"Migration to NKI 0.7 (`nki-studio migrate`): {version.migration}")
    notes = target_notes(name, doc, target)
    if notes:
        parts.append("\n".join(f"- {'⚠ ' if n.warning else ''}{n.text}" for n in notes))
    return "\n\n".join(parts)


def _signature_line(name: BaseName) -> str:
    try:
        sigs = name.get_signatures()
    except Exception:  # jedi raises assorted errors on odd names; the docstring alone is still useful
        return ""
    if sigs:
        return f"{name.module_name}.{sigs[0].to_string()}"
    return f"{name.module_name}.{name.name}"


def _module_of(completion: Completion) -> str:
    return completion.module_name or ""


def register(server: NkiLanguageServer) -> None:
    """Completion, signature help and definition handlers, plus a provider of the merged hover."""
    feature = IntelligenceFeature(server)
    server.add_hover_provider(feature.hover)
    server.on_document("close", feature.forget)

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=[".", "(", ","], resolve_provider=True),
    )
    async def completion(ls: NkiLanguageServer, params: types.CompletionParams) -> Any:
        return await ls.user_request(feature.completion)(params)

    @server.feature(types.COMPLETION_ITEM_RESOLVE)
    async def resolve(ls: NkiLanguageServer, item: types.CompletionItem) -> types.CompletionItem:
        return await ls.user_request(feature.resolve)(item)

    @server.feature(
        types.TEXT_DOCUMENT_SIGNATURE_HELP,
        types.SignatureHelpOptions(trigger_characters=["(", ","], retrigger_characters=[","]),
    )
    async def signature_help(ls: NkiLanguageServer, params: types.SignatureHelpParams) -> Any:
        return await ls.user_request(feature.signature_help)(params)

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    async def definition(ls: NkiLanguageServer, params: types.DefinitionParams) -> Any:
        return await ls.user_request(feature.definition)(params)

    server.after_startup(lambda: feature.start(None))
