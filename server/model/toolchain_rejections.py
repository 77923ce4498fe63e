"""What the NKI toolchain rejects, declared once for the linter and the simulator.

Each :class:`Rejection` is one construct the compiler refuses (or deprecates) in a range of NKI versions: the lint
code that reports it, what the embedded simulator does with it (refuse with an error, or warn and run it anyway) and
the simulator's message. The simulator raises or warns with the entry (``sim.rejections``); the lint rule of the
entry's code reports it. ``tests/sim/test_toolchain_rejections.py`` lints and simulates every entry's example and
fails when either side does not report it, so the two cannot drift apart again.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from nki_studio.model.targets import LEGACY, NkiVersion

V03 = NkiVersion(0, 3)
V06 = NkiVersion(0, 6)
V07 = NkiVersion(0, 7)


class Behaviour(enum.Enum):
    """What the simulator does with a rejected construct."""

    ERROR = "error"  # refuses: the simulation fails with the entry's message
    WARNING = "warning"  # runs it and says so: the entry's message is a simulation warning


@dataclass(frozen=True)
class Rejection:
    """One construct the toolchain rejects in ``since`` .. ``until`` (inclusive; ``None``: every later version)."""

    code: str  # the lint rule that reports it
    since: NkiVersion
    until: NkiVersion | None
    simulation: Behaviour
    message: str  # the simulator's message (an API name may prefix it)
    example: str  # a kernel showing it: lint reports ``code``, the simulator ``simulation`` with ``message``
    inputs: str  # its arguments, in the ``# nki-studio: simulate`` grammar

    def applies(self, version: NkiVersion) -> bool:
        """Whether NKI ``version`` rejects the construct."""
        return self.since <= version and (self.until is None or version <= self.until)


_HEADER = "import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n"

HBM_OUTPUT = Rejection(
    code="NKI505",
    since=V03,
    until=None,
    simulation=Behaviour.ERROR,
    message="kernel output allocated in nl.hbm/private_hbm: outputs must be allocated in nl.shared_hbm (a compile "
    "error since NKI 0.3)",
    example=_HEADER + "@nki.jit\ndef kernel(a):\n"
    "    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.hbm)\n"
    "    nisa.dma_copy(dst=out, src=a)\n    return out\n",
    inputs="a=float32[128,512]",
)

JIT_PLATFORM_TARGET = Rejection(
    code="NKI207",
    since=V03,
    until=None,
    simulation=Behaviour.ERROR,
    message="nki.jit(platform_target=...) is an error since NKI 0.3; set NEURON_PLATFORM_TARGET_OVERRIDE instead "
    "(the simulator takes the target from --target or the environment)",
    example=_HEADER + '@nki.jit(platform_target="trn2")\ndef kernel(a):\n'
    "    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)\n"
    "    nisa.dma_copy(dst=out, src=a)\n    return out\n",
    inputs="a=float32[128,512]",
)

STRING_BUFFER = Rejection(
    code="NKI210",
    since=V03,
    until=None,
    simulation=Behaviour.ERROR,
    message="string buffer names are rejected since NKI 0.3.0",
    example=_HEADER + "@nki.jit\ndef kernel(x):\n"
    '    out = nl.ndarray(x.shape, dtype=x.dtype, buffer="shared_hbm")\n'
    "    nisa.dma_copy(dst=out, src=x)\n    return out\n",
    inputs="x=float32[128,512]",
)

# The bound is read from an int64 tile whose dtype is a module-level constant, the way library code names dtypes.
FORI_INT64_BOUND = Rejection(
    code="NKI129",
    since=V07,
    until=None,
    simulation=Behaviour.ERROR,
    message="loop bounds must be 32-bit (an int64 NkiScalar is not allowed)",
    example=_HEADER + "COUNT_DTYPE = nl.int64\n\n\n@nki.jit\ndef kernel(x, count):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    count_sb = nl.ndarray((1, 1), dtype=COUNT_DTYPE, buffer=nl.sbuf)\n"
    "    nisa.dma_copy(dst=count_sb, src=count)\n    n = nisa.scalar_load(count_sb)\n\n"
    "    def body(i):\n        nisa.dma_copy(dst=out, src=x)\n\n"
    "    nl.fori_loop(0, n, body)\n    return out\n",
    inputs="x=float32[128,512] count=int64[1,1]",
)

IF_ELSE_INT64_CONDITION = Rejection(
    code="NKI134",
    since=V07,
    until=None,
    simulation=Behaviour.ERROR,
    message="cond must be a 32-bit NkiScalar (an int64 NkiScalar is not allowed)",
    example=_HEADER + "@nki.jit\ndef kernel(x, flag):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    flag_sb = nl.ndarray((1, 1), dtype=nl.int64, buffer=nl.sbuf)\n"
    "    nisa.dma_copy(dst=flag_sb, src=flag)\n    enabled = nisa.scalar_load(flag_sb)\n\n"
    "    def copy():\n        nisa.dma_copy(dst=out, src=x)\n\n"
    "    nl.if_else(enabled, copy)\n    return out\n",
    inputs="x=float32[128,512] flag=int64[1,1]",
)

FORI_BODY_RETURNS = Rejection(
    code="NKI122",
    since=LEGACY,
    until=None,
    simulation=Behaviour.ERROR,
    message="the body must return None (loop state lives in SBUF/HBM)",
    example=_HEADER + "@nki.jit\ndef kernel(x):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n\n"
    "    def body(i):\n        nisa.dma_copy(dst=out, src=x)\n        return out\n\n"
    "    nl.fori_loop(0, 2, body)\n    return out\n",
    inputs="x=float32[128,512]",
)

LOOP_IN_NO_REORDER = Rejection(
    code="NKI121",
    since=LEGACY,
    until=None,
    simulation=Behaviour.ERROR,
    message="dynamic loops are not allowed inside nl.no_reorder()",
    example=_HEADER + "@nki.jit\ndef kernel(x):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n\n"
    "    def body(i):\n        nisa.dma_copy(dst=out, src=x)\n\n"
    "    with nl.no_reorder():\n        nl.fori_loop(0, 2, body)\n    return out\n",
    inputs="x=float32[128,512]",
)

LOOP_STEP = Rejection(
    code="NKI126",
    since=LEGACY,
    until=None,
    simulation=Behaviour.ERROR,
    message="step must be a positive compile-time int",
    example=_HEADER + "@nki.jit\ndef kernel(x):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n\n"
    "    def body(i):\n        nisa.dma_copy(dst=out, src=x)\n\n"
    "    nl.fori_loop(4, 0, body, -1)\n    return out\n",
    inputs="x=float32[128,512]",
)

_DYNAMIC_RANGE = (
    _HEADER + "@nki.jit\ndef kernel(x):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    for i in nl.dynamic_range(2):\n        nisa.dma_copy(dst=out, src=x)\n    return out\n"
)

DYNAMIC_RANGE_REMOVED = Rejection(
    code="NKI202",
    since=V07,
    until=None,
    simulation=Behaviour.ERROR,
    message="nl.dynamic_range was removed in NKI 0.7; use nl.fori_loop(lower, upper, body)",
    example=_DYNAMIC_RANGE,
    inputs="x=float32[128,512]",
)

DYNAMIC_RANGE_DEPRECATED = Rejection(
    code="NKI202",
    since=V06,
    until=V06,
    simulation=Behaviour.WARNING,
    message="nl.dynamic_range is deprecated in NKI 0.6; use nl.fori_loop",
    example=_DYNAMIC_RANGE,
    inputs="x=float32[128,512]",
)

WHILE_REGISTER_DEPRECATED = Rejection(
    code="NKI203",
    since=V06,
    until=V06,
    simulation=Behaviour.WARNING,
    message="`while <register>:` is deprecated in NKI 0.6 and removed in 0.7; use nl.while_loop",
    example=_HEADER + "@nki.jit\ndef kernel(x):\n"
    "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
    "    reg = nisa.register_alloc(1)\n    while reg:\n        nisa.dma_copy(dst=out, src=x)\n"
    "        nisa.register_move(reg, 0)\n    return out\n",
    inputs="x=float32[128,512]",
)

#: Every entry, for the agreement test and the docs.
REJECTIONS: tuple[Rejection, ...] = (
    HBM_OUTPUT,
    JIT_PLATFORM_TARGET,
    STRING_BUFFER,
    FORI_INT64_BOUND,
    IF_ELSE_INT64_CONDITION,
    FORI_BODY_RETURNS,
    LOOP_IN_NO_REORDER,
    LOOP_STEP,
    DYNAMIC_RANGE_REMOVED,
    DYNAMIC_RANGE_DEPRECATED,
    WHILE_REGISTER_DEPRECATED,
)
