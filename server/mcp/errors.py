"""Every failure a tool reports: a :class:`ToolFailure` becomes a structured tool error (``isError`` with
``{"error": {"kind", "message", ...}}``) and the server keeps answering."""

from __future__ import annotations

from typing import Any, Literal

Kind = Literal[
    "invalid_arguments",
    "not_found",
    "outside_roots",
    "not_a_file",
    "syntax_error",
    "no_kernel",
    "bad_spec",
    "refused",
    "kernel_error",
    "timeout",
    "memory_limit",
    "crashed",
    "unreadable_profile",
    "unknown_name",
    "remote_failed",
    "internal",
]


class ToolFailure(Exception):
    """A failure the tool anticipated: what kind, a message that says what to do, and details."""

    def __init__(self, kind: Kind, message: str, **details: Any) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.details = details

    def to_json(self) -> dict[str, Any]:
        """The ``error`` object of the structured result."""
        return {"kind": self.kind, "message": self.message, **self.details}
