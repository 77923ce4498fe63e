"""What a migration pass finds: the edits it makes, what it changed, and what is left to do by hand."""

from __future__ import annotations

from dataclasses import dataclass, field

from nki_studio.core.findings import TextEdit

ROUNDS = 4  # how often the rewrite runs each pass at most (nested constructs come out one level a round)


@dataclass(frozen=True)
class Change:
    """One rewrite made: 1-based line of the original file, the construct, what it became."""

    line: int
    construct: str
    detail: str


@dataclass(frozen=True)
class ManualStep:
    """One construct the rewrite cannot migrate: its line in the original file and the recipe to do it by hand."""

    line: int
    construct: str
    recipe: str


@dataclass
class PassResult:
    """The outcome of one pass over one version of the text."""

    edits: list[TextEdit] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    manual: list[ManualStep] = field(default_factory=list)

    def change(self, edit: TextEdit, line: int, construct: str, detail: str) -> None:
        """Record an edit and what it does."""
        self.edits.append(edit)
        self.changes.append(Change(line, construct, detail))
