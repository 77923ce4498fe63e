/**
 * Turns a DecorationPlan into editor decorations with a fixed set of decoration types: one per heat
 * bucket (fresh and stale variants) plus one for the blank bar on cold lines. Types are created once
 * and reused for every editor and every update.
 */
import type * as vscode from 'vscode';
import type { VsCode } from '../vscodeApi';
import { BAR_WIDTH_CH, blankBar } from './bars';
import { BUCKETS, PALETTE, backgroundAlpha, rgba } from './buckets';
import type { DecorationPlan } from './plan';

/** Stale heat keeps its shape but fades, so it is visibly "old" data. */
const STALE_FACTOR = 0.4;

export class HeatPainter {
  private readonly fresh: vscode.TextEditorDecorationType[];
  private readonly stale: vscode.TextEditorDecorationType[];
  private readonly cold: vscode.TextEditorDecorationType;
  /** Types with ranges on each editor: only those need clearing (each setDecorations is an IPC round). */
  private readonly painted = new WeakMap<vscode.TextEditor, Set<vscode.TextEditorDecorationType>>();

  constructor(private readonly vs: VsCode) {
    const make = (bucket: number, dim: number): vscode.TextEditorDecorationType =>
      vs.window.createTextEditorDecorationType({
        isWholeLine: true,
        backgroundColor: rgba(PALETTE[bucket], backgroundAlpha(bucket) * dim),
        overviewRulerColor: rgba(PALETTE[bucket], dim === 1 ? 0.9 : 0.35),
        overviewRulerLane: vs.OverviewRulerLane.Right,
        rangeBehavior: vs.DecorationRangeBehavior.ClosedClosed,
        before: {
          color: rgba(PALETTE[bucket], dim === 1 ? 1 : 0.5),
          width: `${BAR_WIDTH_CH}ch`,
          fontStyle: 'normal',
        },
      });
    this.fresh = Array.from({ length: BUCKETS }, (_, b) => make(b, 1));
    this.stale = Array.from({ length: BUCKETS }, (_, b) => make(b, STALE_FACTOR));
    this.cold = vs.window.createTextEditorDecorationType({
      before: { contentText: blankBar(), width: `${BAR_WIDTH_CH}ch` },
    });
  }

  /** Paint `plan` on `editor` (replacing what was there). */
  paint(editor: vscode.TextEditor, plan: DecorationPlan, stale: boolean): void {
    const vs = this.vs;
    const active = stale ? this.stale : this.fresh;
    const before = this.painted.get(editor) ?? new Set();
    const now = new Set<vscode.TextEditorDecorationType>();
    const set = (type: vscode.TextEditorDecorationType, ranges: vscode.Range[] | vscode.DecorationOptions[]): void => {
      if (ranges.length === 0) return; // cleared below if it had ranges before
      now.add(type);
      editor.setDecorations(type, ranges);
    };
    for (let b = 0; b < BUCKETS; b += 1) {
      set(
        active[b],
        plan.buckets[b].map((p) => ({
          range: new vs.Range(p.line, 0, p.line, 0),
          renderOptions: p.bar ? { before: { contentText: p.bar } } : undefined,
        })),
      );
    }
    set(this.cold, plan.cold.map((line) => new vs.Range(line, 0, line, 0)));
    for (const type of before) if (!now.has(type)) editor.setDecorations(type, []);
    this.painted.set(editor, now);
  }

  clear(editor: vscode.TextEditor): void {
    for (const t of this.painted.get(editor) ?? []) editor.setDecorations(t, []);
    this.painted.delete(editor);
  }

  dispose(): void {
    for (const t of [...this.fresh, ...this.stale, this.cold]) t.dispose();
  }
}
