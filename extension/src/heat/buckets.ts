/**
 * Heat buckets and the palette. A fixed number of buckets means a fixed number of decoration types
 * (one per bucket), however many lines are hot.
 */
import { type HeatLine, type Metric, metricValue } from './model';

export const BUCKETS = 7;

/**
 * ColorBrewer "YlOrRd" 7-class sequential scheme (colorbrewer2.org marks it colour-blind safe): heat
 * reads as lightness as well as hue, so it survives deuteranopia and greyscale.
 */
export const PALETTE: readonly string[] = ['#ffffb2', '#fed976', '#feb24c', '#fd8d3c', '#fc4e2a', '#e31a1c', '#b10026'];

/**
 * The same scheme for light themes, one step darker per bucket: classes 3-9 of ColorBrewer's 9-class "YlOrRd",
 * because its palest yellows vanish on a white editor (bars and washes of cool lines could not be seen).
 */
export const LIGHT_PALETTE: readonly string[] = [
  '#fed976',
  '#feb24c',
  '#fd8d3c',
  '#fc4e2a',
  '#e31a1c',
  '#bd0026',
  '#800026',
];

/** Line background opacity per bucket: heat-scaled, faint for cool lines so code stays readable. */
export function backgroundAlpha(bucket: number): number {
  return 0.06 + (0.34 * bucket) / (BUCKETS - 1);
}

/** `#rrggbb` + alpha → `rgba(...)`. */
export function rgba(hex: string, alpha: number): string {
  const n = Number.parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${alpha.toFixed(3)})`;
}

/**
 * Bucket of a value relative to the hottest line: linear in value/max, so bucket 6 is always the hottest
 * line and a line at half the max sits in the middle. Zero values get no bucket (-1): they are not painted.
 */
export function bucketOf(value: number, max: number): number {
  if (!(value > 0) || !(max > 0)) return -1;
  const ratio = Math.min(1, value / max);
  return Math.min(BUCKETS - 1, Math.floor(ratio * BUCKETS));
}

export interface Bucketed {
  line: HeatLine;
  value: number;
  ratio: number;
  bucket: number;
}

/** Bucket every line with a positive value for `metric`. */
export function bucketLines(lines: readonly HeatLine[], metric: Metric): Bucketed[] {
  const max = lines.reduce((m, l) => Math.max(m, metricValue(l, metric)), 0);
  const out: Bucketed[] = [];
  for (const line of lines) {
    const value = metricValue(line, metric);
    const bucket = bucketOf(value, max);
    if (bucket >= 0) out.push({ line, value, ratio: value / max, bucket });
  }
  return out;
}
