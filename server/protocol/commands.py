"""Every command name, declared once with what it takes and what it answers.

* ``SERVER_COMMANDS``: ``workspace/executeCommand`` commands the language server registers and the extension
  calls (``lsp.features``); arguments are positional, as LSP sends them.
* ``CLIENT_COMMANDS``: the VS Code commands the extension registers (``extension/src/commands.ts``); the
  contributed ones are listed in ``package.json`` ``contributes.commands`` with their titles (a test checks
  the two agree both ways).

``nki_studio.protocol.schema`` exports their argument and result types as JSON Schema and generates the
TypeScript constants and types the extension uses instead of string literals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal, TypedDict

from nki_studio.protocol.calibration import CalibrateResult
from nki_studio.protocol.heatmap import HeatLayer, HeatLayerParams
from nki_studio.protocol.migration import MigrationResult
from nki_studio.protocol.profile import MappingJson
from nki_studio.protocol.simulation import AnyResult
from nki_studio.protocol.tune import TuneReport


@dataclass(frozen=True)
class Command:
    """One command: ``key`` names its TypeScript constant, ``arguments`` is a tuple type (or a union of them,
    one per accepted argument list), ``result`` what it answers (None: nothing)."""

    key: str
    id: str
    arguments: object
    result: object
    doc: str
    contributed: bool = True  # client commands only: listed in package.json (False: internal, e.g. a link)


class _LoadProfileSpecKeys(TypedDict):
    uri: Annotated[str, "the profile directory or file"]


class LoadProfileSpec(_LoadProfileSpecKeys, total=False):
    """``loadProfile``'s argument as an object, with the options of the load."""

    format: Annotated[str, "the reader to use (default: detected)"]
    execution: Annotated[int, "the execution to show when the profile has several"]
    trace: Annotated[
        str, "URI of the simulator's JSON Lines trace of the same kernel, for the roofline FLOPs"
    ]


class LoadProfileResult(TypedDict):
    """What loading a profile painted, for the one-line message the extension shows."""

    files: Annotated[list[str], "URIs of the documents that got heat"]
    format: str
    latency_ns: int
    latency_source: str
    unattributed_instr: Annotated[int, "instructions without a source line"]
    unmapped_files: list[MappingJson]
    mapping: list[MappingJson]
    notes: list[str]


class ClearProfileResult(TypedDict):
    """The documents whose heat was cleared."""

    cleared: list[str]


class RemoteProfileSpec(TypedDict):
    """``profileRemote``'s argument as an object."""

    uri: str
    kernel: str


class _RemoteProfileKeys(LoadProfileResult):
    status: Literal["ok"]
    profile: Annotated[str, "where the downloaded profile is cached"]
    host: str


class RemoteProfileResult(_RemoteProfileKeys, total=False):
    """A remote profiling run's answer: the loaded profile's summary, its cache path and host."""

    warnings: list[str]


class _CalibrateSpecKeys(TypedDict):
    profiles: Annotated[list[str], "URIs of measured profiles (directories or files)"]


class CalibrateSpec(_CalibrateSpecKeys, total=False):
    """``calibrate``'s argument as an object."""

    kernel: Annotated[
        str, "URI of the kernel file every profile is of, optionally ::KERNEL (default: what each names)"
    ]
    target: Annotated[str, "trn1, trn2 or trn3 (default: the kernel's)"]


class Refusal(TypedDict):
    """The answer to a command that runs user code in an untrusted workspace."""

    status: Literal["refused"]
    message: str


class ParameterGuess(TypedDict):
    """What to pre-fill for one kernel parameter when the user is asked for its shape and dtype."""

    name: str
    value: Annotated[str, "dtype[shape] or a number as the spec comment writes it; '' when nothing is known"]
    source: Annotated[
        Literal["spec", "asserts", "type hint", "tests", "last run", "example"],
        "where the guess comes from: the spec comment, the kernel's asserts, its type hints, its calls in the "
        "project's tests, the last run, or an example to edit",
    ]


class LineEdit(TypedDict):
    """One edit of a document by whole lines: insert ``text`` before 0-based ``line``, or replace that line."""

    line: int
    replace: bool
    text: Annotated[str, "the new line(s), each ending in a newline"]


class SpecGuesses(TypedDict):
    """A kernel's parameters with their guesses, and whether it needs them (it has no usable spec)."""

    kernel: str
    needed: Annotated[bool, "no usable spec: Simulate Kernel asks for each parameter before it runs"]
    parameters: Annotated[list[ParameterGuess], "the parameters without a default, in order"]


class SpecWrite(TypedDict):
    """The spec comment built from the user's values: the edit that writes it, or what is wrong with them."""

    edit: LineEdit | None
    problems: Annotated[list[str], "one line per value that does not parse"]


class ReferenceTemplate(TypedDict):
    """The edit that adds a reference function to fill in and names it in the kernel's spec comment."""

    function: Annotated[str, "the reference function's name"]
    edit: LineEdit


class DeclaredSpace(TypedDict):
    """A kernel's declared search space, to pre-fill "Tune kernel…"."""

    kernel: str
    space: Annotated[str, "the space as written, constraints after ' if ' ('' when none is declared)"]
    origin: Annotated[str, "where it is declared: 'tune comment', '[tool.nki-studio.tune]' or ''"]
    size: Annotated[int | None, "points before constraints (null: none declared, or it does not parse)"]


class _TuneSpecKeys(TypedDict):
    uri: Annotated[str, "the kernel file's document URI"]
    kernel: str


class TuneSpec(_TuneSpecKeys, total=False):
    """``tune``'s argument: the kernel and what to search (default: its declared space, every point)."""

    space: Annotated[str, "NAME=values ... [if EXPR; EXPR], replacing the declared space"]
    budget: Annotated[int, "points to try at most (Optuna's TPE beyond it)"]


class TuneResult(TypedDict):
    """A search from the editor: the report, what the kernel panel shows of it (the server's text, so the panel
    formats nothing) and the edit that writes the winner's values into the text that was searched."""

    status: Literal["ok"]
    uri: str
    report: TuneReport
    summary: Annotated[str, "one line: what was searched and how much ran"]
    header: list[str]
    rows: Annotated[list[list[str]], "the table's rows as text, under header (times are estimates)"]
    outcome: Annotated[list[str], "baseline, winner (or that nothing passed) and notes"]
    scatter: Annotated[
        str, "SVG: estimated time against SBUF peak of the ranked candidates, the Pareto front"
    ]
    edits: Annotated[
        list[LineEdit], "the winner's values in the searched text ([]: no winner, or nothing to change)"
    ]


SIMULATE = Command(
    "simulate",
    "nki-studio.simulate",
    tuple[str] | tuple[str, str | None],
    AnyResult,
    "Simulate the kernel named (default: the file's first) in the document at the URI; the structured result.",
)
LOAD_PROFILE = Command(
    "loadProfile",
    "nki-studio.loadProfile",
    tuple[str] | tuple[LoadProfileSpec],
    LoadProfileResult,
    "Load a Neuron Explorer profile and paint its heat on the files it maps to.",
)
CLEAR_PROFILE = Command(
    "clearProfile",
    "nki-studio.clearProfile",
    tuple[()],
    ClearProfileResult,
    "Remove the profile's heat from every painted document.",
)
PROFILE_REMOTE = Command(
    "profileRemote",
    "nki-studio.profileRemote",
    tuple[str, str | None] | tuple[RemoteProfileSpec],
    RemoteProfileResult | Refusal,
    "Profile a kernel on the remote Trn2 host and paint the measured heat.",
)
CALIBRATE = Command(
    "calibrate",
    "nki-studio.calibrate",
    tuple[str] | tuple[CalibrateSpec],
    CalibrateResult | Refusal,
    "Fit the estimate's costs to measured profiles (the profile URI, or a CalibrateSpec) and store them in the "
    "project's calibration file; later simulations' estimates use it.",
)
SELECT_HEAT_LAYER = Command(
    "selectHeatLayer",
    "nki-studio.selectHeatLayer",
    tuple[str, HeatLayer],
    HeatLayerParams,
    "Show one layer of the document's heat (measured, estimate, compare) in every view; the layer shown.",
)
MIGRATE = Command(
    "migrate",
    "nki-studio.migrate",
    tuple[str],
    MigrationResult | Refusal,
    "Migrate the document at the URI to NKI 0.7 and prove it (both versions simulated on the same inputs); the "
    "edit is applied only when proven.",
)
SPEC_GUESSES = Command(
    "specGuesses",
    "nki-studio.specGuesses",
    tuple[str, str],
    SpecGuesses,
    "The kernel's parameters with a guess of each one's shape and dtype (its spec comment, asserts, last run).",
)
WRITE_SPEC = Command(
    "writeSpec",
    "nki-studio.writeSpec",
    tuple[str, str, dict[str, str]],
    SpecWrite,
    "The edit that writes the kernel's spec comment with the given parameter values (name -> dtype[shape]).",
)
REFERENCE_TEMPLATE = Command(
    "referenceTemplate",
    "nki-studio.referenceTemplate",
    tuple[str, str],
    ReferenceTemplate,
    "The edit that adds a reference function template for the kernel and names it in its spec comment.",
)
TUNE_SPACE = Command(
    "tuneSpace",
    "nki-studio.tuneSpace",
    tuple[str, str],
    DeclaredSpace,
    "The kernel's declared search space (its tune comment, else [tool.nki-studio.tune]) and its size.",
)
TUNE = Command(
    "tune",
    "nki-studio.tune",
    tuple[TuneSpec],
    TuneResult | Refusal,
    "Search the kernel's variants (each verified by the simulator, ranked by the estimate) in the document's "
    "text; the report, its table and scatter plot, and the winner's edit (not applied).",
)
SERVER_COMMANDS = (
    SIMULATE,
    LOAD_PROFILE,
    CLEAR_PROFILE,
    PROFILE_REMOTE,
    CALIBRATE,
    SELECT_HEAT_LAYER,
    MIGRATE,
    SPEC_GUESSES,
    WRITE_SPEC,
    REFERENCE_TEMPLATE,
    TUNE_SPACE,
    TUNE,
)

_URI = Annotated[str, "a document URI"]
CLIENT_COMMANDS = (
    Command(
        "simulateKernel",
        "nki-studio.simulateKernel",
        tuple[()] | tuple[_URI, str],
        None,
        "Simulate a kernel: the one named, else the one at the cursor, else one picked.",
    ),
    Command(
        "toggleSimulateOnSave", "nki-studio.toggleSimulateOnSave", tuple[()], None, "Toggle simulate on save."
    ),
    Command(
        "openProfile",
        "nki-studio.openProfile",
        tuple[()] | tuple[_URI],
        None,
        "Load a profile (asks for one without an argument).",
    ),
    Command(
        "profileOnRemote", "nki-studio.profileOnRemote", tuple[()], None, "Profile a kernel on a remote host."
    ),
    Command("clearHeatmap", "nki-studio.clearHeatmap", tuple[()], None, "Clear the heatmap."),
    Command(
        "nextHottestLine", "nki-studio.nextHottestLine", tuple[()], None, "Move to the next hottest line."
    ),
    Command(
        "pickHeatmapMetric", "nki-studio.pickHeatmapMetric", tuple[()], None, "Choose the heatmap metric."
    ),
    Command(
        "switchHeatLayer",
        "nki-studio.switchHeatLayer",
        tuple[()] | tuple[_URI, HeatLayer],
        None,
        "Switch the heat layer of a document: measured, estimated, or the two compared (asks without arguments).",
    ),
    Command("showKernelPanel", "nki-studio.showKernelPanel", tuple[()], None, "Show the kernel panel."),
    Command(
        "addReference",
        "nki-studio.addReference",
        tuple[()] | tuple[_URI, str],
        None,
        "Add a reference function template for a kernel and name it in its simulate spec.",
    ),
    Command(
        "setProfileBaseline",
        "nki-studio.setProfileBaseline",
        tuple[()],
        None,
        "Compare later profiles against the one in this editor.",
    ),
    Command(
        "tuneKernel",
        "nki-studio.tuneKernel",
        tuple[()] | tuple[_URI, str],
        None,
        "Tune a kernel: search its declared variants, results in the kernel panel.",
    ),
    Command("restartServer", "nki-studio.restartServer", tuple[()], None, "Restart the language server."),
    Command("showLogs", "nki-studio.showLogs", tuple[()], None, "Show the output channel."),
    Command(
        "createServerEnvironment",
        "nki-studio.createServerEnvironment",
        tuple[()],
        None,
        "Create the private environment the server runs in.",
    ),
    Command(
        "goToLine",
        "nki-studio.goToLine",
        tuple[_URI, Annotated[int, "0-based line"]],
        None,
        "Open a document on a line (the kernel panel's finding links).",
        contributed=False,
    ),
    Command(
        "calibrateFromProfile",
        "nki-studio.calibrateFromProfile",
        tuple[Annotated[str, "the loaded profile's path"]],
        None,
        "Calibrate the estimate from a measured profile (the kernel panel's button after a profile is loaded).",
        contributed=False,
    ),
    Command(
        "applyTuneWinner",
        "nki-studio.applyTuneWinner",
        tuple[_URI],
        None,
        "Write the last search's winner into the document (the kernel panel's button after Tune kernel…).",
        contributed=False,
    ),
)
