"""What the fast path hands the full server: the one object by which state crosses from it (``lsp.fastpath``).

Standard library only (the full server imports it; the fast path builds it before lsprotocol loads).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the fast path loads the lint engine only once initialize is answered
    from nki_studio.nkilint.incremental import IncrementalLinter


@dataclass(frozen=True)
class EarlyLint:
    """One document linted, and its diagnostics published, before the full server started."""

    # The last publishDiagnostics params sent (uri, diagnostics as LSP JSON, the document's version if it had
    # one): of the open, or of the last edit the fast path followed.
    published: Mapping[str, Any]
    # The linter that produced them: adopted, the full server's first lint of the same text reuses every
    # kernel group instead of checking the document again.
    linter: IncrementalLinter
    # The last version linted: ``published``'s, or a later one whose diagnostics were the same (not sent again).
    # The full server does not lint the versions before it.
    version: int | None = None


@dataclass(frozen=True)
class Handover:
    """What the client already received before the full server started, and the lint state behind it.

    None instead of a Handover means the server started normally: the full server answers everything."""

    initialize_result: Mapping[str, Any]  # the answer sent to ``initialize``
    lints: Mapping[str, EarlyLint] = field(default_factory=dict)  # uri -> its early lint
    # What the early phase logged at warning level or above, as (LSP MessageType, text): it went to stderr only,
    # the full server sends it to the client's log once it can (``logs.attach_client``).
    logged: tuple[tuple[int, str], ...] = ()
