"""Layers of heat: the ``selectHeatLayer`` command (the client's layer switch) and the compare layer's inlay
hints (measured − estimated per line). Which layer is shown is ``lsp.heat_layers``'s; the numbers are the
service's measured-vs-estimated rows (``service.measured_estimated``) the heat payloads carry."""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from nki_studio.lsp.server import NkiLanguageServer
from nki_studio.protocol.commands import SELECT_HEAT_LAYER
from nki_studio.protocol.heatmap import HeatLayerParams
from nki_studio.service import heat


class LayersFeature:
    """The layer switch and what only the compare layer shows."""

    def __init__(self, server: NkiLanguageServer) -> None:
        self.server = server

    def select(self, *args: Any) -> HeatLayerParams:
        """``selectHeatLayer`` with ``[uri, layer]``: show that layer in every view; answers the layer shown."""
        uri, layer = (*args, None, None)[:2]
        if not isinstance(uri, str) or layer not in heat.LAYERS:
            raise ValueError(f"{SELECT_HEAT_LAYER.id} takes [uri, one of {', '.join(heat.LAYERS)}]")
        shown = self.server.heat_layers.select(uri, layer)
        self.server.refresh_inlay_hints()
        return shown

    def inlay_hints(self, params: types.InlayHintParams) -> list[types.InlayHint] | None:
        """``Δ +3.2 µs (measured 12 µs, est. 8.8 µs)`` at the end of the compared lines (setting ``inlayHints``)."""
        uri = params.text_document.uri
        layers = self.server.heat_layers
        cmp = layers.comparison(uri)
        if cmp is None or layers.shown(uri) != "compare" or not self.server.settings.inlay_hints:
            return None
        doc = self.server.workspace.get_text_document(uri)
        text_lines = doc.lines
        hints = []
        for row in cmp["lines"]:
            at = row["line_estimated"]  # 1-based, in the text simulated (the document's)
            if at is None or not params.range.start.line <= at - 1 <= params.range.end.line:
                continue
            if at - 1 >= len(text_lines):
                continue
            col = len(text_lines[at - 1].rstrip("\r\n").encode("utf-16-le")) // 2
            hints.append(
                types.InlayHint(
                    position=types.Position(line=at - 1, character=col),
                    label=heat.delta_label(row),
                    padding_left=True,
                    tooltip=f"{cmp['measured']}\n{cmp['estimated']}",
                )
            )
        return hints or None


def register(server: NkiLanguageServer) -> None:
    """Wire the layer switch into the server."""
    feature = LayersFeature(server)
    server.add_inlay_hint_provider(feature.inlay_hints)

    @server.command(SELECT_HEAT_LAYER.id)
    def select_heat_layer(ls: NkiLanguageServer, *args: Any) -> HeatLayerParams:
        return feature.select(*args)
