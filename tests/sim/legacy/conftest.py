"""Run legacy kernel sources (our own test kernels, written for the legacy ``neuronxcc.nki`` API) in the
embedded simulator."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from nki_studio.sim import SimResult, dropin, simulate

HEADER = """\
import numpy as np
from neuronxcc import nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa
"""


def _write(tmp_path: Path, source: str) -> Path:
    path = tmp_path / "legacy_kernel.py"
    path.write_text(HEADER + textwrap.dedent(source))
    return path


@pytest.fixture
def legacy(tmp_path: Path) -> Callable[..., SimResult]:
    """``legacy(source, *arrays, kernel_name=...)``: write the kernel file (with the legacy imports) and simulate it."""

    def run(source: str, *args: Any, **kwargs: Any) -> SimResult:
        return simulate(str(_write(tmp_path, source)), *args, **kwargs)

    return run


@pytest.fixture
def legacy_call(tmp_path: Path) -> Callable[..., Any]:
    """``legacy_call(source, function, *args)``: load the file as a legacy test script would and call one of its
    plain functions (which launches kernels through the legacy entry points)."""

    def call(source: str, function: str, *args: Any) -> Any:
        module = dropin.load_module(str(_write(tmp_path, source)))
        with dropin.installed():
            return getattr(module, function)(*args)

    return call
