"""Every custom notification the language server sends, declared once with its parameters.

Custom methods use the ``nki/`` prefix. ``nki_studio.protocol.schema`` exports their parameter types as JSON
Schema and generates the TypeScript method constants and types the extension subscribes with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from nki_studio.protocol.heatmap import HeatLayerParams, HeatmapParams
from nki_studio.protocol.simulation import AnyResult

P = TypeVar("P")


@dataclass(frozen=True)
class Notification(Generic[P]):
    """One server-to-client notification: ``key`` names its TypeScript constant, ``params`` is its payload type
    (``P``, for type checkers; ``params`` for the schema generator, which needs it at run time)."""

    key: str
    method: str
    params: object
    doc: str


HEATMAP: Notification[HeatmapParams] = Notification(
    "heatmap",
    "nki/heatmap",
    HeatmapParams,
    "The heat of one document, measured (a profile) or estimated (a simulation); lines: [] clears it.",
)
SIMULATION_RESULT: Notification[AnyResult] = Notification(
    "simulationResult",
    "nki/simulationResult",
    AnyResult,
    "A simulation's structured result (plus uri and kernel), after a save or the simulate command.",
)
HEAT_LAYER: Notification[HeatLayerParams] = Notification(
    "heatLayer",
    "nki/heatLayer",
    HeatLayerParams,
    "Which layer of a document's heat every view shows (measured, estimate, compare) and which it has; sent "
    "when either changes. A simulation never hides a measured layer.",
)
NOTIFICATIONS = (HEATMAP, SIMULATION_RESULT, HEAT_LAYER)
