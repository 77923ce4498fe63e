/**
 * Reading `nki/simulationResult` (typed in protocol.generated.ts, generated from server/protocol/simulation.py)
 * into what the notification, status item and panel show. Tolerant: unknown or missing fields are skipped, never
 * thrown on.
 */
import {
  type ErrorInfo,
  type Estimate,
  type Oracle,
  type Peak,
  STATUS_VALUES,
  type Status,
} from './protocol.generated';

export type SimStatus = Status | 'unknown';

/**
 * What the extension keeps of a result or notice (the generated `AnyResult`), normalised: an unknown status is
 * 'unknown', timings keep the numbers only, missing lists are empty.
 */
export interface SimulationResult {
  status: SimStatus;
  message: string;
  backend?: string;
  kernel?: string;
  uri?: string;
  path?: string;
  timings: Record<string, number>;
  oracle?: Oracle;
  peak?: Peak;
  warnings: string[];
  error?: ErrorInfo;
  /** The estimate: the scheduled timeline, its bounds, per-line table and roofline point. */
  estimate?: Estimate;
  /** SHA-256 of the document text the run was of (the result is stale while the text differs). */
  textSha256?: string;
}

function obj(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

export function parseSimulationResult(raw: unknown): SimulationResult {
  const outer = obj(raw) ?? {};
  // The notification wraps the result: {uri, kernel, result: {...}}; the command answers with the result itself.
  const inner = obj(outer.result);
  const r = inner ? { uri: outer.uri, kernel: outer.kernel, ...inner } : outer;
  const status = STATUS_VALUES.includes(r.status as Status) ? (r.status as Status) : 'unknown';
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
    // Shapes as the server declares them (result.schema.json); only their being objects is checked here.
    oracle: obj(r.oracle) as Oracle | undefined,
    peak: obj(r.peak) as Peak | undefined,
    warnings: Array.isArray(r.warnings) ? r.warnings.filter((w): w is string => typeof w === 'string') : [],
    error: obj(r.error) as ErrorInfo | undefined,
    estimate: obj(r.estimate) as Estimate | undefined,
    textSha256: str(r.textSha256),
  };
}

export function totalSeconds(result: SimulationResult): number | undefined {
  if (typeof result.timings.total === 'number') return result.timings.total;
  const values = Object.values(result.timings);
  return values.length ? values.reduce((a, b) => a + b, 0) : undefined;
}

/** A status in words: `no_reference` is "ran, not checked" (nothing was compared), others as they are spelt. */
export function statusLabel(status: SimStatus): string {
  return status === 'no_reference' ? 'ran, not checked' : status.replace('_', ' ');
}

/**
 * How a result is announced: a pass as information; a run without a reference as a warning (it ran, but nothing
 * was compared: not a green "passed"); a cancellation as information; anything else as an error.
 */
export function severityOf(result: SimulationResult): 'information' | 'warning' | 'error' {
  if (result.status === 'passed' || result.status === 'cancelled') return 'information';
  return result.status === 'no_reference' ? 'warning' : 'error';
}

/** One line for a notification: "rmsnorm: passed — matches the reference · embedded simulator · 1.24 s". */
export function summaryLine(result: SimulationResult): string {
  const parts: string[] = [];
  const head = `${result.kernel ?? 'kernel'}: ${statusLabel(result.status)}`;
  parts.push(result.message ? `${head} — ${result.message}` : head);
  if (result.backend) parts.push(`${result.backend} backend`);
  const total = totalSeconds(result);
  if (total !== undefined) parts.push(`${total.toFixed(2)} s`);
  if (result.warnings.length) parts.push(`${result.warnings.length} warning${result.warnings.length > 1 ? 's' : ''}`);
  return parts.join(' · ');
}
