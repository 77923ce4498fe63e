"""``nki-studio migrate --json``, the MCP ``migrate`` tool and the language server's "Migrate kernel to NKI 0.7"
action: one migration and its equivalence proof."""

from __future__ import annotations

from typing import Annotated, Literal, TypedDict

MigrationStatus = Literal[
    "proven",  # migrated, and every kernel with inputs gave the same outputs before and after
    "unchanged",  # nothing to migrate: the proof is trivially equal
    "proof_failed",  # migrated, but an output differs or a run failed
    "not_proven",  # migrated, but no kernel has inputs to run (no spec, no asserts, no --inputs)
    "manual_steps",  # constructs are left that need migrating by hand (listed); kernels without one are proven
    "not_migratable",  # unparsable, or half migrated (both APIs): file untouched
    "refused",  # untrusted workspace: the proof runs the kernel's code
]


class MigrationChange(TypedDict):
    """One rewrite the migration made."""

    line: Annotated[int, "1-based line of the original file"]
    construct: str
    detail: str


class ManualStepJson(TypedDict):
    """One construct to migrate by hand, with the recipe."""

    line: Annotated[int, "1-based line of the original file"]
    construct: str
    recipe: str


class KernelProof(TypedDict):
    """The proof for one kernel: both versions simulated on the same seeded inputs."""

    kernel: str
    inputs: Annotated[int, "input sets both versions ran on"]
    equivalent: bool
    exact: Annotated[bool, "every output bit-identical (False: equal within the dtype's rounding)"]
    message: str
    ran: Annotated[
        list[str],
        "the file's functions that ran in every run of both versions: one of their lines issued instructions or "
        "made a call that did",
    ]
    through: Annotated[
        list[str],
        "empty: the kernel's own inputs; else it has none and was proven through these callers' proofs (each "
        "held and ran it)",
    ]


class MigrationResult(TypedDict):
    """A file's migration and its proof."""

    path: str
    status: MigrationStatus
    message: str
    source_version: Annotated[str, "legacy, current (NKI 0.2-0.6) or unknown"]
    changes: list[MigrationChange]
    manual: list[ManualStepJson]
    proofs: list[KernelProof]
    diff: Annotated[str, "unified diff of the original and the migrated file (empty: unchanged)"]
    migrated: Annotated[str, "the migrated text"]
    written: Annotated[bool, "the migrated text was written to the file"]
