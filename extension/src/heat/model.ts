/**
 * The `nki/heatmap` notification as the client keeps it, plus the metric choices. Plain data, no vscode types.
 * The wire types are generated from server/protocol/heatmap.py (protocol.generated.ts); the client tolerates
 * payloads that lack what an older or partial server omits, so only what it cannot do without is required.
 */
import {
  type EstimatedKernel,
  HEATLAYER_VALUES,
  HEATMETRIC_VALUES,
  HEATSOURCE_VALUES,
  type HeatMetric,
  type HeatFinding,
  type HeatLayer,
  type HeatLayerParams,
  type HeatLine as WireHeatLine,
  type HeatmapParams as WireHeatmap,
  type MeasuredKernel,
  type MeasuredVsEstimated,
  type MetricDef,
  NOTIFICATIONS,
  type ProfileInfo,
} from '../protocol.generated';

export type { HeatMetric, HeatSource, MetricDef, ProfileInfo } from '../protocol.generated';

/** One source line's figures. `line` is 0-based like every LSP position. */
export type HeatLine = Pick<
  WireHeatLine,
  'line' | 'busy_ns' | 'share' | 'instr' | 'wait_ns' | 'engines' | 'dma_bytes'
> &
  Partial<WireHeatLine>;

/** An investigation finding on one of the document's lines (0-based). */
export type Finding = HeatFinding;

/**
 * The payload's `kernel` object (a measured or an estimated kernel) as the panel reads it: the field names are
 * the generated ones, each value is checked before use, so a partial or older payload shows as far as it goes.
 */
export type KernelFields = Partial<Record<keyof MeasuredKernel | keyof EstimatedKernel, unknown>> &
  Record<string, unknown>; // and what older servers sent (engine_ns, total_ns), which the panel still reads

/** A payload as parsed: the uri, source and lines always; the rest as far as the server sent it. */
export interface HeatmapParams extends Pick<WireHeatmap, 'uri' | 'source'> {
  /** The kernel's bottleneck's metric, what `auto` colours by. */
  default_metric?: HeatMetric;
  profile?: Partial<ProfileInfo> | null;
  metric_defs?: Record<string, MetricDef>;
  stale?: boolean;
  lines: HeatLine[];
  kernel?: KernelFields;
  findings?: Finding[];
  /** The loaded profile against the document's estimate, when the server has both (the kernel panel). */
  measured_vs_estimated?: MeasuredVsEstimated;
}

/** Payload field each metric reads (also the key of its definition in `metric_defs`). */
export const METRIC_FIELDS: Record<Metric, 'time_ns' | 'busy_ns' | 'instr' | 'wait_ns' | 'dma_bytes' | 'dma_ns'> = {
  time: 'time_ns',
  busy: 'busy_ns',
  instr: 'instr',
  wait: 'wait_ns',
  dma: 'dma_bytes',
  dma_time: 'dma_ns',
};

/** A short name for the data's origin: the profile's label, else its file name. */
export function profileLabel(params: Pick<HeatmapParams, 'profile'>): string {
  const p = params.profile;
  if (p?.label) return p.label;
  if (p?.path) return p.path.split(/[\\/]/).filter(Boolean).pop() ?? p.path;
  return 'profile';
}

export const METRICS = HEATMETRIC_VALUES;
export type Metric = HeatMetric;
/** What the user picks: a metric, or `auto` (the payload's `default_metric`, its kernel's bottleneck's). */
export type MetricChoice = Metric | 'auto';

export const METRIC_LABELS: Record<Metric, string> = {
  time: 'time (compute + DMA issued)',
  busy: 'busy time',
  instr: 'instructions',
  wait: 'wait time',
  dma: 'DMA bytes',
  dma_time: 'DMA time issued',
};

export function isMetric(value: unknown): value is Metric {
  return typeof value === 'string' && (METRICS as readonly string[]).includes(value);
}

export function isMetricChoice(value: unknown): value is MetricChoice {
  return value === 'auto' || isMetric(value);
}

/** The metric a choice means for one payload: `auto` is the payload's default (busy from a server without one). */
export function resolveMetric(choice: MetricChoice, params: Pick<HeatmapParams, 'default_metric'>): Metric {
  if (choice !== 'auto') return choice;
  return isMetric(params.default_metric) ? params.default_metric : 'busy';
}

/** The number a metric reads from a line (non-finite and missing values count as 0). */
export function metricValue(line: HeatLine, metric: Metric): number {
  const raw = line[METRIC_FIELDS[metric]];
  return typeof raw === 'number' && Number.isFinite(raw) && raw > 0 ? raw : 0;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The shape the panel's measured-vs-estimated section reads (its rows are the server's; checked shallowly). */
function isComparison(v: unknown): v is MeasuredVsEstimated {
  return (
    isObject(v) &&
    typeof v.measured === 'string' &&
    typeof v.estimated === 'string' &&
    isObject(v.kernel) &&
    isObject(v.engines) &&
    Array.isArray(v.lines) &&
    typeof v.lines_matched_by === 'string'
  );
}

/** Validate a notification payload; returns a message for bad input instead of throwing. */
export function parseHeatmap(raw: unknown): HeatmapParams | string {
  if (typeof raw !== 'object' || raw === null) {
    return `${NOTIFICATIONS.heatmap}: payload is not an object`;
  }
  const p = raw as Record<string, unknown>;
  if (typeof p.uri !== 'string') {
    return `${NOTIFICATIONS.heatmap}: missing uri`;
  }
  const source = p.source as WireHeatmap['source'];
  if (!HEATSOURCE_VALUES.includes(source)) {
    return `${NOTIFICATIONS.heatmap}: source must be "measured" or "estimate", got ${JSON.stringify(p.source)}`;
  }
  if (!Array.isArray(p.lines)) {
    return `${NOTIFICATIONS.heatmap}: lines is not a list`;
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
    typeof p.profile === 'string'
      ? { label: p.profile }
      : isObject(p.profile)
        ? (p.profile as Partial<ProfileInfo>)
        : null;
  return {
    uri: p.uri,
    source,
    profile,
    metric_defs: isObject(p.metric_defs) ? (p.metric_defs as Record<string, MetricDef>) : {},
    stale: p.stale === true,
    ...(isMetric(p.default_metric) ? { default_metric: p.default_metric } : {}),
    lines,
    kernel: isObject(p.kernel) ? p.kernel : {},
    findings: Array.isArray(p.findings) ? (p.findings as unknown[]).filter(isFinding) : [],
    ...(isComparison(p.measured_vs_estimated) ? { measured_vs_estimated: p.measured_vs_estimated } : {}),
  };
}

function isFinding(v: unknown): v is Finding {
  if (!isObject(v)) return false;
  return (
    Number.isInteger(v.line) && (v.line as number) >= 0 && typeof v.code === 'string' && typeof v.message === 'string'
  );
}

/** Validate a `nki/heatLayer` payload; returns a message for bad input instead of throwing. */
export function parseHeatLayer(raw: unknown): HeatLayerParams | string {
  if (!isObject(raw) || typeof raw.uri !== 'string') return `${NOTIFICATIONS.heatLayer}: missing uri`;
  const known = (v: unknown): v is HeatLayer => HEATLAYER_VALUES.includes(v as HeatLayer);
  if (raw.layer !== null && !known(raw.layer))
    return `${NOTIFICATIONS.heatLayer}: unknown layer ${JSON.stringify(raw.layer)}`;
  const available = Array.isArray(raw.available) ? raw.available.filter(known) : [];
  return { uri: raw.uri, layer: raw.layer, available, label: typeof raw.label === 'string' ? raw.label : '' };
}
