"""pytest plugin of ``migrate_corpus.py``: the inputs a test (or a script) gives its kernels, without running them.

Each drop-in launch's inputs (``sim.launch_log.watching_inputs``) are appended as a JSON line (kernel, file,
spec fields) to the file named by ``NKI_STUDIO_LAUNCH_INPUTS``; the launch is then stopped (the test fails,
which is expected): only the shapes and dtypes are wanted, and the migration proof simulates the kernel itself.
Used with ``-p nki_studio.pytest_plugin`` (the drop-in) and ``-p launch_inputs_plugin`` (this folder on the path),
or around a script run (``watching()``, ``legacy_sim_corpus.tutorial_runs``).
"""

from __future__ import annotations

import json
import os
from contextlib import AbstractContextManager, ExitStack

import pytest
from nki_studio.sim import launch_log

ENVIRONMENT = "NKI_STUDIO_LAUNCH_INPUTS"


class InputsTaken(Exception):
    """Raised in place of the launch once its inputs are written."""


def _write(inputs: launch_log.LaunchInputs) -> None:
    with open(os.environ[ENVIRONMENT], "a", encoding="utf-8") as out:
        out.write(json.dumps({"kernel": inputs.kernel, "file": inputs.file, "spec": inputs.spec()}) + "\n")
    raise InputsTaken(f"{inputs.kernel}: inputs recorded, launch stopped")


def watching() -> AbstractContextManager[None]:
    """Record (and stop) every launch made inside the block."""
    return launch_log.watching_inputs(_write)


def pytest_configure(config: pytest.Config) -> None:
    """Watch every launch of the session."""
    stack = ExitStack()
    stack.enter_context(watching())
    config.add_cleanup(stack.close)
