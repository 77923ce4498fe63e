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


def test_what_the_early_phase_logged_reaches_the_client_first_and_once() -> None:
    """The fast path's records (before the client handler exists) are kept and sent when it is attached; the
    same traceback logged again by the full server is not sent twice. Logging is set up as ``serve`` sets it up
    (stderr first)."""
    nki, root = logging.getLogger("nki_studio"), logging.getLogger()
    logger = logging.getLogger("nki_studio.test_logs")
    handlers, levels = list(root.handlers), (root.level, nki.level)
    logs.configure_stderr("info")
    early = logs.EarlyRecords()
    nki.addHandler(early)
    try:
        logger.info("not kept: below warning")
        for _ in range(2):  # a failing rule, linted twice
            try:
                raise RuntimeError("rule bug")
            except RuntimeError:
                logger.exception("rule failed")
    finally:
        nki.removeHandler(early)
    assert len(early.records) == 1 and early.records[0][0] == logs.ERROR
    assert early.records[0][1].startswith("nki_studio.test_logs: rule failed\nTraceback")
    sent: list[tuple[int, str]] = []
    handler = logs.attach_client(lambda kind, text: sent.append((kind, text)), early.records)
    try:
        try:
            raise RuntimeError("rule bug")
        except RuntimeError:
            logger.exception("rule failed")  # the full server's own lint hits it again
    finally:
        nki.removeHandler(handler)
        root.handlers[:] = handlers
        root.setLevel(levels[0])
        nki.setLevel(levels[1])
    assert sent == early.records
