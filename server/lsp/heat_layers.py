"""The layers of each document's heat in the language server, the one place that says which layer is shown.

A document can have a measured layer (a loaded profile, ``features.profile``) and an estimated one (the last
simulation, ``features.simulate``); with both it also has the compare layer. Each feature sends its payloads
through ``sent`` (the server's ``send_heat``), so a simulation adds or replaces the estimated layer and never
touches the measured one. The hover and inlay providers ask ``shown`` before answering, so bars, legend, hover,
inlay hints and the panel read the same layer; the client is told with ``nki/heatLayer`` whenever the shown
layer, the layers available or the label change, and chooses with ``selectHeatLayer``. The rule is the
service's (``service.heat.shown_layer``). Event loop only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from nki_studio.lsp.uris import ByUri
from nki_studio.protocol.heatmap import HeatLayer, HeatLayerParams, HeatmapParams, HeatSource
from nki_studio.protocol.profile import MeasuredVsEstimated
from nki_studio.service import heat


@dataclass
class _Doc:
    payloads: dict[HeatSource, HeatmapParams] = field(default_factory=dict)
    chosen: HeatLayer | None = None
    comparison: MeasuredVsEstimated | None = None  # from the newest payload that carried one
    announced: HeatLayerParams | None = None


class HeatLayers:
    """Per document: its measured and estimated payloads (as last sent) and the layer the user chose."""

    def __init__(self, announce: Callable[[HeatLayerParams], None]) -> None:
        self._docs: ByUri[_Doc] = ByUri()
        self._announce = announce

    def sent(self, payload: HeatmapParams) -> None:
        """A payload was sent for its document: it is now that source's layer (no lines: the layer is gone)."""
        uri = payload["uri"]
        doc = self._docs.get(uri) or _Doc()
        if payload["lines"] or payload.get("findings"):
            doc.payloads[payload["source"]] = payload
        else:
            doc.payloads.pop(payload["source"], None)
        if "measured_vs_estimated" in payload:
            doc.comparison = payload["measured_vs_estimated"]
        if len(doc.payloads) < 2:
            doc.comparison = None
        self._docs[uri] = doc
        self._changed(uri, doc)

    def select(self, uri: str, layer: HeatLayer) -> HeatLayerParams:
        """The user's choice of layer for ``uri`` (kept while the document has it); the layer now shown."""
        doc = self._docs.get(uri) or _Doc()
        doc.chosen = layer
        self._docs[uri] = doc
        self._changed(uri, doc)
        return self.params(uri)

    def shown(self, uri: str) -> HeatLayer | None:
        """The layer every view of ``uri`` shows (None: no heat)."""
        doc = self._docs.get(uri)
        return (
            heat.shown_layer(heat.layers_of(doc.payloads, doc.comparison is not None), doc.chosen)
            if doc
            else None
        )

    def comparison(self, uri: str) -> MeasuredVsEstimated | None:
        """The measured-vs-estimated rows last sent with ``uri``'s heat (the compare layer's numbers)."""
        doc = self._docs.get(uri)
        return doc.comparison if doc else None

    def params(self, uri: str) -> HeatLayerParams:
        """``nki/heatLayer`` for ``uri``."""
        doc = self._docs.get(uri) or _Doc()
        available = heat.layers_of(doc.payloads, doc.comparison is not None)
        layer = heat.shown_layer(available, doc.chosen)
        return {
            "uri": uri,
            "layer": layer,
            "available": available,
            "label": heat.layer_label(layer, doc.payloads),
        }

    def _changed(self, uri: str, doc: _Doc) -> None:
        now = self.params(uri)
        if now != doc.announced:
            doc.announced = now
            self._announce(now)
