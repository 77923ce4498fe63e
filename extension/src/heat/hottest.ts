/** "Next Hottest Line": walk the lines from hottest to coolest, from the hottest, wrapping. */
import { type HeatLine, type Metric, metricValue } from './model';

/**
 * Hot lines, hottest first; ties by line number so the order is stable. `metric` `'rank'`: the server's order (the
 * payload's `rank`, by the kernel's bottleneck: the order the CLI, JSON and MCP list lines in).
 */
export function rankLines(lines: readonly HeatLine[], metric: Metric | 'rank'): number[] {
  if (metric === 'rank') {
    return lines
      .filter((l) => typeof l.rank === 'number' && l.rank > 0)
      .sort((a, b) => (a.rank ?? 0) - (b.rank ?? 0))
      .map((l) => l.line);
  }
  return lines
    .filter((l) => metricValue(l, metric) > 0)
    .sort((a, b) => metricValue(b, metric) - metricValue(a, metric) || a.line - b.line)
    .map((l) => l.line);
}

/** One step of the walk: the line, its rank (1 = hottest) and the number of hot lines. */
export interface HottestStep {
  line: number;
  rank: number;
  of: number;
}

/**
 * The step after `previous`: the next in rank after it when it is a hot line, else the hottest; wraps around.
 * Undefined when nothing is hot. The caller passes the line the walk jumped to last, not the cursor's, so a
 * walk always starts at the hottest line.
 */
export function hottestStep(
  lines: readonly HeatLine[],
  metric: Metric | 'rank',
  previous: number,
): HottestStep | undefined {
  const ranked = rankLines(lines, metric);
  if (ranked.length === 0) return undefined;
  const at = (ranked.indexOf(previous) + 1) % ranked.length;
  return { line: ranked[at], rank: at + 1, of: ranked.length };
}
