/**
 * What to paint, as plain data: for each heat bucket the lines and their bar text, plus the cold lines
 * that get a blank bar. The painter turns this into vscode ranges; tests check it directly.
 */
import { barText } from './bars';
import { BUCKETS, bucketLines } from './buckets';
import { formatMetric } from './format';
import type { HeatLine, Metric } from './model';

export interface PaintedLine {
  line: number;
  bar: string;
  heat: HeatLine;
}

export interface DecorationPlan {
  /** Index = bucket (0 coolest … BUCKETS-1 hottest). */
  buckets: PaintedLine[][];
  /** Lines without heat that get a blank bar (only when bars are shown). */
  cold: number[];
}

/**
 * Plan the decorations of one document with `lineCount` lines. Lines past the end (the file shrank
 * since the profile was taken) are skipped.
 */
export function planDecorations(lines: readonly HeatLine[], metric: Metric, lineCount: number, showBars: boolean): DecorationPlan {
  const buckets: PaintedLine[][] = Array.from({ length: BUCKETS }, () => []);
  const hot = new Set<number>();
  for (const b of bucketLines(lines, metric)) {
    if (b.line.line >= lineCount || hot.has(b.line.line)) continue;
    hot.add(b.line.line);
    buckets[b.bucket].push({ line: b.line.line, bar: showBars ? barText(b.ratio, formatMetric(metric, b.value)) : '', heat: b.line });
  }
  const cold: number[] = [];
  if (showBars && hot.size > 0) {
    for (let line = 0; line < lineCount; line += 1) {
      if (!hot.has(line)) cold.push(line);
    }
  }
  return { buckets, cold };
}
