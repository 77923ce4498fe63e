"""What the API and builtin semantics ask of the expression evaluator: its call frames and its interface.

``nki_semantics`` and ``builtin_values`` evaluate NKI API and Python builtin calls for
``evaluation.ExpressionEvaluator``, which imports them; they see the evaluator through :class:`Evaluator`, so the
interpreter's modules import one way, without a cycle.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Protocol

from nki_studio.core.findings import Span
from nki_studio.model.module_info import ModuleScope
from nki_studio.model.targets import Target
from nki_studio.model.tensors import CallChain, KernelFacts, LoopFrame
from nki_studio.model.values import FunctionVal, Value


@dataclass
class Frame:
    """One function activation: local variables and the module it runs in."""

    env: dict[str, Value]
    module: ModuleScope
    function: str
    returns: list[Value] = field(default_factory=list)
    # variable -> (tensor variable, dim index, rank or None) for ``P, F = x.shape`` / ``N = x.shape[0]`` of a
    # tensor whose shape is unknown, so ``assert P == 128`` can refine ``x`` too
    dim_origin: dict[str, tuple[str, int, int | None]] = field(default_factory=dict)


class Evaluator(Protocol):
    """The evaluator as the semantics modules use it (implemented by ``evaluation.ExpressionEvaluator``)."""

    target: Target
    facts: KernelFacts
    seq: int
    loops: list[LoopFrame]
    branches: list[tuple[int, int]]
    masks: list[Value]  # the legacy mask= of each call whose arguments are being evaluated, innermost last
    frame: Frame | None

    @property
    def module(self) -> ModuleScope:
        """The module of the running frame."""

    @property
    def call_chain(self) -> CallChain:
        """Helper call sites leading to the current frame, outermost first."""

    def next_seq(self) -> int:
        """A new event number of the linear trace."""

    def span(self, node: ast.AST) -> Span:
        """1-based code-point span of a node in the current module."""

    def context_depth(self) -> tuple[int, int]:
        """(summarised-loop depth, unknown-branch depth) of the code running now."""

    def uncertain_write(self, created: tuple[int, int]) -> str | None:
        """ "loop"/"branch" when a write into a container made at ``created`` may not hold, else None."""

    def use(self, value: Value) -> None:
        """Record that a tensor (or the tensors inside a tuple/list) is used now, for liveness."""

    def new_frame(self, module: ModuleScope, function: str) -> Frame:
        """An empty frame of ``function`` in ``module``."""

    def eval(self, node: ast.expr | None) -> Value:
        """The value of an expression (None: the constant None)."""

    def truth(self, value: Value) -> bool | None:
        """Python truthiness of a value when known."""

    def call_function(
        self, fn: FunctionVal, args: list[Value], kwargs: dict[str, Value], node: ast.Call
    ) -> Value:
        """Inline a user function at this call site with the caller's values."""
