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

/** Where measured heat came from (server/profile/heatmap.py `profile`). */
export interface ProfileInfo {
  label?: string;
  path?: string;
  format?: string;
  schema_version?: string;
  location_source?: string;
  /** How the recorded source path was mapped to the workspace file. */
  mapping?: { recorded?: string; local?: string; how?: string };
}

export interface MetricDef {
  label?: string;
  unit?: string;
  description?: string;
}

export interface HeatmapParams {
  uri: string;
  source: HeatSource;
  profile?: ProfileInfo | null;
  metric_defs?: Record<string, MetricDef>;
  /** The server marks heat stale once the document was edited after it was made. */
  stale?: boolean;
  lines: HeatLine[];
  kernel?: Record<string, unknown>;
  /** Investigation findings on this document's lines (0-based), as the server found them. */
  findings?: Finding[];
}

export interface Finding {
  line: number;
  code: string;
  kind: string;
  message: string;
}

/** Payload field each metric reads (also the key of its definition in `metric_defs`). */
export const METRIC_FIELDS: Record<Metric, 'busy_ns' | 'instr' | 'wait_ns' | 'dma_bytes'> = {
  busy: 'busy_ns',
  instr: 'instr',
  wait: 'wait_ns',
  dma: 'dma_bytes',
};

/** A short name for the data's origin: the profile's label, else its file name. */
export function profileLabel(params: Pick<HeatmapParams, 'profile'>): string {
  const p = params.profile;
  if (p?.label) return p.label;
  if (p?.path) return p.path.split(/[\\/]/).filter(Boolean).pop() ?? p.path;
  return 'profile';
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
  const raw = line[METRIC_FIELDS[metric]];
  return typeof raw === 'number' && Number.isFinite(raw) && raw > 0 ? raw : 0;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
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
    if (
      typeof item === 'object' &&
      item !== null &&
      Number.isInteger((item as HeatLine).line) &&
      (item as HeatLine).line >= 0
    ) {
      const l = item as HeatLine;
      lines.push({ ...l, engines: typeof l.engines === 'object' && l.engines !== null ? l.engines : {} });
    }
  }
  const profile =
    typeof p.profile === 'string' ? { label: p.profile } : isObject(p.profile) ? (p.profile as ProfileInfo) : null;
  return {
    uri: p.uri,
    source: p.source,
    profile,
    metric_defs: isObject(p.metric_defs) ? (p.metric_defs as Record<string, MetricDef>) : {},
    stale: p.stale === true,
    lines,
    kernel: typeof p.kernel === 'object' && p.kernel !== null ? (p.kernel as Record<string, unknown>) : {},
    findings: Array.isArray(p.findings) ? (p.findings as unknown[]).filter(isFinding) : [],
  };
}

function isFinding(v: unknown): v is Finding {
  if (!isObject(v)) return false;
  return (
    Number.isInteger(v.line) && (v.line as number) >= 0 && typeof v.code === 'string' && typeof v.message === 'string'
  );
}
