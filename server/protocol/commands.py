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

from nki_studio.protocol.profile import MappingJson
from nki_studio.protocol.simulation import AnyResult


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


class Refusal(TypedDict):
    """The answer to a command that runs user code in an untrusted workspace."""

    status: Literal["refused"]
    message: str


class ParameterGuess(TypedDict):
    """What to pre-fill for one kernel parameter when the user is asked for its shape and dtype."""

    name: str
    value: Annotated[str, "dtype[shape] or a number as the spec comment writes it; '' when nothing is known"]
    source: Annotated[
        Literal["spec", "asserts", "last run", "example"],
        "where the guess comes from: the spec comment, the kernel's asserts, the last run, or an example to edit",
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
SERVER_COMMANDS = (
    SIMULATE,
    LOAD_PROFILE,
    CLEAR_PROFILE,
    PROFILE_REMOTE,
    SPEC_GUESSES,
    WRITE_SPEC,
    REFERENCE_TEMPLATE,
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
)
