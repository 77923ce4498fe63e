"""The structured simulation result, declared once: what a worker returns (``nki_studio.verify.job``), what
``nki/simulationResult`` sends (plus ``uri``), what the ``nki-studio.simulate`` command answers and what
``nki-studio simulate --json`` prints (one result, or a list when several kernels ran).

The TypedDicts are the JSON shape itself (camelCase keys, as sent). ``nki_studio.protocol.schema`` turns
them into ``simulation.schema.json`` and the extension's ``protocol.generated.ts``; a field's description is
the string in its ``Annotated[...]``. Optional keys live in a ``total=False`` subclass (no ``NotRequired``: Python
3.10 has none).
"""

from __future__ import annotations

from typing import Annotated, Literal, TypedDict, final

from nki_studio.protocol.analysis import BoundsJson, InvestigationJson
from nki_studio.protocol.calibration import CalibrationNote

Status = Literal[
    "passed", "no_reference", "failed", "error", "timeout", "memory_limit", "cancelled", "crashed", "refused"
]
# The kernel ran to the oracle: passed (matches the reference), no_reference (ran, its outputs finite and its
# inputs unchanged, but the spec names no reference to compare with: nothing was verified), failed.
RAN: tuple[Status, ...] = ("passed", "no_reference", "failed")


class ErrorInfo(TypedDict):
    """Why and where the kernel stopped (or, as ``uninitializedRead``, where it first read never-written memory)."""

    message: str
    kind: Annotated[str, "exception class name"]
    file: Annotated[str, "user file of the failing line ('' when unknown)"]
    line: Annotated[int, "1-based failing line (0 when unknown)"]
    stack: Annotated[list[str], "helper call chain as 'path:line:function', outermost first"]


class Spec(TypedDict):
    """The simulate spec that ran (``SimSpec.to_json``)."""

    kernel: str
    args: Annotated[list[list[str]], "[name, value] pairs in call order, values as in the spec comment"]
    reference: str | None
    inputs: Annotated[str | None, "function that builds the arguments, instead of args"]
    seed: int
    lnc: int
    ranks: int
    atol: float | None
    rtol: float | None
    origin: Annotated[list[str], "where the spec came from, e.g. comment, pyproject, inferred"]


# ``import`` is a keyword, hence the functional form. Seconds, except ``warm``.
Timings = TypedDict(
    "Timings",
    {
        "warm": Annotated[bool, "the worker was started before the job"],
        "wait": float,
        "processStart": float,
        "import": float,
        "inputs": float,
        "simulation": float,
        "reference": float,
        "oracle": float,
        "strictRerun": float,
        "estimate": Annotated[float, "scheduling the trace into the estimated timeline"],
        "total": float,
    },
    total=False,
)
Timings.__doc__ = (
    "Wall-clock seconds per stage (only the stages that ran); ``warm`` says whether the worker was."
)

MetricValue = bool | int | float | str | list[int]


class OracleMetric(TypedDict):
    """One check of an output (or input): its value, the threshold it was held to and the verdict."""

    name: str
    value: MetricValue
    threshold: str
    passed: Annotated[bool | None, "null: not applicable"]


class OracleOutput(TypedDict):
    """One kernel output: summary, metrics against the reference and notes."""

    name: str
    shape: list[int]
    dtype: str
    nan_count: int
    inf_count: int
    metrics: list[OracleMetric]
    notes: list[str]
    passed: bool


class Oracle(TypedDict):
    """The oracle's verdict over every output and input."""

    hasReference: bool
    passed: bool
    problems: list[str]
    inputs: Annotated[list[OracleMetric], "one 'unchanged:<name>' check per array input"]
    outputs: list[OracleOutput]


class LiveAllocation(TypedDict):
    """An allocation live at the peak of its region."""

    name: Annotated[str, "the allocation's name= ('' when not given)"]
    shape: list[int]
    dtype: str
    bytesPerPartition: int
    file: str
    line: int


class RegionPeak(TypedDict):
    """Peak use of one on-chip region, in bytes per partition."""

    capacityBytes: int
    peakBytes: int
    live: Annotated[list[LiveAllocation], "what was live at the peak, in allocation order"]


Peak = Annotated[dict[str, RegionPeak], "per on-chip region: sbuf, psum"]


class Roofline(TypedDict):
    """One roofline point with every input named (``nki_studio.profile.roofline.Roofline``): a measured
    profile's, or the estimate's from the simulator trace (then every figure is estimated). Keys are the
    dataclass's own (snake_case), as the profile summary has always written them."""

    flops: Annotated[int | None, "null: no FLOP count (a profile analysed without its simulator trace)"]
    flops_source: str
    bytes: Annotated[int, "HBM bytes"]
    bytes_source: str
    intensity: Annotated[float | None, "FLOPs per HBM byte (null: no FLOPs or no HBM bytes)"]
    ceiling_gbps: Annotated[float, "the memory roof: DMA bandwidth in GB/s"]
    ceiling_source: str
    peak_tflops: Annotated[float, "the compute roof"]
    peak_source: str
    ridge: Annotated[float, "intensity at which the compute and memory roofs meet"]
    attainable_tflops: float | None
    achieved_tflops: Annotated[float | None, "FLOPs over the kernel time"]
    memory_floor_ns: Annotated[float, "HBM bytes at the ceiling: a lower bound of the kernel time"]
    compute_floor_ns: Annotated[float | None, "FLOPs at the peak: a lower bound of the kernel time"]
    bound: Literal["memory", "compute", "unknown"]
    efficiency: Annotated[float | None, "the larger floor over the kernel time"]


class EstimateOpcode(TypedDict):
    """One instruction kind of a line on the estimated timeline."""

    opcode: str
    count: int
    sumNs: Annotated[int, "summed estimated durations"]


class EstimateLine(TypedDict):
    """One source line on the estimated timeline: the per-line metrics of the estimated profile, computed by the
    same code as a measured profile's (times in ns, estimated)."""

    path: str
    line: int
    busyNs: Annotated[int, "union of the line's instruction intervals (never a sum of durations)"]
    share: Annotated[float, "busyNs over the estimated kernel time; lines overlap, shares do not sum to 1"]
    shareOfCompute: Annotated[float, "busyNs over the union of all compute instructions"]
    instructions: int
    engines: Annotated[dict[str, int], "engine -> busy ns on that engine"]
    dmaBytes: Annotated[int, "bytes of the DMA transfers the line issued"]
    dmaNs: Annotated[int, "union of those transfers"]
    dmaOverlapNs: Annotated[int, "part of busyNs during which any DMA ran"]
    exclusiveNs: Annotated[int, "additive view: concurrent lines share each moment equally"]
    topOpcodes: list[EstimateOpcode]


class EngineTrack(TypedDict):
    """When one engine (or the DMA queues) was busy, as ``[start, end]`` ns from the kernel start (merged below
    the kernel panel's resolution); in an estimate also the per-execution fixed cost at kernel start and end."""

    name: str
    kind: Annotated[
        Literal["dma", "compute", "fixed"],
        "fixed: the estimate's per-execution fixed cost at kernel start and end (estimated, no engine busy)",
    ]
    intervals: list[list[int]]


KernelClass = Literal["memory", "compute", "all"]


class EstimateRange(TypedDict):
    """The estimate's likely range: the 10th to 90th percentile of measured / estimated over the public
    hardware measurements of the calibration suite for this generation and kernel class, times ``totalNs``
    (``nki_studio.estimate.likely_range``). An estimate's likely range, not a guarantee."""

    lowNs: Annotated[int, "likely low end of the kernel time (estimated)"]
    highNs: Annotated[int, "likely high end of the kernel time (estimated)"]
    points: Annotated[int, "number of public measurements the range is calibrated on"]
    generation: str
    kernelClass: Annotated[
        KernelClass,
        "the residuals used: the roofline side of the estimate, or 'all' (fewer than 4 points in that class)",
    ]
    source: Annotated[str, "where the residuals come from (the calibration suite and the model commit)"]


class _EstimateKeys(TypedDict):
    label: Annotated[str, "always 'estimated'"]
    target: str
    totalNs: Annotated[
        int,
        "estimated kernel time: first instruction start to last end on the timeline, plus the per-execution "
        "fixed cost at kernel start and end",
    ]
    range: Annotated[
        EstimateRange | None,
        "the estimate's likely range from the calibration residuals (null: no calibration for this generation)",
    ]
    engineNs: Annotated[dict[str, int], "engine -> busy ns (union of its instructions)"]
    dmaNs: Annotated[int, "union of all DMA transfers"]
    computeNs: Annotated[int, "union of all compute instructions"]
    overlapNs: Annotated[int | None, "time DMA and compute ran together (null: no DMA)"]
    idleNs: Annotated[int | None, "time neither ran: waits and latencies (null: no DMA)"]
    perfectPipelineNs: Annotated[
        int,
        "lower bound: the busiest engine (or DMA) alone, as if every engine overlapped perfectly, plus the "
        "per-execution fixed cost",
    ]
    serialNs: Annotated[
        int,
        "upper bound: the engines' and DMA's busy times and the transfers' issues one after another (no overlap), "
        "plus the per-execution fixed cost",
    ]
    serializationGapNs: Annotated[int, "totalNs - perfectPipelineNs: time lost to serialisation"]
    effectiveDmaGbps: Annotated[float | None, "DMA bytes over the DMA union (null: no DMA)"]
    instructions: int
    dmaBytes: int
    lines: Annotated[list[EstimateLine], "the per-line table, hottest first"]
    roofline: Annotated[Roofline | None, "the kernel's estimated roofline point (null: no instructions)"]
    timeline: Annotated[list[EngineTrack], "the main core's engine tracks, DMA first"]
    bounds: Annotated[
        BoundsJson | None,
        "the estimated profile's bound families, bottleneck and speedups (null: no instructions)",
    ]
    investigations: Annotated[
        list[InvestigationJson],
        "the four line-level investigations of the estimated profile, each with its status",
    ]


class Estimate(_EstimateKeys, total=False):
    """The estimated timeline: every traced instruction scheduled on its engine queue after its dependencies
    (``nki_studio.estimate``, docs/cost-model.md), as an estimated profile's metrics, with the bounds and
    investigations of that profile (``nki_studio.profile.bounds`` / ``investigations``, the same objects
    ``profile analyze --json`` and the MCP tools carry). Estimated, not measured."""

    notes: Annotated[list[str], "how the estimate was made and what it leaves out"]
    calibration: Annotated[
        CalibrationNote,
        "the user's calibration (nki-studio calibrate) this estimate used, or why it was ignored; absent: none",
    ]


class _SimulationResultKeys(TypedDict):
    status: Status
    message: str
    backend: Annotated[str | None, "embedded or official; null when the simulation did not start"]
    kernel: str
    path: str
    spec: Spec
    timings: Timings
    oracle: Oracle | None
    peak: Peak | None
    warnings: Annotated[list[str], "simulator warnings, each 'file:line: message' when the line is known"]
    error: ErrorInfo | None
    estimate: Annotated[
        Estimate | None, "the estimated timeline (null when the simulation recorded no trace)"
    ]


@final  # lets `"estimate" in result` tell a result from a notice
class SimulationResult(_SimulationResultKeys, total=False):
    """The result of one simulation job run by a worker (``simulate --json`` prints this)."""

    peakRssBytes: Annotated[int, "peak resident memory of the worker"]
    devicePrints: Annotated[list[str], "nl.device_print output"]
    instructions: Annotated[int, "instructions simulated"]
    callSites: Annotated[
        list[str],
        "the user's calls around the instructions' own lines, each 'path:line' once: the calls into the user's "
        "functions that issued instructions (present with a trace)",
    ]
    ignoredConfig: Annotated[
        list[str],
        "nki.compiler options the kernel set that the simulation accepted and recorded but does not honour, "
        "each with the reason",
    ]
    uninitializedRead: Annotated[ErrorInfo | None, "the strict re-run's first read of never-written memory"]
    output: Annotated[str, "tail of what the kernel printed"]
    uri: Annotated[str, "the document, on nki/simulationResult"]
    textSha256: Annotated[
        str,
        "SHA-256 (hex, of its UTF-8) of the document text the run was of, on nki/simulationResult and the "
        "simulate command's answer: while the text differs the result is stale",
    ]


class _SimulationNoticeKeys(TypedDict):
    status: Status
    message: str


@final
class SimulationNotice(_SimulationNoticeKeys, total=False):
    """An answer no worker produced: refused (untrusted workspace), cancelled, or the run could not start."""

    kernel: str
    path: str
    uri: Annotated[str, "the document, on nki/simulationResult"]
    textSha256: Annotated[
        str,
        "SHA-256 (hex, of its UTF-8) of the document text the run was of, on nki/simulationResult and the "
        "simulate command's answer: while the text differs the result is stale",
    ]
    warnings: list[str]


# What the server sends: ``nki/simulationResult`` and the ``nki-studio.simulate`` command's answer.
AnyResult = SimulationResult | SimulationNotice
