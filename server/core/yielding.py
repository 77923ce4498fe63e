"""Yield points: long analyses call :func:`checkpoint` between steps, so a front end can make background work
give way to a request a user is waiting for.

The language server installs a function that blocks its background job threads while a user request (hover,
completion, code action, signature help) is being answered, and does nothing on other threads. Without a
front end (CLI, tests) :func:`checkpoint` does nothing. The analyses never learn why they were paused.
"""

from __future__ import annotations

from collections.abc import Callable

_hook: Callable[[], None] | None = None


def checkpoint() -> None:
    """A point where the current analysis may be paused (cheap when nothing is installed)."""
    if _hook is not None:
        _hook()


def install(hook: Callable[[], None] | None) -> None:
    """Set (or with None remove) the process-wide pause function :func:`checkpoint` calls."""
    global _hook
    _hook = hook
