/**
 * Reading `nki/simulationResult` (server/simulate/job.py: status, message, backend, kernel, path, timings
 * in seconds, oracle, peak, warnings, error, cost) into what the notification, status item and panel
 * show. Tolerant: unknown or missing fields are skipped, never thrown on.
 */

export type SimStatus =
  'passed' | 'failed' | 'error' | 'timeout' | 'memory_limit' | 'cancelled' | 'crashed' | 'refused' | 'unknown';

export interface SimulationResult {
  status: SimStatus;
  message: string;
  backend?: string;
  kernel?: string;
  uri?: string;
  path?: string;
  timings: Record<string, number>;
  oracle?: OracleJson;
  peak?: Record<string, unknown>;
  warnings: string[];
  error?: { message?: string; kind?: string; file?: string; line?: number };
  cost?: Record<string, unknown>;
}

export interface OracleMetric {
  name: string;
  value: unknown;
  threshold: string;
  passed: boolean | null;
}

export interface OracleJson {
  hasReference?: boolean;
  passed?: boolean;
  problems?: string[];
  inputs?: OracleMetric[];
  outputs?: {
    name: string;
    shape: number[];
    dtype: string;
    nan_count?: number;
    inf_count?: number;
    metrics?: OracleMetric[];
    notes?: string[];
    passed?: boolean;
  }[];
}

const STATUSES: readonly SimStatus[] = [
  'passed',
  'failed',
  'error',
  'timeout',
  'memory_limit',
  'cancelled',
  'crashed',
  'refused',
];

function obj(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

export function parseSimulationResult(raw: unknown): SimulationResult {
  const outer = obj(raw) ?? {};
  // The notification wraps the result: {uri, kernel, result: {...}}; the command answers with the result itself.
  const inner = obj(outer.result);
  const r = inner ? { uri: outer.uri, kernel: outer.kernel, ...inner } : outer;
  const status = STATUSES.includes(r.status as SimStatus) ? (r.status as SimStatus) : 'unknown';
  const timings: Record<string, number> = {};
  for (const [k, v] of Object.entries(obj(r.timings) ?? {})) if (typeof v === 'number') timings[k] = v;
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  return {
    status,
    message: str(r.message) ?? str(obj(r.error)?.message) ?? '',
    backend: str(r.backend),
    kernel: str(r.kernel),
    uri: str(r.uri),
    path: str(r.path),
    timings,
    oracle: obj(r.oracle),
    peak: obj(r.peak),
    warnings: Array.isArray(r.warnings) ? r.warnings.filter((w): w is string => typeof w === 'string') : [],
    error: obj(r.error),
    cost: obj(r.cost),
  };
}

export function totalSeconds(result: SimulationResult): number | undefined {
  if (typeof result.timings.total === 'number') return result.timings.total;
  const values = Object.values(result.timings);
  return values.length ? values.reduce((a, b) => a + b, 0) : undefined;
}

/** One line for a notification: "rmsnorm: passed — matches the reference · embedded simulator · 1.24 s". */
export function summaryLine(result: SimulationResult): string {
  const parts: string[] = [];
  const head = `${result.kernel ?? 'kernel'}: ${result.status.replace('_', ' ')}`;
  parts.push(result.message ? `${head} — ${result.message}` : head);
  if (result.backend) parts.push(`${result.backend} backend`);
  const total = totalSeconds(result);
  if (total !== undefined) parts.push(`${total.toFixed(2)} s`);
  if (result.warnings.length) parts.push(`${result.warnings.length} warning${result.warnings.length > 1 ? 's' : ''}`);
  return parts.join(' · ');
}

export function isSuccess(result: SimulationResult): boolean {
  return result.status === 'passed';
}
