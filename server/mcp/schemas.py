"""The JSON Schemas of every tool's input and structured output, and the tools' descriptions.

Input schemas are strict (unknown keys refused) and checked before a tool runs; output schemas name the
top-level keys an agent can rely on and leave nested objects open, so a field added later breaks no client.
"""

from __future__ import annotations

from typing import Any

_TARGET = {
    "type": "string",
    "description": "Trainium generation: trn1, trn2 or trn3 (default: [tool.nki-studio] in pyproject.toml, else trn2)",
}
_VERSION = {
    "type": "string",
    "description": "NKI version the kernel is written for, e.g. 0.6 or 0.7 (default: pyproject, else inferred)",
}
_FILE = {"type": "string", "description": "kernel file, absolute or relative to the first workspace root"}
_KERNEL_FIELDS: dict[str, Any] = {
    "file": _FILE,
    "kernel": {"type": "string", "description": "@nki.jit function name (default: the first with a spec)"},
    "inputs": {
        "type": "string",
        "description": "argument spec, e.g. 'x=bfloat16[128,512] seed=3' (the '# nki-studio: simulate' comment "
        "grammar); default: the spec comment above the kernel, pyproject, or inferred shapes",
    },
    "reference": {
        "type": "string",
        "description": "NumPy reference function: a name in the file, or module:function",
    },
    "target": _TARGET,
    "nki_version": _VERSION,
    "timeout_s": {
        "type": "number",
        "exclusiveMinimum": 0,
        "description": "wall-clock limit in seconds (capped by the server's simulationTimeout)",
    },
}

# Unsaved text instead of a file (an agent's draft): simulate and estimate run it from a private staged copy.
_SOURCE_FIELDS: dict[str, Any] = {
    "source": {
        "type": "string",
        "description": "kernel source text to run instead of a saved file (lines in results are this text's)",
    },
    "path": {
        "type": "string",
        "description": "where the source text would live, inside a root (config, helper modules, result "
        "paths); need not exist; default untitled.py in the first root",
    },
}
_FILE_OR_SOURCE = [{"required": ["file"]}, {"required": ["source"]}]


def _obj(properties: dict[str, Any], required: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
        **extra,
    }


def _out(*keys: str, **types: Any) -> dict[str, Any]:
    """An open output schema: ``keys`` required, ``types`` giving some of their schemas."""
    return {"type": "object", "properties": {k: types.get(k, {}) for k in keys}, "required": list(keys)}


_SIDE = {
    "type": "object",
    "description": "a measured profile {profile: PATH} or a kernel to estimate {file, kernel?, inputs?, ...}",
    "properties": {
        "profile": {"type": "string", "description": "profile path"},
        **_KERNEL_FIELDS,
        **_SOURCE_FIELDS,
    },
    "additionalProperties": False,
    "anyOf": [{"required": ["profile"]}, *_FILE_OR_SOURCE],
}
_VIEW = ("label", "summary", "bounds", "investigations", "lines", "notes")
_STR, _BOOL, _ARR, _OBJ = {"type": "string"}, {"type": "boolean"}, {"type": "array"}, {"type": "object"}

TOOLS: dict[str, dict[str, Any]] = {
    "lint": {
        "title": "Lint an NKI kernel",
        "description": "Check an NKI kernel file (or unsaved source text) against the NKI Python subset, removed "
        "and deprecated API, partition and SBUF/PSUM limits and ISA operand rules. Returns findings with line, "
        "column, code, message and, when available, the fix as text edits. Runs no code.",
        "input": _obj(
            {
                "file": _FILE,
                "source": {"type": "string", "description": "source text to lint instead of a file"},
                "path": {"type": "string", "description": "where the source text would live (config lookup)"},
                "target": _TARGET,
                "nki_version": _VERSION,
            },
            anyOf=_FILE_OR_SOURCE,
        ),
        "output": _out("path", "target", "nkiVersion", "counts", "fixable", "findings", findings=_ARR),
        "read_only": True,
    },
    "simulate": {
        "title": "Simulate an NKI kernel and check it",
        "description": "Run the kernel (a file, or unsaved source text) on NumPy in a sandboxed worker (time "
        "and memory limits) and check its "
        "outputs against the NumPy reference: shape/dtype, finite, inputs unchanged, allclose, max/mean abs "
        "error, cosine. Returns the oracle verdict with every metric (failedMetrics names the failing ones), "
        "an output summary, SBUF/PSUM peaks and errors located on kernel lines. A kernel that raises, times "
        "out or exceeds memory is a tool error carrying the same result.",
        "input": _obj({**_KERNEL_FIELDS, **_SOURCE_FIELDS}, anyOf=_FILE_OR_SOURCE),
        "output": _out(
            "status",
            "passed",
            "message",
            "kernel",
            "path",
            "failedMetrics",
            "outputs",
            "peak",
            "findings",
            passed=_BOOL,
            failedMetrics=_ARR,
            findings=_ARR,
        ),
        "read_only": True,
    },
    "estimate": {
        "title": "Estimate an NKI kernel's timeline",
        "description": "Simulate the kernel (as simulate) and schedule its instruction trace on the engine "
        "queues and DMA engines of the target after their data dependencies: an ESTIMATED profile, not a "
        "measurement. Returns the estimated latency, engine busy times, DMA/compute overlap, bounds, the "
        "line-level investigations and the hottest kernel lines (the numbers of `nki-studio simulate --json`'s "
        "estimate section), plus the simulation's verdict and the estimate's likely range (range: lowNs, "
        "highNs, from the spread of measured/estimated over N public hardware measurements of the same "
        "generation and kernel class; null when the generation has no calibration; rangeText says it in words) "
        "and calibration: the user's own calibration (the calibrate tool) the estimate priced with, or why it "
        "was ignored (null: none). Takes a file or unsaved source text.",
        "input": _obj({**_KERNEL_FIELDS, **_SOURCE_FIELDS}, anyOf=_FILE_OR_SOURCE),
        "output": _out(
            *_VIEW,
            "kernel",
            "path",
            "target",
            "range",
            "rangeText",
            "calibration",
            "simulation",
            label={"const": "estimated"},
            calibration={"type": ["object", "null"]},
            range={"type": ["object", "null"]},
            rangeText=_STR,
        ),
        "read_only": True,
    },
    "analyze_profile": {
        "title": "Analyze a Neuron Explorer profile",
        "description": "Read a measured device profile (Parquet output directory, legacy JSON, summary-json, CSV "
        "export directory or .pftrace) inside the workspace and return the kernel summary, bounds and the "
        "hottest source lines (paths mapped onto the workspace). Runs no code.",
        "input": _obj(
            {"profile": {"type": "string", "description": "profile file or directory"}}, ("profile",)
        ),
        "output": _out(*_VIEW, "path", "mapping", "problem"),
        "read_only": True,
    },
    "compare": {
        "title": "Compare two profiles or estimates",
        "description": "Put two profiles or estimates side by side (e.g. a kernel before and after an "
        "optimisation): summaries and bounds of each, deltas of the totals (b - a), per-engine busy times and "
        "per-line deltas, and which is faster. Each side is a measured profile or a kernel to estimate. A "
        "source line is followed across the edit when both versions' texts are known (the kernel simulated "
        "for an estimate, the source snapshot stored with a profile): lines give line_a -> line_b, and lines "
        "only in a (removed_lines) or only in b (added_lines) are listed with their time; otherwise "
        "lines_matched_by says the lines were matched by number. When one side is a measured profile and the other an "
        "estimate, measured_vs_estimated gives the kernel latency, each engine's busy time and the hottest lines "
        "measured, estimated and their ratio (estimated / measured).",
        "input": _obj({"a": _SIDE, "b": _SIDE}, ("a", "b")),
        "output": _out(
            "a",
            "b",
            "totals",
            "engines",
            "lines",
            "removed_lines",
            "added_lines",
            "lines_matched_by",
            "faster",
            "speedup",
            faster={"enum": ["a", "b", "same"]},
            lines_matched_by=_STR,
        ),
        "read_only": True,
    },
    "migrate": {
        "title": "Migrate a kernel file to NKI 0.7, with an equivalence proof",
        "description": "Rewrite a legacy neuronxcc.nki (or NKI 0.5/0.6) file to NKI 0.7 (imports, entry points, "
        "index tiles to slices, tile operators to nl.* calls, iterators to range), then simulate the original "
        "with its version's semantics and the migrated file with 0.7's on the same seeded inputs and compare "
        "every output. Returns the diff, the changes, the constructs left to migrate by hand (line and recipe), "
        "the proof per kernel and the status (proven, unchanged, proof_failed, not_proven, manual_steps). "
        "write=true writes the file once proven (force=true: even when not). Runs the kernel: refused when the "
        "server is untrusted.",
        "input": _obj(
            {
                "file": _FILE,
                "inputs": _KERNEL_FIELDS["inputs"],
                "write": {"type": "boolean", "description": "write the migrated file once the proof holds"},
                "force": {"type": "boolean", "description": "with write: write even when not proven"},
            },
            ("file",),
        ),
        "output": _out(
            "path", "status", "message", "changes", "manual", "proofs", "diff", "written", written=_BOOL
        ),
        "read_only": False,
    },
    "explain": {
        "title": "Explain a rule code or NKI API",
        "description": "The documentation page of a diagnostic code (e.g. NKI301, NKI620), or the signature and "
        "documentation of an NKI API name (e.g. nisa.nc_matmul, nl.load, nki.language.NkiTensor.reshape): "
        "engine, buffers, limits and version notes; legacy neuronxcc.nki names (or nki_version legacy) get the "
        "legacy API and what nki-studio migrate does with them.",
        "input": _obj(
            {
                "name": {"type": "string", "description": "rule code or NKI API name"},
                "nki_version": {
                    "type": "string",
                    "description": "whose API to document: legacy (neuronxcc.nki, the file's imports say so) or "
                    "0.x; default the current API (a neuronxcc.nki name is legacy)",
                },
            },
            ("name",),
        ),
        "output": _out("kind", "name", "markdown", kind={"enum": ["rule", "api"]}, markdown=_STR),
        "read_only": True,
    },
    "calibrate": {
        "title": "Calibrate the estimate from measured profiles",
        "description": "Fit the estimate's per-target costs (per engine, per opcode and dtype, DMA by descriptor "
        "size) to measured Neuron Explorer profiles of kernels in the workspace: each profile's kernel is "
        "simulated, its measured instructions matched to the simulated ones and the costs fitted; the result "
        "is stored in the project's calibration file (.nki-studio/calibration.json, or the configured one), "
        "which every later estimate uses and names with its held-out error. Profiles that cannot be used "
        "are listed in skipped with the reason. Simulates the kernels: takes seconds per profile.",
        "input": _obj(
            {
                "profiles": {
                    "type": "array",
                    "items": {"type": "string"},
                    "minItems": 1,
                    "description": "measured profiles (folders or files), inside the roots",
                },
                "kernel": {
                    "type": "string",
                    "description": "FILE::KERNEL every profile is of (default: the kernel each profile's "
                    "source lines fall in)",
                },
                "target": _TARGET,
            },
            ("profiles",),
        ),
        "output": _out("file", "target", "used", "skipped", "table", "message"),
        "read_only": False,
    },
    "tune": {
        "title": "Tune an NKI kernel's tile sizes and buffer counts",
        "description": "Search the kernel's variants: module-level constants and keyword defaults with candidate "
        "values from `space` (e.g. 'TILE_N=128,256,512 BUFS=1..4'; default: the '# nki-studio: tune' comment "
        "above the kernel or [tool.nki-studio.tune]) and `constraints` (Python expressions over them). Each "
        "candidate is pruned by lint or simulated against the reference in the sandboxed worker; failing ones "
        "are never ranked; passing ones are ranked by the ESTIMATED time (not measured) with its likely range. "
        "Returns the ranked table as text, every candidate, the winner and the unified diff that applies its "
        "values (the kernel file is not changed; outcomes are cached under .nki-studio/tune-cache/ of the project). "
        "Within `budget` points (TPE beyond it); takes seconds per candidate. With `confirm_remote` K (only "
        "where profile_remote is offered) the top K ranked candidates are then profiled on the Trn2 host: "
        "`confirmation` holds each one's MEASURED time next to its estimate, whether the measured order agrees "
        "with the ranking, the kept profiles and the `nki-studio calibrate` command that fits the estimate to them.",
        "input": _obj(
            {
                "file": _KERNEL_FIELDS["file"],
                "kernel": _KERNEL_FIELDS["kernel"],
                "target": _TARGET,
                "nki_version": _VERSION,
                "space": {
                    "type": "string",
                    "description": "NAME=values ... [if EXPR; EXPR], e.g. 'TILE_N=256,512 BUFS=1..3'",
                },
                "constraints": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "e.g. 'TILE_N * BUFS <= 2048'",
                },
                "budget": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 200,
                    "description": "points to try at most (default 16)",
                },
                "confirm_remote": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 10,
                    "description": "profile the top K ranked candidates on the Trn2 host and report measured "
                    "vs estimated time (only where profile_remote is offered; minutes per candidate)",
                },
            },
            ("file",),
        ),
        "output": _out("kernel", "path", "candidates", "winner", "diff", "table", diff=_STR, table=_STR),
        "read_only": False,
    },
    "profile_remote": {
        "title": "Profile a kernel on the remote Trainium host",
        "description": "Upload the kernel to the configured Trn2 host, compile it, capture a device profile "
        "with neuron-explorer, download it and return the measured summary, bounds and hottest lines. Offered "
        "only because the user configured a host and enabled remote profiling; takes minutes.",
        "input": _obj({k: _KERNEL_FIELDS[k] for k in ("file", "kernel", "inputs", "target")}, ("file",)),
        "output": _out(*_VIEW, "kernel", "host", "downloaded", "log"),
        "read_only": False,
    },
}

ERROR_SCHEMA = _out("error", error=_out("kind", "message", kind=_STR, message=_STR))
