"""Which source lines are hot, decided once for every view (the CLI's per-line list, ``simulate --json``, the MCP
tools, the editor's heat): heat follows the kernel's bottleneck.

* A line's **time** includes the DMA transfers it issues: its compute busy time plus the union of the transfers
  its instructions trigger (measured: the profile's Flow links, ``linemetrics._dma_attributed``; estimated: the
  scheduled transfers of the line, ``dmaNs``). The sum counts a moment twice when the line computes while its
  own transfers run, so it is an upper bound of the line's wall time, never more than busy + DMA (inferred: the
  profile formats give no per-line union of the two).
* A DMA-bound kernel (its bottleneck is the DMA queues, ``profile.bounds``) ranks its lines by their DMA time, so
  the ``dma_copy``/``load``/``store`` lines lead; any other kernel by the line's time. Ties go to the other figure,
  then to the line number, so the order is stable.

The ranking key is the metric the editor colours by default (``DEFAULT_METRICS``), one of the heat payload's
metric names (``protocol.heatmap.HeatMetric``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from nki_studio.profile.bounds import DMA
from nki_studio.protocol.heatmap import HeatMetric

T = TypeVar("T")

# The default metric for a kernel: DMA-bound -> the DMA time a line issues; otherwise its time.
DMA_METRIC: HeatMetric = "dma_time"
TIME_METRIC: HeatMetric = "time"


def line_time_ns(busy_ns: int, dma_ns: int) -> int:
    """A line's time: its compute busy time plus the DMA transfers it issues (see the module docstring)."""
    return busy_ns + dma_ns


def default_metric(bottleneck: str | None) -> HeatMetric:
    """The metric a kernel's lines are ranked and coloured by: its bottleneck's."""
    return DMA_METRIC if bottleneck == DMA else TIME_METRIC


def ranked(
    items: Sequence[T],
    busy_ns: Callable[[T], int],
    dma_ns: Callable[[T], int],
    bottleneck: str | None,
    line: Callable[[T], int] = lambda _: 0,
) -> list[T]:
    """``items`` (lines of any shape, read through the accessors) hottest first for a kernel whose bottleneck is
    ``bottleneck``."""
    by_dma = default_metric(bottleneck) == DMA_METRIC

    def key(item: T) -> tuple[int, int, int]:
        busy, dma = busy_ns(item), dma_ns(item)
        time = line_time_ns(busy, dma)
        return (-dma, -time, line(item)) if by_dma else (-time, -dma, line(item))

    return sorted(items, key=key)
