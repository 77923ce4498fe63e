/**
 * The heatmap in the editor: keeps the layers of heat per document (measured, estimated, compared: `LayerStore`),
 * paints the layer the server says is shown on every visible editor of that document, shifts every layer with
 * edits (marking it stale), shows the legend and the layer in the status bar and jumps to the next hottest line.
 * The per-line Markdown breakdown is the language server's hover (it answers for the same layer), so every LSP
 * editor gets it and VS Code shows it once.
 */
import type * as vscode from 'vscode';
import { CLIENT_COMMANDS } from '../protocol.generated';
import type { VsCode } from '../vscodeApi';
import { legendText } from './legend';
import { formatMetric } from './format';
import { hottestStep } from './hottest';
import {
  type HeatLayer,
  type HeatLayerParams,
  type LayerHeat,
  LayerStore,
  type ShownLayer,
  indexLines,
} from './layers';
import {
  type HeatLine,
  type HeatmapParams,
  METRICS,
  METRIC_FIELDS,
  METRIC_LABELS,
  type Metric,
  type MetricChoice,
  isMetricChoice,
  metricValue,
  profileLabel,
  resolveMetric,
} from './model';
import { HeatPainter } from './painter';
import { HEAT_STYLES } from '../settingsKeys.generated';
import { type HeatStyle, isHeatStyle, planDecorations } from './plan';
import { type LineChange, changesLines, shiftLines } from './shift';

export interface PaintTiming {
  uri: string;
  lines: number;
  /** The whole paint: planning plus the setDecorations calls. */
  ms: number;
  planMs: number;
}

/** How long "hottest line n of N" stays in the status bar. */
const STEP_MESSAGE_MS = 5000;

export class HeatController {
  private readonly layers = new LayerStore();
  /** Where Next Hottest Line last put the cursor. */
  private walk: { uri: string; line: number } | undefined;
  private readonly painter: HeatPainter;
  private readonly legend: vscode.StatusBarItem;
  /** The layer shown in the active editor; click to switch. */
  private readonly layerItem: vscode.StatusBarItem;
  private readonly disposables: vscode.Disposable[] = [];
  private metric: MetricChoice;

  constructor(
    private readonly vs: VsCode,
    private readonly onPainted: (timing: PaintTiming) => void = () => undefined,
  ) {
    this.painter = new HeatPainter(vs);
    const configured = vs.workspace.getConfiguration('nki-studio').get<string>('heatmapMetric');
    this.metric = isMetricChoice(configured) ? configured : 'auto';
    this.legend = vs.window.createStatusBarItem('nki-studio.heatLegend', vs.StatusBarAlignment.Right, 100);
    this.legend.name = 'NKI Heatmap';
    this.legend.command = CLIENT_COMMANDS.pickHeatmapMetric;
    this.layerItem = vs.window.createStatusBarItem('nki-studio.heatLayer', vs.StatusBarAlignment.Right, 101);
    this.layerItem.name = 'NKI Heat Layer';
    this.layerItem.command = CLIENT_COMMANDS.switchHeatLayer;
    this.disposables.push(
      this.legend,
      this.layerItem,
      vs.window.onDidChangeVisibleTextEditors((editors) => editors.forEach((e) => this.paintEditor(e))),
      vs.window.onDidChangeActiveTextEditor(() => this.updateLegend()),
      vs.window.onDidChangeTextEditorVisibleRanges((e) => this.painter.scrolled(e.textEditor)),
      vs.workspace.onDidChangeTextDocument((e) => this.onEdit(e)),
      vs.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('nki-studio.heatmapMetric') || e.affectsConfiguration('nki-studio.heatmap.style')) {
          const m = vs.workspace.getConfiguration('nki-studio').get<string>('heatmapMetric');
          if (isMetricChoice(m)) this.metric = m;
          this.repaintAll();
        }
      }),
    );
  }

  /** New data from the server (measured profile or estimate) for one document: that source's layer. */
  apply(params: HeatmapParams): void {
    this.layers.apply(params);
    this.repaintUri(params.uri);
  }

  /** The server's word on which layer of a document every view shows. */
  applyLayer(params: HeatLayerParams): void {
    this.layers.announce(params);
    this.repaintUri(params.uri);
  }

  clear(): void {
    this.layers.clear();
    for (const editor of this.vs.window.visibleTextEditors) this.painter.clear(editor);
    this.updateLegend();
  }

  /** The metric chosen (`auto`: each kernel's bottleneck's). */
  get currentMetric(): MetricChoice {
    return this.metric;
  }

  /** The heat of a document as shown (for the kernel panel and tests): the compare layer's panel data is the
   * measured layer's, with the two compared. */
  heatOf(
    uri: string,
  ): { params: HeatmapParams; lines: readonly HeatLine[]; stale: boolean; label: string } | undefined {
    const shown = this.layers.shown(uri);
    if (!shown) return undefined;
    const heat = shown.layer === 'compare' ? this.layers.layer(uri, 'measured') : shown.heat;
    return heat && { params: shown.heat.params, lines: heat.lines, stale: heat.stale, label: shown.label };
  }

  /** The layer shown in a document and the layers it has. */
  layerOf(uri: string): { shown: ShownLayer | undefined; available: HeatLayer[] } {
    return { shown: this.layers.shown(uri), available: this.layers.available(uri) };
  }

  async pickMetric(): Promise<void> {
    const heat = this.activeHeat()?.heat;
    const defs = heat?.params.metric_defs ?? {};
    const auto = heat ? ` (here: ${METRIC_LABELS[resolveMetric('auto', heat.params)]})` : '';
    const items: { label: string; description?: string; detail?: string; metric: MetricChoice }[] = [
      {
        label: `the kernel's bottleneck's${auto}`,
        description: this.metric === 'auto' ? 'current' : undefined,
        detail: 'DMA-bound kernels: the DMA time each line issues; others: compute plus DMA issued',
        metric: 'auto',
      },
      ...METRICS.map((m) => ({
        label: METRIC_LABELS[m],
        description: m === this.metric ? 'current' : undefined,
        detail: defs[METRIC_FIELDS[m]]?.description,
        metric: m,
      })),
    ];
    const picked = await this.vs.window.showQuickPick(items, { title: 'NKI heatmap metric' });
    if (!picked) return;
    this.metric = picked.metric;
    const target = this.vs.workspace.workspaceFolders
      ? this.vs.ConfigurationTarget.Workspace
      : this.vs.ConfigurationTarget.Global;
    await this.vs.workspace.getConfiguration('nki-studio').update('heatmapMetric', picked.metric, target);
    this.repaintAll();
  }

  /** Move the cursor of the active editor to the next hottest line; returns that line or undefined. */
  nextHottestLine(): number | undefined {
    const editor = this.vs.window.activeTextEditor;
    const shown = editor && this.layers.shown(editor.document.uri.toString());
    const heat = shown?.heat;
    if (!editor || !heat) {
      void this.vs.window.showInformationMessage(
        'NKI: no heatmap in this editor. Load a profile or simulate the kernel first.',
      );
      return undefined;
    }
    // The walk goes on from where it put the cursor; a cursor moved elsewhere (or another file) starts it over
    // at the hottest line.
    const uri = editor.document.uri.toString();
    const cursor = editor.selection.active.line;
    const from = this.walk?.uri === uri && this.walk.line === cursor ? cursor : -1;
    const metric = this.metricFor(heat, shown?.layer);
    // `auto` walks in the server's order (its ranking by the kernel's bottleneck), when the payload has it
    const byRank = this.metric === 'auto' && shown?.layer !== 'compare' && heat.lines.some((l) => l.rank);
    const step = hottestStep(heat.lines, byRank ? 'rank' : metric, from);
    if (step === undefined) return undefined;
    this.walk = { uri, line: step.line };
    const pos = new this.vs.Position(step.line, 0);
    editor.selection = new this.vs.Selection(pos, pos);
    editor.revealRange(new this.vs.Range(pos, pos), this.vs.TextEditorRevealType.InCenterIfOutsideViewport);
    const value = heat.byLine.get(step.line);
    const valueText = value ? ` · ${formatMetric(metric, metricValue(value, metric))}` : '';
    this.vs.window.setStatusBarMessage(
      `NKI: hottest line ${step.rank} of ${step.of} (line ${step.line + 1}${valueText})`,
      STEP_MESSAGE_MS,
    );
    return step.line;
  }

  dispose(): void {
    this.painter.dispose();
    for (const d of this.disposables) d.dispose();
  }

  private style(): HeatStyle {
    const configured = this.vs.workspace.getConfiguration('nki-studio').get<string>('heatmap.style');
    return isHeatStyle(configured) ? configured : HEAT_STYLES[0];
  }

  private activeHeat(): ShownLayer | undefined {
    const editor = this.vs.window.activeTextEditor;
    return editor ? this.layers.shown(editor.document.uri.toString()) : undefined;
  }

  /** The metric a layer is coloured by: the compare layer by its difference, the others by the choice. */
  private metricFor(heat: LayerHeat, layer?: HeatLayer): Metric {
    return layer === 'compare' ? 'time' : resolveMetric(this.metric, heat.params);
  }

  private repaintUri(uri: string): void {
    for (const editor of this.editorsOf(uri)) this.paintEditor(editor);
    this.updateLegend();
  }

  private editorsOf(uri: string): vscode.TextEditor[] {
    return this.vs.window.visibleTextEditors.filter((e) => e.document.uri.toString() === uri);
  }

  private repaintAll(): void {
    for (const editor of this.vs.window.visibleTextEditors) this.paintEditor(editor);
    this.updateLegend();
  }

  private paintEditor(editor: vscode.TextEditor): void {
    const uri = editor.document.uri.toString();
    const shown = this.layers.shown(uri);
    if (!shown) {
      this.painter.clear(editor);
      return;
    }
    const heat = shown.heat;
    const started = performance.now();
    const plan = planDecorations(
      heat.lines,
      this.metricFor(heat, shown.layer),
      editor.document.lineCount,
      this.style(),
    );
    const planned = performance.now();
    this.painter.paint(editor, plan, heat.stale);
    this.onPainted({
      uri,
      lines: editor.document.lineCount,
      ms: performance.now() - started,
      planMs: planned - started,
    });
  }

  private onEdit(event: vscode.TextDocumentChangeEvent): void {
    const uri = event.document.uri.toString();
    const layers = this.layers.layersOf(uri);
    if (layers.length === 0 || event.contentChanges.length === 0) return;
    // The document is already edited; the text before a lone change's start is unchanged by it (with several
    // changes, lines may have moved: the indentation is then left unknown).
    const single = event.contentChanges.length === 1;
    const changes: LineChange[] = event.contentChanges.map((c) => ({
      startLine: c.range.start.line,
      startCharacter: c.range.start.character,
      endLine: c.range.end.line,
      text: c.text,
      indentBefore:
        single && /^\s*$/.test(event.document.lineAt(c.range.start.line).text.slice(0, c.range.start.character)),
    }));
    const moves = changes.some(changesLines);
    let repaint = moves;
    for (const heat of layers) {
      repaint ||= !heat.stale;
      heat.stale = true;
      if (moves) {
        heat.lines = shiftLines(heat.lines, changes);
        heat.byLine = indexLines(heat.lines);
      }
    }
    // typing within a line of already-stale heat: nothing moves, nothing to repaint
    if (repaint) this.repaintUri(uri);
  }

  private updateLegend(): void {
    const shown = this.activeHeat();
    void this.vs.commands.executeCommand('setContext', 'nki-studio.heatmapActive', this.layers.size > 0);
    if (!shown) {
      this.legend.hide();
      this.layerItem.hide();
      return;
    }
    const { heat, layer } = shown;
    const metric = this.metricFor(heat, layer);
    const label = profileLabel(heat.params);
    const metricLabel = layer === 'compare' ? 'time' : METRIC_LABELS[metric];
    this.legend.text = legendText(metricLabel, layer, label, heat.stale, shown.ratio);
    const mapping = heat.params.profile?.mapping;
    const tip = new this.vs.MarkdownString(
      `**NKI heatmap** — coloured by *${metricLabel}*${this.metric === 'auto' && layer !== 'compare' ? " (the kernel's bottleneck's)" : ''}, ` +
        `${shown.label}` +
        (layer === 'measured' && heat.params.profile?.format ? ` (${heat.params.profile.format})` : '') +
        (layer === 'compare' ? ': each line by |measured − estimated| (hover and inlay hints give the sign)' : '') +
        (mapping?.recorded && layer === 'measured'
          ? `.\n\nSource mapping: \`${mapping.recorded}\` → \`${mapping.local ?? '?'}\` (${mapping.how ?? 'mapped'})`
          : '') +
        `.\n\nCool → hot: ${['▁', '▂', '▃', '▄', '▅', '▆', '▇'].join(' ')}\n\nClick to choose the metric.`,
    );
    this.legend.tooltip = tip;
    this.legend.show();
    const uri = this.vs.window.activeTextEditor?.document.uri.toString() ?? '';
    const others = this.layers.available(uri).length > 1 ? ' $(chevron-down)' : '';
    this.layerItem.text = `$(layers) ${LAYER_NAMES[layer]}${others}`;
    this.layerItem.tooltip = `${shown.label}. Click to switch the heat layer (measured, estimated, compare).`;
    this.layerItem.show();
  }
}

/** The layer's name in the status bar. */
export const LAYER_NAMES: Record<HeatLayer, string> = {
  measured: 'Measured',
  estimate: 'Estimated',
  compare: 'Measured − Estimated',
};
