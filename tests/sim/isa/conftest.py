"""Fixtures for the nki.isa instruction tests: a simulation session per test and tile helpers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from nki_studio.model.targets import Generation, Target
from nki_studio.sim import context


@pytest.fixture
def sim() -> Iterator[context.SimContext]:
    """A trn2 session with tracing on."""
    with context.session(target=Target(generation=Generation.GEN3), trace=True) as ctx:
        yield ctx


@pytest.fixture
def trn3() -> Iterator[context.SimContext]:
    with context.session(target=Target(generation=Generation.GEN4), trace=True) as ctx:
        yield ctx


@pytest.fixture
def trn1() -> Iterator[context.SimContext]:
    with context.session(target=Target(generation=Generation.GEN2)) as ctx:
        yield ctx
