/** "Next Hottest Line": walk the lines from hottest to coolest, starting after the one under the cursor. */
import { type HeatLine, type Metric, metricValue } from './model';

/** Hot lines, hottest first; ties by line number so the order is stable. */
export function rankLines(lines: readonly HeatLine[], metric: Metric): number[] {
  return lines
    .filter((l) => metricValue(l, metric) > 0)
    .sort((a, b) => metricValue(b, metric) - metricValue(a, metric) || a.line - b.line)
    .map((l) => l.line);
}

/**
 * The line to jump to from `current`: the next in rank after `current` when it is a hot line, else the
 * hottest; wraps around. Undefined when nothing is hot.
 */
export function nextHottest(lines: readonly HeatLine[], metric: Metric, current: number): number | undefined {
  const ranked = rankLines(lines, metric);
  if (ranked.length === 0) return undefined;
  const at = ranked.indexOf(current);
  return ranked[(at + 1) % ranked.length];
}
