"""Reader for the Device Trace Viewer's "Export to CSV" (README §2): one ``<Table>.csv`` per table, first
column ``timeline_track``, then the Parquet fields with raw values. Only the visible range is exported and
it may be sampled, so the reader says so; there is no Summary, so the latency is the span of the rows.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
from nki_studio.profile.model import Profile, ProfileError
from nki_studio.profile.readers.tables import profile_from_tables

CSV_TABLES = ("Instruction", "DmaPacketAggregated", "DmaPacket")


def is_csv_dir(path: Path) -> bool:
    """A directory with an exported ``Instruction.csv``."""
    return path.is_dir() and (path / "Instruction.csv").is_file()


def read_csv_dir(path: str | Path) -> Profile:
    """Read an exported CSV directory."""
    root = Path(path)
    tables = {}
    for name in CSV_TABLES:
        f = root / f"{name}.csv"
        if not f.is_file():
            continue
        try:
            # Location strings must stay strings even when a column happens to hold only numbers or blanks.
            opts = pacsv.ConvertOptions(
                column_types={"nki_source_location": pa.string(), "timeline_track": pa.string()}
            )
            tables[name] = pacsv.read_csv(f, convert_options=opts)
            tables[name].column_names  # noqa: B018 - Arrow decodes the header names only here
        except (pa.ArrowException, OSError) as exc:
            raise ProfileError(f"{f.name}: not a readable CSV export ({exc})") from exc
        except UnicodeDecodeError as exc:
            raise ProfileError(
                f"{f.name}: not a readable CSV export (a column name is not UTF-8 text)"
            ) from exc
    if "Instruction" not in tables:
        raise ProfileError(f"{root}: no Instruction.csv")
    note = "CSV export: only the range visible in the UI when exported, possibly sampled; latency is the row span"
    return profile_from_tables(tables, str(root), "csv", [note])
