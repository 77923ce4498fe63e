"""A lint frees its analysis by reference counting (engine.dispose), and the collector pause nests."""

from __future__ import annotations

import gc
from pathlib import Path

from nki_studio.core.gc_pause import gc_paused
from nki_studio.nkilint.api import lint_source
from nki_studio.nkilint.config import LintConfig
from nki_studio.nkilint.incremental import IncrementalLinter

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _garbage_left(run: object) -> int:
    """Objects only the cyclic collector could free after ``run()`` (the collector held off meanwhile)."""
    gc.collect()
    gc.disable()
    try:
        run()  # type: ignore[operator]
        return gc.collect()
    finally:
        gc.enable()


def test_a_lint_leaves_no_cyclic_garbage() -> None:
    text = (EXAMPLES / "attention.py").read_text()
    lint_source(text, str(EXAMPLES / "attention.py"), LintConfig())  # imports and caches outside the count
    # Without engine.dispose the functions/module and context-cache cycles kept the whole tree: thousands.
    assert _garbage_left(lambda: lint_source(text, str(EXAMPLES / "attention.py"), LintConfig())) < 100
    linter = IncrementalLinter(str(EXAMPLES / "attention.py"))
    linter.lint(text, LintConfig())
    edited = text.replace("import numpy as np", "import numpy as np  # edited")
    assert _garbage_left(lambda: linter.lint(edited, LintConfig())) < 100


def test_the_collector_pause_nests_and_restores_the_previous_state() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still holds
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # it was off before: it stays off
    finally:
        gc.enable()
