"""``nl.tile_size`` (language.md §3, hardware.md §5): per-target constants read from the running target."""

from __future__ import annotations

import os

from nki_studio.model.targets import DEFAULT_GENERATION, TargetLimits, limits_for
from nki_studio.sim import context
from nki_studio.sim.errors import NotImplementedInSimulator


def _limits() -> TargetLimits:
    ctx = context.current_or_none()
    return ctx.options.target.limits if ctx is not None else limits_for(DEFAULT_GENERATION)


class _TileSize:
    """Tile-size constants. SBUF sizes use the full per-partition capacity: the reserved part is unpublished."""

    pmax = 128
    psum_bank_fmax = 512
    psum_bank_fmax_bytes = 2048
    psum_fmax = 512  # deprecated 0.4.0 -> psum_bank_fmax
    gemm_stationary_fmax = 128
    gemm_moving_fmax = 512
    bn_stats_fmax = 512

    @property
    def psum_num_banks(self) -> int:
        """8, or 7 when NKI_DMA_TRANSPOSE_AS_PE_TRANSPOSE=true on trn2+ (bank 7 reserved)."""
        lim = _limits()
        reserved = (
            os.environ.get("NKI_DMA_TRANSPOSE_AS_PE_TRANSPOSE", "").lower() == "true"
            and lim.generation.nc_version >= 3
        )
        return lim.psum_banks - (1 if reserved else 0)

    @property
    def sbuf_fmax_bytes(self) -> int:
        """Usable SBUF bytes per partition (full capacity: the reserved amount is not published)."""
        return _limits().sbuf_bytes_per_partition

    @property
    def sbuf_fmax(self) -> int:
        """``sbuf_fmax_bytes`` in FP32 elements."""
        return self.sbuf_fmax_bytes // 4

    @property
    def sbuf_size_bytes(self) -> int:
        """Total SBUF bytes over all partitions."""
        lim = _limits()
        return lim.sbuf_bytes_per_partition * lim.partitions

    @property
    def total_available_sbuf_size(self) -> int:
        """Deprecated 0.4.0: usable bytes per partition."""
        return self.sbuf_fmax_bytes

    @property
    def psum_min_align(self) -> int:
        """Unknown value (hardware.md §9): not simulated."""
        raise NotImplementedInSimulator("nl.tile_size.psum_min_align", "the value is not published")

    @property
    def sbuf_min_align(self) -> int:
        """Unknown value (hardware.md §9): not simulated."""
        raise NotImplementedInSimulator("nl.tile_size.sbuf_min_align", "the value is not published")


tile_size = _TileSize()
