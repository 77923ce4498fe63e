"""The start-up fast path: the first answers of a start, sent before pygls and lsprotocol have loaded.

Loading them is most of the server's start-up (lsprotocol builds ~550 attrs classes), and an editor that has
just opened a kernel waits for it. So ``nki-studio serve`` first reads the client's messages itself, with the
standard library only (``early_phase``): it answers ``initialize`` with the answer the full server gave the
same request on an earlier start (``initialize_cache``) and publishes the diagnostics of the first opened
document. Then the full server starts on the streams of ``streams``: its input replays every byte read so far
(it sees the whole conversation), its output drops what was already sent.

The full server and its features know nothing of this but one :class:`handover.Handover` (None: started
normally), which says what the client already received and holds the lint state behind it; the lint feature
takes it over. ``start.fast_start`` is the one entry; it is off with ``NKI_STUDIO_FASTPATH=0`` or the setting
``fastStart: false``, and on platforms without ``select`` on pipes (not POSIX).
"""
