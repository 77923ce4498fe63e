"""The calibration of the estimate from the user's own profiles, declared once (issue 27 item 5): the file
``nki-studio calibrate`` writes (``.nki-studio/calibration.json``, versioned, one table per target with the
profiles it was fitted on), what ``calibrate`` answers (CLI ``--json``, the MCP tool, the language server
command), and the note every later estimate carries to say it used a calibration (or why it did not).

Standard library only, like the rest of ``protocol``; the fitting is ``nki_studio.estimate.calibration``.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypedDict

CALIBRATION_VERSION = 1
DEFAULT_CALIBRATION_FILE = ".nki-studio/calibration.json"


class CalibrationSource(TypedDict):
    """One measured profile a table was fitted on: its provenance."""

    file: Annotated[str, "the profile as given to calibrate"]
    sha256: Annotated[str, "hash of the profile's files (names and bytes), to tell a re-capture apart"]
    date: Annotated[str, "when calibrate read it (UTC, ISO 8601)"]
    target: str
    kernel: Annotated[str, "FILE::KERNEL simulated for it"]
    matched: Annotated[int, "measured instructions and transfers matched to simulated ones"]


class ComputeCost(TypedDict):
    """One fitted instruction cost: fixed_ns + per_element_ns x N + builtin_scale x the built-in cost (N: elements
    per partition). Samples of several sizes fit the first two (builtin_scale 0); samples all of one size cannot
    separate them and scale the built-in cost instead (fixed and per-element 0)."""

    engine: str
    opcode: Annotated[str, "the ISA name without its module, e.g. tensor_tensor"]
    dtype: Annotated[str, "the instruction's first input dtype"]
    fixed_ns: float
    per_element_ns: float
    builtin_scale: float
    samples: int


class DmaCost(TypedDict):
    """One fitted DMA cost for transfers whose descriptor rows fall in [row_min, row_max) bytes: time on its
    engines = fixed_ns + ns_per_byte x bytes / engines (the per-transfer latency comes on top)."""

    row_min: int
    row_max: Annotated[int | None, "null: no upper end"]
    fixed_ns: float
    ns_per_byte: float
    samples: int


class HeldOutError(TypedDict):
    """Leave-one-kernel-out: each kernel estimated with a table fitted on the others, against its measurement."""

    kernels: Annotated[int, "kernels held out in turn (0: fewer than two kernels, no held-out figure)"]
    before: Annotated[float | None, "mean |estimated / measured - 1| of the built-in model"]
    after: Annotated[float | None, "the same with the calibration fitted without the held-out kernel"]


class CalibrationTable(TypedDict):
    """The fitted constants of one target: they replace the built-in cost of matching instructions only."""

    target: str
    compute: list[ComputeCost]
    engine_scale: Annotated[
        dict[str, float], "engine -> measured / built-in time, for that engine's instructions not in compute"
    ]
    dma: list[DmaCost]
    held_out: HeldOutError
    profiles: list[CalibrationSource]


class CalibrationFile(TypedDict):
    """``.nki-studio/calibration.json``."""

    version: Annotated[int, "CALIBRATION_VERSION; another version is refused (the built-in model is used)"]
    tool: Annotated[str, "nki-studio version that wrote it"]
    targets: Annotated[dict[str, CalibrationTable], "target -> its table"]


class CalibrationNote(TypedDict):
    """What an estimate says about the calibration it used: applied, or ignored with the reason."""

    status: Literal["applied", "ignored"]
    file: str
    message: Annotated[
        str, "e.g. 'calibrated on 5 of your profiles, held-out error 4%', or why it was ignored"
    ]
    profiles: int


class SkippedProfile(TypedDict):
    """A profile calibrate could not use, and why."""

    profile: str
    reason: str


class CalibrateResult(TypedDict):
    """What ``calibrate`` did."""

    file: Annotated[str, "the calibration file written (empty when nothing could be fitted)"]
    target: str
    used: list[CalibrationSource]
    skipped: list[SkippedProfile]
    table: CalibrationTable | None
    message: str
