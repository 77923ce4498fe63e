/**
 * The layers of each document's heat as the client keeps them: the measured layer (a loaded profile), the
 * estimated one (the last simulation) and, when the server sent the two compared, the compare layer
 * (measured − estimated per line). A payload replaces only its own source's layer, so a simulation never
 * throws a measured profile away. Which layer is shown is the language server's (`nki/heatLayer`, the answer of
 * `selectHeatLayer`): bars, legend, panel, hover and inlay hints then all read the same one. Until the server
 * has said, the layer received last is shown. Plain data, no vscode types.
 */
import type { HeatLayer, HeatLayerParams, MeasuredVsEstimated } from '../protocol.generated';
import { HEATLAYER_VALUES } from '../protocol.generated';
import type { HeatLine, HeatSource, HeatmapParams } from './model';

export type { HeatLayer, HeatLayerParams } from '../protocol.generated';
export { HEATLAYER_VALUES } from '../protocol.generated';

/** One layer's heat: its payload and its lines, shifted with edits. */
export interface LayerHeat {
  params: HeatmapParams;
  lines: HeatLine[];
  byLine: Map<number, HeatLine>;
  stale: boolean;
}

/** The layer shown for a document, with what to call it. */
export interface ShownLayer {
  layer: HeatLayer;
  label: string;
  heat: LayerHeat;
  /** The kernel's estimated / measured latency, on the compare layer. */
  ratio?: number | null;
}

interface DocLayers {
  layers: Map<HeatLayer, LayerHeat>;
  comparison?: MeasuredVsEstimated;
  announced?: HeatLayerParams;
  lastReceived?: HeatSource;
}

export class LayerStore {
  private readonly docs = new Map<string, DocLayers>();

  /** A `nki/heatmap` payload: its source's layer (no lines and no findings: that layer is gone). */
  apply(params: HeatmapParams): void {
    const doc = this.docs.get(params.uri) ?? { layers: new Map<HeatLayer, LayerHeat>() };
    if (params.lines.length === 0 && (params.findings ?? []).length === 0) {
      doc.layers.delete(params.source);
    } else {
      doc.layers.set(params.source, layerHeat(params, params.lines));
      doc.lastReceived = params.source;
    }
    if (params.measured_vs_estimated) doc.comparison = params.measured_vs_estimated;
    const measured = doc.layers.get('measured');
    if (!measured || !doc.layers.has('estimate')) doc.comparison = undefined;
    if (measured && doc.comparison) {
      const params = { ...measured.params, measured_vs_estimated: doc.comparison };
      doc.layers.set('compare', layerHeat(params, compareLines(doc.comparison), measured.stale));
    } else {
      doc.layers.delete('compare');
    }
    if (doc.layers.size === 0 && !doc.announced) this.docs.delete(params.uri);
    else this.docs.set(params.uri, doc);
  }

  /** The server's word on which layer a document shows. */
  announce(params: HeatLayerParams): void {
    const doc = this.docs.get(params.uri) ?? { layers: new Map<HeatLayer, LayerHeat>() };
    doc.announced = params;
    this.docs.set(params.uri, doc);
  }

  /** The layer every view of `uri` shows, or undefined when it has no heat. */
  shown(uri: string): ShownLayer | undefined {
    const doc = this.docs.get(uri);
    if (!doc) return undefined;
    const said = doc.announced?.layer ?? undefined;
    const layer = said && doc.layers.has(said) ? said : doc.lastReceived;
    const heat = layer && doc.layers.get(layer);
    if (!layer || !heat) return undefined;
    const label = said === layer && doc.announced ? doc.announced.label : SHORT_NAMES[layer];
    return layer === 'compare'
      ? { layer, label, heat, ratio: doc.comparison?.kernel.ratio ?? null }
      : { layer, label, heat };
  }

  /** The layers a document has (the server's list once it has sent one), measured first. */
  available(uri: string): HeatLayer[] {
    const doc = this.docs.get(uri);
    if (!doc) return [];
    return HEATLAYER_VALUES.filter((l) => doc.layers.has(l) && (!doc.announced || doc.announced.available.includes(l)));
  }

  /** One layer of `uri`, shown or not. */
  layer(uri: string, layer: HeatLayer): LayerHeat | undefined {
    return this.docs.get(uri)?.layers.get(layer);
  }

  /** Every layer of `uri` (to shift them all with an edit). */
  layersOf(uri: string): LayerHeat[] {
    return [...(this.docs.get(uri)?.layers.values() ?? [])];
  }

  get size(): number {
    return [...this.docs.values()].filter((d) => d.layers.size > 0).length;
  }

  clear(): void {
    this.docs.clear();
  }
}

/** A layer's heat from its payload and lines (indexed by line). */
export function layerHeat(params: HeatmapParams, lines: HeatLine[], stale = params.stale === true): LayerHeat {
  return { params, lines, byLine: indexLines(lines), stale };
}

export function indexLines(lines: readonly HeatLine[]): Map<number, HeatLine> {
  return new Map(lines.map((l) => [l.line, l]));
}

/**
 * The compare layer's lines: each compared line at its place in the document (as simulated), its value the size
 * of measured − estimated (`time_ns`, the metric the compare layer is coloured by); the server's hover and inlay
 * hints give its sign.
 */
export function compareLines(cmp: MeasuredVsEstimated): HeatLine[] {
  const out: HeatLine[] = [];
  for (const row of cmp.lines) {
    if (row.line_estimated === null) continue;
    const delta = row.measured_ns - row.estimated_ns;
    out.push({
      line: row.line_estimated - 1,
      busy_ns: Math.abs(delta),
      time_ns: Math.abs(delta),
      share: 0,
      instr: 0,
      wait_ns: 0,
      engines: {},
      dma_bytes: 0,
    });
  }
  return out.sort((a, b) => a.line - b.line);
}

/** What a layer is called until the server's label (the full one) arrives. */
const SHORT_NAMES: Record<HeatLayer, string> = {
  measured: 'measured',
  estimate: 'estimated (not measured)',
  compare: 'measured − estimated',
};
