"""Per-generation hardware limits and NKI versions: the one place these numbers live.

Every number names the reference page it comes from (``shared/nki-reference/hardware.md`` section, which
in turn names the AWS document). Values marked *inferred* are not published by AWS; they are our choice
and are documented as such in the rule and simulator docs.
"""

from __future__ import annotations

import importlib.util
import os
import re
from dataclasses import dataclass, replace
from enum import Enum

KiB = 1024


class Generation(str, Enum):
    """NeuronCore generation (``nisa.nc_version``); the value is the user-facing setting."""

    GEN2 = "trn1"  # NeuronCore-v2: Trainium, Inferentia2
    GEN3 = "trn2"  # NeuronCore-v3: Trainium2
    GEN4 = "trn3"  # NeuronCore-v4: Trainium3

    @property
    def nc_version(self) -> int:
        """The ``nisa.nc_version`` number (2, 3 or 4)."""
        return {Generation.GEN2: 2, Generation.GEN3: 3, Generation.GEN4: 4}[self]


# Names accepted for a generation, as NEURON_PLATFORM_TARGET_OVERRIDE accepts them (hardware.md, table 0).
_GENERATION_ALIASES = {
    "trn1": Generation.GEN2,
    "inf2": Generation.GEN2,
    "gen2": Generation.GEN2,
    "trn2": Generation.GEN3,
    "gen3": Generation.GEN3,
    "trn3": Generation.GEN4,
    "gen4": Generation.GEN4,
}

DEFAULT_GENERATION = Generation.GEN3


def parse_generation(name: str) -> Generation:
    """Parse a generation name (``trn2``, ``gen3``, ``inf2`` ...); raises ValueError with the accepted names."""
    try:
        return _GENERATION_ALIASES[name.strip().lower()]
    except KeyError:
        accepted = ", ".join(sorted(_GENERATION_ALIASES))
        raise ValueError(f"unknown target generation {name!r}; expected one of: {accepted}") from None


def generation_from_env() -> Generation | None:
    """The generation the environment names: ``NKI_NC_VERSION`` (an ``nisa.nc_version`` name such as
    ``gen3``, how test harnesses such as nki-library's name the target of one run), else the machine-wide
    ``NEURON_PLATFORM_TARGET_OVERRIDE``; None when neither is set. Raises ValueError for an unknown name."""
    name = os.environ.get("NKI_NC_VERSION") or os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE")
    return parse_generation(name) if name else None


@dataclass(frozen=True)
class TargetLimits:
    """Hardware numbers of one NeuronCore generation (hardware.md §1, §3, §5 unless noted)."""

    generation: Generation
    partitions: int  # SBUF/PSUM partitions, §1
    sbuf_bytes_per_partition: int  # §1 (v4 derived 32 MiB / 128)
    psum_bytes_per_partition: int  # §1
    psum_banks: int  # §1
    psum_bank_bytes: int  # §1: 2 KiB = 512 fp32
    matmul_stationary_free_max: int  # M of nc_matmul stationary [K, M], §1
    matmul_moving_free_max_fp32: int  # N of moving [K, N] with fp32 PSUM dst, §1
    matmul_moving_free_max_bf16: int  # N with bf16 dst (v4 only differs), §1
    matmul_contraction_max: int  # K, §1
    psum_dst_dtypes: tuple[str, ...]  # matmul output dtypes, §1 "Matmul output dtype"
    vector_free_max_sbuf: (
        int  # max free elements per partition, Vector/Scalar on SBUF, §1 ([A2], assumed same later)
    )
    vector_free_max_psum: int  # same for PSUM operands
    bn_stats_free_max: int  # §5 bn_stats_fmax
    dma_bytes_per_ns: float  # aggregate achievable DMA per NeuronCore (16 engines x achievable), §1
    dma_fixed_overhead_ns: float  # per-transfer overhead, §3 cost rules ([BW]) -- inferred applicability
    clock_ghz: dict[str, float]  # engine clocks: tensor, vector, scalar, gpsimd, §1
    # elements per cycle of the element-wise engines, §3 data-path table: BF16/FP16 at their widest performance
    # mode, and other dtypes; which instruction, dtype and operand placement gets which: estimate/perf_modes.py
    lanes: dict[str, int]
    lanes_other: dict[str, int]
    tensor_tflops: dict[
        str, float
    ]  # TensorE dense peak by input dtype ("bf16", "fp32", "fp8"), §3 throughput
    engine_fp32_tflops: dict[
        str, float
    ]  # Vector/Scalar FP32 peak, §3 throughput (GpSimd not stated: unknown)
    dma_engines: int = 16  # DMA engines per NeuronCore, §1
    # hardware descriptor-generation (DGE) instances per NeuronCore, each issuing one DMA instruction at a time
    # (hardware.md §6, [DGE]: "Each TRN2 NeuronCore has two DGE instances"); 0: none (NeuronCore-v2)
    dge_instances: int = 0

    @property
    def pmax(self) -> int:
        """Maximum partition dimension of any on-chip tile (``nl.tile_size.pmax``)."""
        return self.partitions


_TRN1 = TargetLimits(
    generation=Generation.GEN2,
    partitions=128,
    sbuf_bytes_per_partition=192 * KiB,
    psum_bytes_per_partition=16 * KiB,
    psum_banks=8,
    psum_bank_bytes=2 * KiB,
    matmul_stationary_free_max=128,
    matmul_moving_free_max_fp32=512,
    matmul_moving_free_max_bf16=512,
    matmul_contraction_max=128,
    psum_dst_dtypes=("float32",),
    vector_free_max_sbuf=64 * 1024,
    vector_free_max_psum=4 * 1024,
    bn_stats_free_max=512,
    dma_bytes_per_ns=272.0 / 1.0,
    dma_fixed_overhead_ns=1300.0,
    clock_ghz={"tensor": 2.8, "vector": 1.12, "scalar": 1.4, "gpsimd": 1.4},
    lanes={"vector": 128, "scalar": 128, "gpsimd": 128},
    lanes_other={"vector": 128, "scalar": 128, "gpsimd": 128},
    tensor_tflops={"bf16": 92.0, "fp32": 23.0},
    engine_fp32_tflops={"vector": 2.3, "scalar": 2.9},
)
# Later generations: only what differs from the previous one.
_TRN2 = replace(
    _TRN1,
    generation=Generation.GEN3,
    sbuf_bytes_per_partition=224 * KiB,
    dma_bytes_per_ns=368.0 / 1.0,
    clock_ghz={"tensor": 2.4, "vector": 0.96, "scalar": 1.2, "gpsimd": 1.2},
    lanes={"vector": 512, "scalar": 128, "gpsimd": 128},
    lanes_other={"vector": 256, "scalar": 128, "gpsimd": 128},
    tensor_tflops={"bf16": 79.0, "fp32": 20.0, "fp8": 158.0},
    engine_fp32_tflops={"vector": 1.0, "scalar": 1.2},
    dge_instances=2,  # Trainium3 keeps them (hardware.md §1 "present (not restated)"; the count is inferred)
)
_TRN3 = replace(
    _TRN2,
    generation=Generation.GEN4,
    sbuf_bytes_per_partition=256 * KiB,
    matmul_moving_free_max_fp32=4096,
    matmul_moving_free_max_bf16=8192,
    psum_dst_dtypes=("float32", "bfloat16"),
    dma_bytes_per_ns=528.0 / 1.0,
    clock_ghz={"tensor": 2.4, "vector": 1.2, "scalar": 1.2, "gpsimd": 1.2},
    lanes={"vector": 512, "scalar": 256, "gpsimd": 128},
    tensor_tflops={"bf16": 79.0, "fp32": 20.0, "fp8": 315.0},
    engine_fp32_tflops={"vector": 1.2, "scalar": 1.2},
)
_LIMITS = {limits.generation: limits for limits in (_TRN1, _TRN2, _TRN3)}
# DMA note: GB/s == bytes/ns, so 368 GB/s on trn2 is 368 bytes per ns (hardware.md §1, [BW]).


@dataclass(frozen=True)
class InstructionCostRules:
    """Per-instruction cycle rules of thumb for the estimated-cost model (hardware.md §3 "Cost-model rules of
    thumb"; stated for NeuronCore-v2 in [A2]/[OLD], applied to every generation -- an inferred choice)."""

    min_ii_cycles: int = 64  # Vector/Scalar minimum initiation interval: cost max(MIN_II, N) [OLD]
    access_overhead_cycles: int = 60  # tensor access start overhead per instruction [A2]
    matmul_min_cycles: int = 64  # MultiplyMoving ~ max(N, 64) cycles for BF16/FP16/TF32/cFP8 [A2]
    matmul_fp32_factor: int = 4  # FP32 inputs ~4x slower [A2]
    two_input_factor: int = 2  # VectorE two-input instructions ~2N [A2]
    reciprocal_factor: int = 8  # reciprocal ~8N on Vector, ~N on Scalar [OLD]
    # "a static instruction overhead of 100 engine cycles" for back-to-back instructions with N << 128 or each
    # depending on the previous one's output [A2] (Vector; "all the performance notes" apply to Scalar too)
    static_overhead_cycles: int = 100
    gpsimd_fixed_cycles: int = 150  # iota / affine_select ~150+N [OLD]
    bn_aggr_factor: float = 13 / 3  # bn_aggr ~13*(N/3) [OLD]


COST_RULES = InstructionCostRules()


def limits_for(generation: Generation) -> TargetLimits:
    """Return the hardware limits of one generation."""
    return _LIMITS[generation]


@dataclass(frozen=True, order=True)
class NkiVersion:
    """An NKI release as (major, minor); ``legacy`` (the ``neuronxcc.nki`` namespace) is (0, 1)."""

    major: int
    minor: int

    def __str__(self) -> str:
        return "legacy" if (self.major, self.minor) == (0, 1) else f"{self.major}.{self.minor}"


LEGACY = NkiVersion(0, 1)
# How the editor and the agents' docs name the legacy API (deprecations.md version map: Beta 1, Neuron 2.20-2.26).
LEGACY_API_LABEL = "NKI legacy (neuronxcc.nki, Neuron <= 2.26)"
KNOWN_VERSIONS = tuple(NkiVersion(0, m) for m in range(1, 8))  # README §1 version table
NEWEST_VERSION = KNOWN_VERSIONS[-1]  # NKI 0.7.0, Neuron 2.33 (nki-0.7.md §1)


def parse_nki_version(text: str) -> NkiVersion:
    """Parse ``0.6``, ``0.6.0``, ``v0.7`` or ``legacy``; raises ValueError naming the accepted forms."""
    t = text.strip().lower().lstrip("v")
    if t in ("legacy", "neuronxcc", "0.1"):
        return LEGACY
    m = re.fullmatch(r"(\d+)\.(\d+)(?:\.\d+)?", t)
    if not m:
        raise ValueError(f"unknown NKI version {text!r}; expected e.g. 0.6, 0.7 or legacy")
    return NkiVersion(int(m.group(1)), int(m.group(2)))


def detect_installed_nki_version() -> NkiVersion | None:
    """The version of an installed ``nki`` wheel, else one implied by ``neuronx-cc`` (nki-0.7.md §5), else None.

    ``NKI_COMPILER_FRONTEND=custom``/``parser`` asks a 0.7 install for 0.6 semantics, so it maps to 0.6.
    """
    # Neither package importable: no distribution to ask (importlib.metadata costs ~50 ms to import and scans
    # every installed distribution, on the language server's start-up path).
    if importlib.util.find_spec("nki") is None and importlib.util.find_spec("neuronxcc") is None:
        return None
    from importlib import metadata

    version: NkiVersion | None = None
    try:
        version = parse_nki_version(metadata.version("nki"))
    except (metadata.PackageNotFoundError, ValueError):
        compiler_to_nki = {"2.28": NkiVersion(0, 7), "2.27": NkiVersion(0, 6)}  # nki-0.7.md §5 [PKG], [COMP]
        try:
            cc = metadata.version("neuronx-cc")
        except metadata.PackageNotFoundError:
            return None
        version = compiler_to_nki.get(".".join(cc.split(".")[:2]))
    if version is not None and version >= NkiVersion(0, 7) and frontend_asks_for_06():
        return NkiVersion(0, 6)
    return version


def frontend_asks_for_06() -> bool:
    """``NKI_COMPILER_FRONTEND=custom``/``parser``: a 0.7 toolchain asked for 0.6 semantics (nki-0.7.md §5)."""
    return os.environ.get("NKI_COMPILER_FRONTEND", "").lower() in ("custom", "parser")


@dataclass(frozen=True)
class Target:
    """What the user compiles for: a generation and an NKI version."""

    generation: Generation = DEFAULT_GENERATION
    nki_version: NkiVersion = NEWEST_VERSION

    @property
    def limits(self) -> TargetLimits:
        """Hardware limits of this target's generation."""
        return limits_for(self.generation)


def tile_size_constants(limits: TargetLimits) -> dict[str, int]:
    """``nl.tile_size`` attributes with a documented value (hardware.md §5, language.md §3).

    ``gemm_moving_fmax`` stays 512 on every generation: it is the constant, not v4's wider nc_matmul limit.
    The ``sbuf_*`` attributes are left out because their values are not published.
    """
    bank_fp32 = limits.psum_bank_bytes // 4
    return {
        "pmax": limits.pmax,
        "psum_bank_fmax": bank_fp32,
        "psum_fmax": bank_fp32,
        "psum_bank_fmax_bytes": limits.psum_bank_bytes,
        "psum_num_banks": limits.psum_banks,
        "gemm_stationary_fmax": limits.matmul_stationary_free_max,
        "gemm_moving_fmax": 512,
        "bn_stats_fmax": limits.bn_stats_free_max,
    }
