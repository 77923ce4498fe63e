"""Fixtures for the remote-profiling tests: a real sshd on loopback with stand-in Neuron tools."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "profile"))  # shared LSP test client, fixture generator

import sshd

KERNEL_SOURCE = """import nki
import nki.language as nl
import nki.isa as nisa


# nki-studio: simulate a=float32[128,512] b=float32[128,512]
@nki.jit
def add_act_kernel(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    z = nl.add(x, y)
    w = nisa.activation(op=nl.exp, data=z)
    nl.store(out, value=w)
    return out
"""
BODY_LINES = (9, 10, 11, 12, 13, 14, 15)  # 1-based statement lines of the kernel body


@pytest.fixture(scope="session")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sshd.LoopbackHost]:
    reason = sshd.unavailable()
    if reason:
        pytest.skip(reason)
    h = sshd.start(tmp_path_factory.mktemp("sshd"))
    yield h
    h.stop()


@pytest.fixture
def kernel(tmp_path: Path) -> Path:
    path = tmp_path / "ws" / "add_act.py"
    path.parent.mkdir()
    path.write_text(KERNEL_SOURCE, encoding="utf-8")
    return path
