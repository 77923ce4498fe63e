"""Server records reach the client once, with one level: the LSP message type, not a level word in the text."""

from __future__ import annotations

import logging

from nki_studio.lsp import logs


def test_client_messages_carry_the_level_once() -> None:
    sent: list[tuple[int, str]] = []
    handler = logs.attach_client(lambda kind, text: sent.append((kind, text)))
    logger = logging.getLogger("nki_studio.test_logs")
    level = logging.getLogger("nki_studio").level
    try:
        logs.set_level("info")
        logger.info("server started")
        logger.warning("slow lint")
    finally:
        logging.getLogger("nki_studio").removeHandler(handler)
        logging.getLogger("nki_studio").setLevel(level)  # later tests capture debug records
    assert sent == [
        (logs.INFO, "nki_studio.test_logs: server started"),
        (logs.WARNING, "nki_studio.test_logs: slow lint"),
    ]
