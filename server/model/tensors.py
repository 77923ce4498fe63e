"""Facts the interpreter records about one kernel: allocations, API calls with resolved operands, views.

These are the inputs of the numeric lint rules (partition size, SBUF/PSUM capacity, ISA operand rules) and
of hover / simulate-spec inference. Plain data, no analysis logic beyond liveness bookkeeping.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nki_studio.core.findings import Span
from nki_studio.model.values import Allocation, TensorVal, Value

CallChain = tuple[tuple[str, Span], ...]


@dataclass(eq=False)
class LoopFrame:
    """A loop the interpreter did not unroll: its body was run once for a representative iteration."""

    trips: int | None  # iterations when known
    end_seq: int = -1  # event number when the loop finished


@dataclass(frozen=True)
class ApiCall:
    """One ``nki.isa`` / ``nki.language`` call with its operands matched to parameter names."""

    api: str  # short name, e.g. "nc_matmul"
    namespace: str  # "isa" or "language"
    span: Span
    path: str
    operands: dict[str, Value]
    call_chain: CallChain
    seq: int


@dataclass(frozen=True)
class ViewEvent:
    """An on-chip tensor value (allocation, view or op result) whose partition dim was computed."""

    tensor: TensorVal
    span: Span
    path: str
    call_chain: CallChain
    what: str  # "allocation", "view", "result of nl.load" ...


@dataclass
class KernelFacts:
    """Everything recorded while interpreting one kernel (or one helper analysed on its own)."""

    name: str
    path: str
    span: Span  # the function name
    is_kernel: bool
    legacy: bool  # uses the legacy ``neuronxcc.nki`` namespace
    allocations: list[Allocation] = field(default_factory=list)
    calls: list[ApiCall] = field(default_factory=list)
    views: list[ViewEvent] = field(default_factory=list)
    returns: list[Value] = field(default_factory=list)
    params: dict[str, Value] = field(default_factory=dict)
    complete: bool = True  # False when the step budget ran out and the rest was skipped

    def finish_liveness(self) -> None:
        """Set each allocation's ``repeat``: instances alive together because they outlive a loop iteration."""
        for alloc in self.allocations:
            repeat = 1
            for frame in alloc.loops:
                if frame.trips is not None and alloc.last_use >= frame.end_seq >= 0:
                    repeat *= max(frame.trips, 1)
            alloc.repeat = repeat
