/**
 * Turns a DecorationPlan into editor decorations with a fixed set of decoration types, created once and
 * reused for every editor and update:
 * - one whole-line background type per heat bucket (fresh and stale variants), painted on the whole
 *   document with plain ranges, one per run of adjacent lines of the bucket: plain ranges take VS Code's
 *   fast path (no per-range options to convert, no CSS), and runs keep the range count small;
 * - compact style: one gutter-mark type per bucket (an SVG bar as wide as the heat), painted like the
 *   backgrounds, and one value type that writes the value after the end of the hottest lines;
 * - bars style: one bar type for hot lines, whose per-line text and colour are instance render options (VS
 *   Code adds a CSS rule for every distinct one), so bars are only painted on a window around the visible
 *   lines and follow scrolling; and one blank-bar type for the cold lines of that window, so code stays
 *   aligned under the bars. Compact values are windowed the same way.
 */
import type * as vscode from 'vscode';
import type { VsCode } from '../vscodeApi';
import { BAR_WIDTH_CH, blankBar } from './bars';
import { BUCKETS, LIGHT_PALETTE, PALETTE, backgroundAlpha, rgba } from './buckets';
import { type DecorationPlan, type LineWindow, barWindow, barsInWindow, lineRuns, windowStale } from './plan';

/** Stale heat keeps its shape but fades, so it is visibly "old" data. */
const STALE_FACTOR = 0.4;

interface EditorState {
  plan: DecorationPlan;
  stale: boolean;
  /** Types with ranges on the editor: only those need clearing (each setDecorations is an IPC message). */
  painted: Set<vscode.TextEditorDecorationType>;
  window: LineWindow;
}

export class HeatPainter {
  private readonly fresh: vscode.TextEditorDecorationType[];
  private readonly stale: vscode.TextEditorDecorationType[];
  private readonly gutter: vscode.TextEditorDecorationType[];
  private readonly bar: vscode.TextEditorDecorationType;
  private readonly cold: vscode.TextEditorDecorationType;
  private readonly value: vscode.TextEditorDecorationType;
  private readonly editors = new WeakMap<vscode.TextEditor, EditorState>();

  constructor(private readonly vs: VsCode) {
    const colours = (
      palette: readonly string[],
      bucket: number,
      dim: number,
    ): vscode.ThemableDecorationRenderOptions => ({
      backgroundColor: rgba(palette[bucket], backgroundAlpha(bucket) * dim),
      overviewRulerColor: rgba(palette[bucket], dim === 1 ? 0.9 : 0.35),
    });
    const background = (bucket: number, dim: number): vscode.TextEditorDecorationType =>
      vs.window.createTextEditorDecorationType({
        isWholeLine: true,
        ...colours(PALETTE, bucket, dim),
        light: colours(LIGHT_PALETTE, bucket, dim),
        overviewRulerLane: vs.OverviewRulerLane.Right,
        rangeBehavior: vs.DecorationRangeBehavior.ClosedClosed,
      });
    this.fresh = Array.from({ length: BUCKETS }, (_, b) => background(b, 1));
    this.stale = Array.from({ length: BUCKETS }, (_, b) => background(b, STALE_FACTOR));
    this.bar = vs.window.createTextEditorDecorationType({
      rangeBehavior: vs.DecorationRangeBehavior.ClosedClosed,
      before: { width: `${BAR_WIDTH_CH}ch`, fontStyle: 'normal' },
    });
    this.cold = vs.window.createTextEditorDecorationType({
      before: { contentText: blankBar(), width: `${BAR_WIDTH_CH}ch` },
    });
    this.gutter = Array.from({ length: BUCKETS }, (_, b) =>
      vs.window.createTextEditorDecorationType({
        gutterIconPath: vs.Uri.parse(gutterMark(PALETTE[b], b)),
        gutterIconSize: 'contain',
        light: { gutterIconPath: vs.Uri.parse(gutterMark(LIGHT_PALETTE[b], b)) },
      }),
    );
    this.value = vs.window.createTextEditorDecorationType({
      rangeBehavior: vs.DecorationRangeBehavior.ClosedClosed,
      after: { margin: '0 0 0 2ch', fontStyle: 'normal' },
    });
  }

  /** Paint `plan` on `editor` (replacing what was there): all backgrounds and gutter marks, text around the visible lines. */
  paint(editor: vscode.TextEditor, plan: DecorationPlan, stale: boolean): void {
    const previous = this.editors.get(editor)?.painted ?? new Set();
    const state: EditorState = { plan, stale, painted: new Set(), window: { from: 0, to: -1 } };
    this.editors.set(editor, state);
    const active = stale ? this.stale : this.fresh;
    for (let b = 0; b < BUCKETS; b += 1) {
      const runs = lineRuns(plan.buckets[b].map((p) => p.line));
      const ranges = runs.map(([first, last]) => new this.vs.Range(first, 0, last, 0));
      this.set(editor, state, active[b], ranges);
      this.set(editor, state, this.gutter[b], plan.style === 'compact' ? ranges : []);
    }
    this.paintBars(editor, state);
    for (const type of previous) if (!state.painted.has(type)) editor.setDecorations(type, []);
  }

  /** The visible lines moved: repaint the bars when the screen nears the edge of their window. */
  scrolled(editor: vscode.TextEditor): void {
    const state = this.editors.get(editor);
    if (state && windowStale(state.window, visibleLines(editor), state.plan.lineCount)) this.paintBars(editor, state);
  }

  clear(editor: vscode.TextEditor): void {
    for (const t of this.editors.get(editor)?.painted ?? []) editor.setDecorations(t, []);
    this.editors.delete(editor);
  }

  dispose(): void {
    for (const t of [...this.fresh, ...this.stale, ...this.gutter, this.bar, this.cold, this.value]) t.dispose();
  }

  private paintBars(editor: vscode.TextEditor, state: EditorState): void {
    state.window = barWindow(visibleLines(editor), state.plan.lineCount);
    const { hot, cold } = barsInWindow(state.plan, state.window);
    const alpha = state.stale ? 0.5 : 1;
    const side = state.plan.style === 'compact' ? 'after' : 'before';
    const [textType, unused] = side === 'after' ? [this.value, this.bar] : [this.bar, this.value];
    this.set(editor, state, unused, []);
    this.set(
      editor,
      state,
      textType,
      hot.map((p) => ({
        range: new this.vs.Range(p.line, 0, p.line, side === 'after' ? Number.MAX_SAFE_INTEGER : 0),
        renderOptions: {
          [side]: { contentText: p.text, color: rgba(PALETTE[p.bucket], alpha) },
          light: { [side]: { color: rgba(LIGHT_PALETTE[p.bucket], alpha) } },
        },
      })),
    );
    this.set(
      editor,
      state,
      this.cold,
      cold.map((line) => new this.vs.Range(line, 0, line, 0)),
    );
  }

  /** Set a type's ranges; an empty list only goes out when the editor has ranges of that type. */
  private set(
    editor: vscode.TextEditor,
    state: EditorState,
    type: vscode.TextEditorDecorationType,
    ranges: vscode.Range[] | vscode.DecorationOptions[],
  ): void {
    if (ranges.length === 0) {
      if (state.painted.delete(type)) editor.setDecorations(type, []);
      return;
    }
    state.painted.add(type);
    editor.setDecorations(type, ranges);
  }
}

function visibleLines(editor: vscode.TextEditor): LineWindow[] {
  return editor.visibleRanges.map((r) => ({ from: r.start.line, to: r.end.line }));
}

/** A gutter mark: an SVG data URI of a bar in `colour`, wider for hotter buckets (2 to 14 of 16 px). */
export function gutterMark(colour: string, bucket: number): string {
  const width = 2 + (12 * bucket) / (BUCKETS - 1);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16"><rect x="0" y="2" width="${width}" height="12" fill="${colour}"/></svg>`;
  return `data:image/svg+xml;utf8,${encodeURIComponent(svg)}`;
}
