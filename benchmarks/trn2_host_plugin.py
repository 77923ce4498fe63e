"""pytest plugin of ``legacy_sim_corpus.py``: the simulated trn2 answers the host check of nki-samples' trn2-only
tests.

``test_double_row_matmul.py`` runs its kernel only where ``/sys/devices/virtual/dmi/id/product_name`` names a trn2
instance (its ``get_target_string()``); elsewhere the test returns at once, or, where the file is missing, fails in
the check itself (``warnings.warn`` without ``import warnings``). The simulator stands in for that device: for a
test whose module has that check, the plugin makes it answer ``"trn2"`` and sets the simulated target to trn2
(``NEURON_PLATFORM_TARGET_OVERRIDE``, read at each launch), so the kernel runs as on the host the test was written
for. Every other test runs as it is.
"""

from __future__ import annotations

import os

import pytest

_CHECK = "get_target_string"  # the host check's name in the test module


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Answer the host check of ``item``'s module with trn2, and simulate a trn2."""
    module = getattr(item, "module", None)
    if module is not None and hasattr(module, _CHECK):
        setattr(module, _CHECK, lambda: "trn2")
        os.environ["NEURON_PLATFORM_TARGET_OVERRIDE"] = "trn2"
