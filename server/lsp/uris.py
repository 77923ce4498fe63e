"""One spelling per file URI, so a document is found whichever way its URI was written.

Clients do not agree on how to write a file URI, and neither do we and our client: on Windows VS Code sends
``file:///c%3A/Users/me/k.py`` (lower-case drive, colon percent-encoded), pygls' ``from_fs_path`` gives
``file:///c:/Users/me/k.py``, ``Path.as_uri()`` ``file:///C:/Users/me/k.py`` and other editors keep the
drive's case. Every URI the server keys a document by goes through :func:`canonical` (VS Code's spelling:
decoded, then re-encoded with only unreserved characters and ``/`` left as they are, the drive letter lower
case); :func:`find_document` finds an open document from any spelling. Non-file URIs are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar
from urllib.parse import quote, unquote, urlsplit, urlunsplit

_DRIVE = re.compile(r"^/[A-Za-z]:")
T = TypeVar("T")


def canonical(uri: str) -> str:
    """``uri`` in the one spelling used for keys (see the module docstring)."""
    try:
        parts = urlsplit(uri)
    except ValueError:
        return uri
    if parts.scheme.lower() != "file":
        return uri
    path = unquote(parts.path)
    if _DRIVE.match(path):
        path = "/" + path[1].lower() + path[2:]
    return urlunsplit(("file", parts.netloc.lower(), quote(path, safe="/"), parts.query, parts.fragment))


def find_document(documents: Mapping[str, T], uri: str) -> T | None:
    """The open document of ``uri`` however either side spelled it (exact spelling first)."""
    found = documents.get(uri)
    if found is not None:
        return found
    key = canonical(uri)
    return next((doc for u, doc in documents.items() if canonical(u) == key), None)


class ByUri(Generic[T]):
    """A dict keyed by :func:`canonical` URIs: any spelling of a document's URI finds its entry."""

    def __init__(self) -> None:
        self._items: dict[str, T] = {}

    def __setitem__(self, uri: str, value: T) -> None:
        self._items[canonical(uri)] = value

    def __getitem__(self, uri: str) -> T:
        return self._items[canonical(uri)]

    def __contains__(self, uri: object) -> bool:
        return isinstance(uri, str) and canonical(uri) in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def get(self, uri: str, default: T | None = None) -> T | None:
        """The entry of ``uri`` (any spelling), else ``default``."""
        return self._items.get(canonical(uri), default)

    def clear(self) -> None:
        """Remove every entry."""
        self._items.clear()
