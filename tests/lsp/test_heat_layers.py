"""The language server's layers of heat (``lsp.heat_layers``, rule ``service.heat.shown_layer``): a simulation
adds an estimated layer and never hides the measured one; the user's choice holds while the layer exists."""

from __future__ import annotations

from nki_studio.lsp.heat_layers import HeatLayers
from nki_studio.protocol.heatmap import HeatLayerParams, HeatmapParams, HeatSource
from nki_studio.service import heat

URI = "file:///ws/kernel.py"


def _payload(source: HeatSource, lines: int = 1, **extra: object) -> HeatmapParams:
    profile = (
        {"label": "run-42", "path": "/p/run-42"} if source == "measured" else {"label": "e", "path": "/k.py"}
    )
    return {  # type: ignore[typeddict-item]
        "uri": URI,
        "source": source,
        "profile": profile,
        "metric_defs": {},
        "stale": False,
        "lines": [{"line": i} for i in range(lines)],
        "kernel": {"name": "k"},
        "default_metric": "time",
        **extra,
    }


def _store() -> tuple[HeatLayers, list[HeatLayerParams]]:
    sent: list[HeatLayerParams] = []
    return HeatLayers(sent.append), sent


def test_a_simulation_never_hides_the_measured_layer() -> None:
    layers, sent = _store()
    layers.sent(_payload("measured"))
    layers.sent(_payload("estimate"))
    assert layers.shown(URI) == "measured"
    assert sent[-1] == {
        "uri": URI,
        "layer": "measured",
        "available": ["measured", "estimate"],
        "label": "Measured, from run-42",
    }


def test_the_choice_holds_and_names_the_layer() -> None:
    layers, sent = _store()
    layers.sent(_payload("measured"))
    layers.sent(_payload("estimate"))
    assert layers.select(URI, "estimate")["label"] == "Estimated (simulator trace, not measured): k"
    layers.sent(_payload("estimate", lines=2))  # a new simulation of the same file
    assert layers.shown(URI) == "estimate"
    n = len(sent)
    layers.sent(_payload("estimate", lines=2))  # nothing changed: no announcement
    assert len(sent) == n


def test_compare_needs_both_layers_and_falls_back_to_measured() -> None:
    layers, _ = _store()
    layers.sent(_payload("measured"))
    both = {"kernel": {"measured_ns": 2, "estimated_ns": 1, "ratio": 0.5}}
    layers.sent(_payload("estimate", measured_vs_estimated=both))
    assert layers.select(URI, "compare")["layer"] == "compare"
    assert layers.comparison(URI) == both
    layers.sent(_payload("estimate", lines=0))  # the estimate is gone (cleared)
    assert layers.shown(URI) == "measured" and layers.comparison(URI) is None


def test_no_heat_no_layer() -> None:
    layers, sent = _store()
    assert layers.shown(URI) is None
    layers.sent(_payload("estimate"))
    layers.sent(_payload("estimate", lines=0))
    assert layers.shown(URI) is None and sent[-1]["layer"] is None and sent[-1]["label"] == "no heat"


def test_the_rule() -> None:
    assert heat.layers_of(["estimate", "measured"], True) == ["measured", "estimate", "compare"]
    assert heat.layers_of(["estimate", "measured"], False) == ["measured", "estimate"]
    assert heat.shown_layer(["measured", "estimate", "compare"], None) == "measured"
    assert heat.shown_layer(["estimate"], "measured") == "estimate"
    assert heat.shown_layer([], "compare") is None
