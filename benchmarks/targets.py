"""Targets beside the figures every benchmark prints: one spelling of the verdict, MET or MISSED.

A figure is compared with its upper limit (every target here is "at most"); a figure that could not be measured
(NaN) misses it.
"""

from __future__ import annotations


def verdict(value: float, limit: float) -> str:
    """``MET`` when ``value <= limit``, else ``MISSED``."""
    return "MET" if value <= limit else "MISSED"


def goal(value: float, limit: float, unit: str = "", label: str = "") -> str:
    """``(target <= 50 ms: MET)``; ``label`` names the statistic the limit is on (``p95``)."""
    name = f"{label} " if label else ""
    shown = f"{limit:g} {unit}".rstrip()
    return f"(target {name}<= {shown}: {verdict(value, limit)})"
