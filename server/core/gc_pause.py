"""Pausing CPython's cyclic garbage collector around an analysis that allocates millions of objects.

Parsing and analysing a large module creates millions of AST nodes and facts, nearly all alive until the
analysis ends. Every 700 allocations the collector runs, and its older generations traverse everything alive,
so a 50,000-line module spent about half of its parse time in collections that freed nothing (measured:
``ast.parse`` 2.9 s with the collector on, 1.1-1.5 s off; benchmarks/lint_bench.py ``--lines 50000``). Memory
freed by reference counting is unaffected; cycles made meanwhile wait for the next collection after the pause.

Pauses nest and may overlap between threads: the collector is back on once the last one ends (and stays off if
something else had switched it off before).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_active = 0
_was_enabled = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """Run the block with the cyclic garbage collector off."""
    global _active, _was_enabled
    with _lock:
        if _active == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _was_enabled:
                gc.enable()
