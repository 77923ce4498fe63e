/**
 * The heatmap in the editor: keeps the latest `nki/heatmap` data per document, paints it on every
 * visible editor of that document, shifts it with edits (marking it stale), shows the legend in the
 * status bar and jumps to the next hottest line. The per-line Markdown breakdown is the language
 * server's hover (profile and simulate features), so every LSP editor gets it and VS Code shows it once.
 */
import type * as vscode from 'vscode';
import { CLIENT_COMMANDS } from '../protocol.generated';
import type { VsCode } from '../vscodeApi';
import { legendText } from './legend';
import { formatMetric } from './format';
import { hottestStep } from './hottest';
import {
  type HeatLine,
  type HeatmapParams,
  METRICS,
  METRIC_FIELDS,
  METRIC_LABELS,
  type Metric,
  isMetric,
  metricValue,
  profileLabel,
} from './model';
import { HeatPainter } from './painter';
import { HEAT_STYLES } from '../settingsKeys.generated';
import { type HeatStyle, isHeatStyle, planDecorations } from './plan';
import { type LineChange, changesLines, shiftLines } from './shift';

interface DocHeat {
  params: HeatmapParams;
  lines: HeatLine[];
  byLine: Map<number, HeatLine>;
  stale: boolean;
}

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
  private readonly docs = new Map<string, DocHeat>();
  /** Where Next Hottest Line last put the cursor. */
  private walk: { uri: string; line: number } | undefined;
  private readonly painter: HeatPainter;
  private readonly legend: vscode.StatusBarItem;
  private readonly disposables: vscode.Disposable[] = [];
  private metric: Metric;

  constructor(
    private readonly vs: VsCode,
    private readonly onPainted: (timing: PaintTiming) => void = () => undefined,
  ) {
    this.painter = new HeatPainter(vs);
    const configured = vs.workspace.getConfiguration('nki-studio').get<string>('heatmapMetric');
    this.metric = isMetric(configured) ? configured : 'busy';
    this.legend = vs.window.createStatusBarItem('nki-studio.heatLegend', vs.StatusBarAlignment.Right, 100);
    this.legend.name = 'NKI Heatmap';
    this.legend.command = CLIENT_COMMANDS.pickHeatmapMetric;
    this.disposables.push(
      this.legend,
      vs.window.onDidChangeVisibleTextEditors((editors) => editors.forEach((e) => this.paintEditor(e))),
      vs.window.onDidChangeActiveTextEditor(() => this.updateLegend()),
      vs.window.onDidChangeTextEditorVisibleRanges((e) => this.painter.scrolled(e.textEditor)),
      vs.workspace.onDidChangeTextDocument((e) => this.onEdit(e)),
      vs.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('nki-studio.heatmapMetric') || e.affectsConfiguration('nki-studio.heatmap.style')) {
          const m = vs.workspace.getConfiguration('nki-studio').get<string>('heatmapMetric');
          if (isMetric(m)) this.metric = m;
          this.repaintAll();
        }
      }),
    );
  }

  /** New data from the server (measured profile or estimate) for one document. */
  apply(params: HeatmapParams): void {
    if (params.lines.length === 0) {
      this.docs.delete(params.uri);
    } else {
      this.docs.set(params.uri, {
        params,
        lines: params.lines,
        byLine: index(params.lines),
        stale: params.stale === true,
      });
    }
    for (const editor of this.editorsOf(params.uri)) this.paintEditor(editor);
    this.updateLegend();
  }

  clear(): void {
    this.docs.clear();
    for (const editor of this.vs.window.visibleTextEditors) this.painter.clear(editor);
    this.updateLegend();
  }

  get currentMetric(): Metric {
    return this.metric;
  }

  /** The heat of a document (for the kernel panel and tests). */
  heatOf(uri: string): { params: HeatmapParams; lines: readonly HeatLine[]; stale: boolean } | undefined {
    return this.docs.get(uri);
  }

  async pickMetric(): Promise<void> {
    const defs = this.activeHeat()?.params.metric_defs ?? {};
    const items = METRICS.map((m) => ({
      label: METRIC_LABELS[m],
      description: m === this.metric ? 'current' : undefined,
      detail: defs[METRIC_FIELDS[m]]?.description,
      metric: m,
    }));
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
    const heat = editor && this.docs.get(editor.document.uri.toString());
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
    const step = hottestStep(heat.lines, this.metric, from);
    if (step === undefined) return undefined;
    this.walk = { uri, line: step.line };
    const pos = new this.vs.Position(step.line, 0);
    editor.selection = new this.vs.Selection(pos, pos);
    editor.revealRange(new this.vs.Range(pos, pos), this.vs.TextEditorRevealType.InCenterIfOutsideViewport);
    const value = heat.byLine.get(step.line);
    const shown = value ? ` · ${formatMetric(this.metric, metricValue(value, this.metric))}` : '';
    this.vs.window.setStatusBarMessage(
      `NKI: hottest line ${step.rank} of ${step.of} (line ${step.line + 1}${shown})`,
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

  private activeHeat(): DocHeat | undefined {
    const editor = this.vs.window.activeTextEditor;
    return editor ? this.docs.get(editor.document.uri.toString()) : undefined;
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
    const heat = this.docs.get(uri);
    if (!heat) {
      this.painter.clear(editor);
      return;
    }
    const started = performance.now();
    const plan = planDecorations(heat.lines, this.metric, editor.document.lineCount, this.style());
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
    const heat = this.docs.get(uri);
    if (!heat || event.contentChanges.length === 0) return;
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
    const wasStale = heat.stale;
    heat.stale = true;
    if (changes.some(changesLines)) {
      heat.lines = shiftLines(heat.lines, changes);
      heat.byLine = index(heat.lines);
    } else if (wasStale) {
      return; // typing within a line of already-stale heat: nothing moves, nothing to repaint
    }
    for (const editor of this.editorsOf(uri)) this.paintEditor(editor);
    this.updateLegend();
  }

  private updateLegend(): void {
    const heat = this.activeHeat();
    const any = this.docs.size > 0;
    void this.vs.commands.executeCommand('setContext', 'nki-studio.heatmapActive', any);
    if (!heat) {
      this.legend.hide();
      return;
    }
    const label = profileLabel(heat.params);
    this.legend.text = legendText(METRIC_LABELS[this.metric], heat.params.source, label, heat.stale);
    const mapping = heat.params.profile?.mapping;
    const tip = new this.vs.MarkdownString(
      `**NKI heatmap** — coloured by *${METRIC_LABELS[this.metric]}*, ` +
        (heat.params.source === 'measured'
          ? `measured (profile: ${label}${heat.params.profile?.format ? `, ${heat.params.profile.format}` : ''})`
          : '**estimated** from the simulator trace (scheduled timeline), not measured') +
        (mapping?.recorded
          ? `.\n\nSource mapping: \`${mapping.recorded}\` → \`${mapping.local ?? '?'}\` (${mapping.how ?? 'mapped'})`
          : '') +
        `.\n\nCool → hot: ${['▁', '▂', '▃', '▄', '▅', '▆', '▇'].join(' ')}\n\nClick to choose the metric.`,
    );
    this.legend.tooltip = tip;
    this.legend.show();
  }
}

function index(lines: readonly HeatLine[]): Map<number, HeatLine> {
  return new Map(lines.map((l) => [l.line, l]));
}
