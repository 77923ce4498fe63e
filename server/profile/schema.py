"""Neuron Explorer Parquet schema facts (field names, Arrow types, required flags) and the version check.

``schema_7_4.json`` holds the names and types of schema 7.4.0 (Neuron SDK 2.31.0) as facts extracted from
``profile-schema-reference.rst`` (no descriptions). Schema 12.0.1 ships with SDK 2.33.0 but its table bodies
are unknown (profile-formats/README.md §1), so readers key on column presence and cast types.
"""

from __future__ import annotations

import json
import re
from functools import cache

READER_SCHEMA_VERSION = "7.4.0"


@cache
def schema_tables() -> dict[str, list[tuple[str, str, bool]]]:
    """``{table: [(field, arrow_type, required), ...]}`` of the schema the readers were written against."""
    from importlib import resources  # ~8 ms to import; only fixtures and tests need the full schema

    raw = json.loads(resources.files("nki_studio.profile").joinpath("schema_7_4.json").read_text("utf-8"))
    return {t: [(f[0], f[1], bool(f[2])) for f in fields] for t, fields in raw["tables"].items()}


def parse_version(text: str) -> tuple[int, int, int] | None:
    """``"7.4.0"`` → (7, 4, 0); None when it is not MAJOR.MINOR.PATCH."""
    m = re.fullmatch(r"\s*v?(\d+)\.(\d+)(?:\.(\d+))?\s*", text or "")
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)) if m else None


WHAT_STILL_WORKS = (
    "What still works: `neuron-explorer view --output-format summary-json` (kernel summary), "
    "`--output-format perfetto` (engine/DMA timelines, and per-line heat when slices carry source locations), "
    "or reading this directory anyway with the schema check turned off (--ignore-schema-version / setting "
    "nki-studio.profileIgnoreSchemaVersion), which uses every column it still recognises."
)


def check_schema_version(found: str) -> str | None:
    """None when ``found`` is compatible; otherwise the message explaining the mismatch.

    A newer MINOR or PATCH only adds fields, so it is accepted; a different MAJOR means incompatible changes
    (renamed, removed or retyped fields) under Neuron's own versioning rules.
    """
    mine = parse_version(READER_SCHEMA_VERSION)
    theirs = parse_version(found)
    assert mine is not None
    if theirs is None:
        return (
            f"Metadata.profile_schema_version is {found!r}, not a MAJOR.MINOR.PATCH version; this reader "
            f"understands schema {READER_SCHEMA_VERSION}. {WHAT_STILL_WORKS}"
        )
    if theirs[0] != mine[0]:
        return (
            f"This profile uses Neuron Explorer profile schema {found} (major {theirs[0]}); this reader was "
            f"written for schema {READER_SCHEMA_VERSION} (major {mine[0]}). A different major version means "
            f"tables or fields were renamed, removed or retyped, so the numbers could be wrong. {WHAT_STILL_WORKS}"
        )
    return None
