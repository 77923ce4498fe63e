"""Every ``nki-studio.*`` setting, declared once: key, JSON type, default, allowed values, description, scope,
whether untrusted workspaces may set it, and who reads it.

``nki_studio.service.settings`` (server), ``nki_studio.remote.config`` (the ``remote.*`` keys) take their
defaults and allowed values from here; ``python -m nki_studio.settings.generate`` writes package.json
``contributes.configuration`` and ``restrictedConfigurations``, ``extension/src/settingsKeys.generated.ts``
and the settings table of ``docs/settings.md`` from it. This module imports nothing from the rest of the
package, so every layer may read it.

To add a setting, append one line to ``SETTINGS``, e.g.
``Setting("exampleFlag", "boolean", False, "What it switches.", "server"),``; read it (a server key: a field
and a ``_KEYS`` parser in ``nki_studio.service.settings``), then run ``bash scripts/generate.sh``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Literal

SECTION = "nki-studio"

Reader = Literal["server", "extension", "both"]


@dataclass(frozen=True)
class Setting:
    """One setting. ``key`` is what follows ``nki-studio.`` (``remote.host``); the server receives the
    ``remote.*`` keys nested as ``remote: {host: ...}`` and every other key at the top level."""

    key: str
    type: Literal["string", "boolean", "integer", "number", "array"]
    default: Any  # a JSON value, exactly as package.json declares it
    description: str  # Markdown; package.json gets ``markdownDescription`` when it uses any markup
    reader: Reader
    enum: tuple[str, ...] = ()
    enum_descriptions: tuple[str, ...] = ()
    minimum: float | None = None
    items: dict[str, Any] | None = None  # JSON schema of an array's items
    scope: str | None = None  # VS Code configuration scope; None: VS Code's default (window)
    restricted: bool = False  # workspace values ignored until the workspace is trusted
    restart: bool = False  # the extension restarts the server when it changes (not sent to the server)
    # False: a key of the server's protocol the client fills in (no VS Code setting, no key list entry)
    user_setting: bool = True
    docs_default: str | None = None  # the table's wording of the default when the JSON value needs words
    docs_note: str = ""  # settings table only: what LSP clients (not VS Code) may also send

    @property
    def remote(self) -> bool:
        """A remote-profiling key, sent to the server inside the ``remote`` object."""
        return self.key.startswith("remote.")

    @property
    def server_key(self) -> str:
        """The key as the server reads it (inside ``remote`` for the remote keys)."""
        return self.key.removeprefix("remote.")


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "interpreter",
        "string",
        "",
        "Python interpreter (3.10 or newer) that runs the NKI Studio language server. Empty: the server's "
        "private environment when **NKI: Create Server Environment** made one, else the Python extension's "
        "selected interpreter when that extension is installed, else `python3` on `PATH`. The server's own "
        "dependencies ship inside the extension (the compiled ones for one CPython version per platform; for "
        "another, the command installs them).",
        "extension",
        scope="machine-overridable",
        restricted=True,
        restart=True,
    ),
    Setting(
        "target",
        "string",
        "auto",
        "Target Trainium generation for limits and cost estimates. `auto`: `[tool.nki-studio]` in "
        "`pyproject.toml`, else the server's default.",
        "server",
        enum=("auto", "trn1", "trn2", "trn3"),
        docs_default="project config, else `trn2`",
        docs_note="Also accepted: `gen2`…`gen4`, `inf2`.",
    ),
    Setting(
        "nkiVersion",
        "string",
        "auto",
        "NKI version the kernels are written for (e.g. `0.6`, `0.7`). `auto`: `pyproject.toml`, else the "
        "installed `nki`, else the current version; a file whose imports are all legacy `neuronxcc.nki` ones is "
        "legacy code unless `pyproject.toml` or this setting names a version.",
        "server",
        docs_default="project config, else the file's legacy imports, else installed `nki`, else newest",
        docs_note="Also accepted: `legacy` (the `neuronxcc.nki` API).",
    ),
    Setting(
        "calibrationFile",
        "string",
        "",
        "The calibration of the estimate from your own profiles (`nki-studio calibrate`). Empty: `file` of "
        "`[tool.nki-studio.calibration]` in `pyproject.toml`, else `.nki-studio/calibration.json` next to "
        "`pyproject.toml` (or the kernel's folder) when it exists. A relative path is taken from that folder. "
        "`off`: always the built-in model.",
        "server",
        docs_default="project's `.nki-studio/calibration.json` when it exists",
    ),
    Setting("lintEnabled", "boolean", True, "Lint NKI kernels while typing.", "server"),
    Setting(
        "lintDebounceMs",
        "integer",
        150,
        "Delay after the last keystroke before linting (milliseconds). Opening or saving a file lints at once.",
        "server",
        minimum=0,
    ),
    Setting(
        "simulateOnSave",
        "boolean",
        True,
        "Simulate kernels that have a simulate spec when their file is saved (trusted workspaces only).",
        "both",
        restricted=True,
    ),
    Setting(
        "simulationTimeout",
        "number",
        60,
        "Wall-clock limit for one simulation (seconds).",
        "server",
        minimum=1,
    ),
    Setting(
        "simulationMemoryLimitMb",
        "integer",
        4096,
        "Memory limit of the simulation worker process (MiB).",
        "server",
        minimum=64,
    ),
    Setting(
        "heatmapMetric",
        "string",
        "auto",
        "Metric the line heatmap is coloured by (auto: the kernel's bottleneck's, so a DMA-bound kernel's "
        "heat is on the lines that issue its DMA).",
        "both",
        enum=("auto", "time", "busy", "instr", "wait", "dma", "dma_time"),
        enum_descriptions=(
            "The kernel's bottleneck's metric: DMA time when DMA-bound, else time",
            "Busy time plus the DMA the line issues",
            "Busy time of the line (interval union over engines)",
            "Instruction count",
            "Time spent waiting on semaphores",
            "DMA bytes attributed to the line",
            "Time of the DMA transfers the line issues",
        ),
    ),
    Setting(
        "heatmap.style",
        "string",
        "compact",
        "How the line heatmap is drawn besides its line backgrounds.",
        "extension",
        enum=("compact", "bars", "background"),
        enum_descriptions=(
            "A gutter mark on every line with heat, and the value after the end of the hottest lines: no "
            "columns taken from the code",
            "A fixed-width bar with the value before every hot line (cold lines indented to match)",
            "Line backgrounds only",
        ),
    ),
    Setting(
        "pathMappings",
        "array",
        [],
        "Map source paths recorded in profiles (e.g. `/home/ubuntu/kernels`) to workspace folders. Tried "
        "before suffix and basename matching.",
        "server",
        items={
            "type": "object",
            "required": ["remote", "local"],
            "properties": {
                "remote": {"type": "string", "description": "Path prefix as recorded on the profiling host."},
                "local": {"type": "string", "description": "The matching workspace path."},
            },
        },
        docs_default="none",
        docs_note='Also accepted: an object `{"/home/ubuntu/src": "/work/src"}`.',
    ),
    Setting(
        "inlayHints",
        "boolean",
        False,
        "Show per-line time and share as inlay hints (labelled estimated when they come from the cost model).",
        "server",
    ),
    Setting(
        "perfInvestigations",
        "boolean",
        True,
        "Show the performance investigations of a loaded profile or of a simulation's estimated profile (DMA "
        "efficiency, redundant DMA, Tensor-engine tile sizes and transposes; codes NKI7xx, source `nki-perf`) as "
        "diagnostics on the lines they concern, with the severity `nki-studio.perfSeverity`.",
        "server",
    ),
    Setting(
        "perfSeverity",
        "string",
        "hint",
        "Severity of the performance investigations (`nki-perf`, codes NKI7xx). `hint` (the default) marks the "
        "line without an entry in the Problems panel; `information` or `warning` lists them there. "
        "`severity` in `[tool.nki-studio]` still overrides a code.",
        "server",
        enum=("hint", "information", "warning"),
        enum_descriptions=(
            "dotted underline only, not in the Problems panel",
            "blue squiggle and a Problems entry",
            "yellow squiggle and a Problems entry",
        ),
    ),
    Setting(
        "ruleDocsBaseUrl",
        "string",
        "",
        "Base URL of the rule documentation linked from diagnostics (`<url>/NKI101.md`). Empty: the pages "
        "shipped with the server.",
        "server",
        docs_default="local `docs/rules/` files",
    ),
    Setting(
        "profileIgnoreSchemaVersion",
        "boolean",
        False,
        "Load profiles whose schema major version this release does not know, reading every column it still "
        "recognises (like `nki-studio profile report --ignore-schema-version`).",
        "server",
    ),
    Setting(
        "trustedWorkspace",
        "boolean",
        False,
        "The client declares the workspace trusted; nothing runs user code otherwise. The VS Code extension "
        "derives it from VS Code's workspace trust, not from a user setting.",
        "server",
        user_setting=False,
    ),
    Setting(
        "logLevel",
        "string",
        "info",
        "Server log level. The VS Code extension sends the level chosen with *Set Log Level* on the "
        "*NKI Studio* output channel.",
        "server",
        enum=("error", "warning", "info", "debug"),
        user_setting=False,
    ),
    Setting(
        "fastStart",
        "boolean",
        True,
        "Answer the editor and publish the first diagnostics before the language server has fully loaded, "
        "from what an earlier start remembered (POSIX). Turn off to have the full server answer everything "
        "(also: environment variable `NKI_STUDIO_FASTPATH=0`). Applies from the next start.",
        "server",
    ),
    Setting(
        "mcp.remoteProfiling",
        "boolean",
        False,
        "Let coding agents profile on the remote Trn2 host (`remote.host`) through the MCP server's "
        "`profile_remote` tool. Off: the tool is not offered. The extension passes it to `nki-studio mcp` "
        "(`--enable-remote-profiling`); other MCP clients set that option or this key in `--settings`.",
        "extension",
        restricted=True,
    ),
    Setting(
        "remote.host",
        "string",
        "",
        "Trn2 host for **Profile on Remote Trn2**: an `~/.ssh/config` alias or `user@host[:port]`.",
        "both",
        restricted=True,
    ),
    Setting(
        "remote.workDir",
        "string",
        "~/nki-studio-remote",
        "Working directory on the remote host.",
        "server",
        restricted=True,
    ),
    Setting(
        "remote.envActivation",
        "string",
        "",
        "Command that activates the Neuron environment on the host, e.g. "
        "`source /opt/aws_neuronx_venv_pytorch/bin/activate`.",
        "server",
        restricted=True,
    ),
    Setting(
        "remote.neuronCore",
        "integer",
        0,
        "NeuronCore index (NEURON_RT_VISIBLE_CORES) used for profiling.",
        "server",
        minimum=0,
    ),
    Setting(
        "remote.sshOptions",
        "array",
        [],
        'Extra options passed to ssh/scp, one argument per item (e.g. `["-F", "/path/config"]`).',
        "server",
        items={"type": "string"},
        restricted=True,
    ),
    Setting(
        "remote.keepFiles",
        "boolean",
        False,
        "Keep the uploaded files and raw capture on the remote host.",
        "server",
    ),
    Setting(
        "remote.timeout",
        "number",
        900,
        "Wall-clock limit of each remote profiling stage: compile, capture, view (seconds).",
        "server",
        minimum=10,
    ),
    Setting(
        "remote.sshConfig",
        "string",
        "",
        "Optional ssh config file passed to ssh/scp with -F (default: your ~/.ssh/config).",
        "server",
        scope="machine-overridable",
        restricted=True,
    ),
    Setting(
        "remote.cacheDir",
        "string",
        "",
        "Local folder for downloaded profiles (default: the user cache folder).",
        "server",
        scope="machine-overridable",
        docs_default="`~/.cache/nki-studio/remote-profiles`",
    ),
    Setting(
        "remote.transfer",
        "string",
        "auto",
        "How files are copied to and from the host.",
        "server",
        enum=("auto", "scp", "rsync"),
        enum_descriptions=(
            "rsync when both ends have it, else scp",
            "Always scp",
            "Always rsync",
        ),
    ),
)

BY_KEY: dict[str, Setting] = {s.key: s for s in SETTINGS}


def setting(key: str) -> Setting:
    """The declaration of ``key`` (``remote.host``); KeyError names an undeclared key."""
    return BY_KEY[key]


def default(key: str) -> Any:
    """A fresh copy of the declared default of ``key`` as a JSON value (KeyError for an undeclared key)."""
    return copy.deepcopy(BY_KEY[key].default)  # a copy: callers may not change the declaration's lists
