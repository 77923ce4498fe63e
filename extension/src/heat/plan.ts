/**
 * What to paint, as plain data: for each heat bucket the hot lines, and their bars. Backgrounds and
 * overview-ruler marks cover the whole document as runs of adjacent lines; bars (one piece of decoration
 * text per line, which VS Code turns into a CSS rule each) are only painted on a window around what is on
 * screen. The painter turns this into vscode ranges; tests check it directly.
 *
 * Styles (setting `heatmap.style`): `compact` (the default) marks every line with heat in the gutter and writes
 * the value after the end of the hottest lines only, so the code keeps every column; `bars` draws a fixed-width
 * bar and value before each hot line and pads the cold lines to match; `background` paints the backgrounds only.
 */
import { barText } from './bars';
import { BUCKETS, bucketLines } from './buckets';
import { formatMetric } from './format';
import { HEAT_STYLES } from '../settingsKeys.generated';
import type { HeatLine, Metric } from './model';

export type HeatStyle = (typeof HEAT_STYLES)[number];

export function isHeatStyle(v: unknown): v is HeatStyle {
  return HEAT_STYLES.includes(v as HeatStyle);
}

/** Compact style: the lowest bucket whose lines show their value (the top three of BUCKETS, at least 4/7 of the hottest). */
export const VALUE_BUCKET = BUCKETS - 3;

export interface PaintedLine {
  line: number;
  bucket: number;
  /** The line's metric value and its share of the hottest line's. */
  value: number;
  ratio: number;
  heat: HeatLine;
}

export interface DecorationPlan {
  metric: Metric;
  /** Index = bucket (0 coolest … BUCKETS-1 hottest), lines ascending. */
  buckets: PaintedLine[][];
  /** The same lines by line number. */
  byLine: Map<number, PaintedLine>;
  lineCount: number;
  style: HeatStyle;
}

/** A hot line's bar (bars style) or value (compact style) in the window. */
export interface BarLine {
  line: number;
  bucket: number;
  text: string;
}

/**
 * Plan the decorations of one document with `lineCount` lines. Lines past the end (the file shrank
 * since the profile was taken) are skipped.
 */
export function planDecorations(
  lines: readonly HeatLine[],
  metric: Metric,
  lineCount: number,
  style: HeatStyle,
): DecorationPlan {
  const buckets: PaintedLine[][] = Array.from({ length: BUCKETS }, () => []);
  const byLine = new Map<number, PaintedLine>();
  for (const b of bucketLines(lines, metric)) {
    if (b.line.line >= lineCount || byLine.has(b.line.line)) continue;
    const painted = { line: b.line.line, bucket: b.bucket, value: b.value, ratio: b.ratio, heat: b.line };
    byLine.set(painted.line, painted);
    buckets[b.bucket].push(painted);
  }
  for (const bucket of buckets) bucket.sort((a, b) => a.line - b.line);
  return { metric, buckets, byLine, lineCount, style };
}

/** Ascending line numbers → [first, last] runs of consecutive lines (one range each instead of one per line). */
export function lineRuns(lines: readonly number[]): [number, number][] {
  const runs: [number, number][] = [];
  for (const line of lines) {
    const last = runs[runs.length - 1];
    if (last && line === last[1] + 1) last[1] = line;
    else runs.push([line, line]);
  }
  return runs;
}

/** Inclusive line window. */
export interface LineWindow {
  from: number;
  to: number;
}

const MIN_MARGIN = 20;

/** The lines from the first to the last visible one, and the margin kept around them. */
function screen(visible: readonly LineWindow[]): { from: number; to: number; margin: number } | undefined {
  if (visible.length === 0) return undefined;
  const from = Math.min(...visible.map((v) => v.from));
  const to = Math.max(...visible.map((v) => v.to));
  return { from, to, margin: Math.max(MIN_MARGIN, to - from + 1) };
}

/**
 * The lines to give bars: what is on screen plus one screen above and below (at least MIN_MARGIN lines),
 * so scrolling shows painted lines while the window moves along.
 */
export function barWindow(visible: readonly LineWindow[], lineCount: number): LineWindow {
  const s = screen(visible);
  if (!s || lineCount === 0) return { from: 0, to: -1 };
  return { from: Math.max(0, s.from - s.margin), to: Math.min(lineCount - 1, s.to + s.margin) };
}

/**
 * True when the screen came within half a margin of the painted window's edge (unless the window already
 * reaches the document's end there): time to paint a new window.
 */
export function windowStale(painted: LineWindow, visible: readonly LineWindow[], lineCount: number): boolean {
  const s = screen(visible);
  if (!s || lineCount === 0) return false;
  const topOk = painted.from === 0 || s.from - painted.from >= s.margin / 2;
  const bottomOk = painted.to >= lineCount - 1 || painted.to - s.to >= s.margin / 2;
  return !(painted.from <= s.from && painted.to >= s.to && topOk && bottomOk);
}

/**
 * The text decorations inside `window`, made here so only the window's are formatted. Bars style: every hot
 * line's bar, and the cold lines that get a blank one; compact style: the value of the lines of VALUE_BUCKET and
 * up, no padding; background style: nothing.
 */
export function barsInWindow(plan: DecorationPlan, window: LineWindow): { hot: BarLine[]; cold: number[] } {
  const hot: BarLine[] = [];
  const cold: number[] = [];
  if (plan.style === 'background' || plan.byLine.size === 0) return { hot, cold };
  for (let line = Math.max(0, window.from); line <= Math.min(plan.lineCount - 1, window.to); line += 1) {
    const painted = plan.byLine.get(line);
    const value = painted ? formatMetric(plan.metric, painted.value) : '';
    if (painted && plan.style === 'bars')
      hot.push({ line, bucket: painted.bucket, text: barText(painted.ratio, value) });
    else if (painted && painted.bucket >= VALUE_BUCKET) hot.push({ line, bucket: painted.bucket, text: value });
    else if (plan.style === 'bars') cold.push(line);
  }
  return { hot, cold };
}
