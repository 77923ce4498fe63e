/**
 * The `nki/heatmap` notification as the client reads it (written by server/profile/heatmap.py), plus the
 * metric choices. Plain data, no vscode types.
 */

/** One source line's figures. `line` is 0-based like every LSP position. */
export interface HeatLine {
  line: number;
  busy_ns: number;
  share: number;
  instr: number;
  wait_ns: number;
  engines: Record<string, number>;
  dma_bytes: number;
  iterations?: Record<string, unknown>[] | Record<string, unknown>;
  /** Anything else the server adds (top opcodes, fused flag…) is kept and shown in the hover. */
  [extra: string]: unknown;
}

export type HeatSource = 'measured' | 'estimate';

export interface HeatmapParams {
  uri: string;
  source: HeatSource;
  /** Profile name or path (measured) or a label of the estimate. */
  profile?: string | null;
  metric_defs?: Record<string, string>;
  lines: HeatLine[];
  kernel?: Record<string, unknown>;
}

export const METRICS = ['busy', 'instr', 'wait', 'dma'] as const;
export type Metric = (typeof METRICS)[number];

export const METRIC_LABELS: Record<Metric, string> = {
  busy: 'busy time',
  instr: 'instructions',
  wait: 'wait time',
  dma: 'DMA bytes',
};

export function isMetric(value: unknown): value is Metric {
  return typeof value === 'string' && (METRICS as readonly string[]).includes(value);
}

/** The number a metric reads from a line (non-finite and missing values count as 0). */
export function metricValue(line: HeatLine, metric: Metric): number {
  const raw = { busy: line.busy_ns, instr: line.instr, wait: line.wait_ns, dma: line.dma_bytes }[metric];
  return typeof raw === 'number' && Number.isFinite(raw) && raw > 0 ? raw : 0;
}

/** Validate a notification payload; returns a message for bad input instead of throwing. */
export function parseHeatmap(raw: unknown): HeatmapParams | string {
  if (typeof raw !== 'object' || raw === null) {
    return 'nki/heatmap: payload is not an object';
  }
  const p = raw as Record<string, unknown>;
  if (typeof p.uri !== 'string') {
    return 'nki/heatmap: missing uri';
  }
  if (p.source !== 'measured' && p.source !== 'estimate') {
    return `nki/heatmap: source must be "measured" or "estimate", got ${JSON.stringify(p.source)}`;
  }
  if (!Array.isArray(p.lines)) {
    return 'nki/heatmap: lines is not a list';
  }
  const lines: HeatLine[] = [];
  for (const item of p.lines as unknown[]) {
    if (typeof item === 'object' && item !== null && Number.isInteger((item as HeatLine).line) && (item as HeatLine).line >= 0) {
      const l = item as HeatLine;
      lines.push({ ...l, engines: typeof l.engines === 'object' && l.engines !== null ? l.engines : {} });
    }
  }
  return {
    uri: p.uri,
    source: p.source,
    profile: typeof p.profile === 'string' ? p.profile : null,
    metric_defs: typeof p.metric_defs === 'object' && p.metric_defs !== null ? (p.metric_defs as Record<string, string>) : {},
    lines,
    kernel: typeof p.kernel === 'object' && p.kernel !== null ? (p.kernel as Record<string, unknown>) : {},
  };
}
