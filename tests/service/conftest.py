"""Fixtures shared by the service tests."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import pytest
from nki_studio.protocol.migration import MigrationResult


@pytest.fixture
def proven(prove_migration: Callable[..., MigrationResult]) -> Callable[[str], str]:
    """``proven(text)``: ``prove_migration`` of the dedented text (a legacy kernel file, the proof asserted to
    hold), returning the migrated text."""
    return lambda text: str(prove_migration(textwrap.dedent(text))["migrated"])
