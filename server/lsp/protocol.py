"""The server's JSON-RPC protocol: pygls' own, except that a handler's future is forgotten once it finished.

pygls 2 (2.0 to 2.1.1, and its main branch as of July 2026) files the future of every message whose handler is
a coroutine, a thread or a generator in ``_request_futures`` under the message's id, so that a
``$/cancelRequest`` can find it, and removes it only when it sends the response. Notifications get no
response, and pygls' built-in handlers of didOpen, didChange and didClose are generators, so every such
notification left its future behind (a ``concurrent.futures.Future`` with its condition and lock, under a
random id) for as long as the server ran: about 2,100 per cycle of benchmarks/lsp_storm_bench.py, the
memory it kept growing cycle after cycle after the documents closed.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from pygls.protocol import LanguageServerProtocol

if TYPE_CHECKING:  # pygls declares these for type checkers only
    from pygls.protocol.json_rpc import MessageCallback, MessageHandler, MsgId


class NkiProtocol(LanguageServerProtocol):
    """pygls' language-server protocol whose ``_request_futures`` holds only handlers still running."""

    def _execute_handler(
        self,
        msg_id: MsgId,
        handler: MessageHandler,
        callback: MessageCallback,
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        def done(future: Future[Any]) -> None:
            # pygls files the future before adding its callback, so a handler done at once is dropped too. A
            # request's own callback drops it as well before responding. A cancelled one is left: a
            # ``$/cancelRequest`` dropped it already, and shutdown cancels the running ones while iterating over
            # the dict (a concurrent future runs its callbacks at once, inside that loop).
            if not future.cancelled() and self._request_futures.get(msg_id) is future:
                del self._request_futures[msg_id]
            callback(future)

        super()._execute_handler(msg_id, handler, done, args, kwargs)
