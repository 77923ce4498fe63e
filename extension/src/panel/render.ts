/**
 * The kernel panel's HTML: last simulation result (oracle metrics, outputs, peak SBUF/PSUM vs capacity)
 * and the profile/estimate summary (engine tracks, DMA vs compute decomposition, roofline). Pure: data in,
 * string out; the CSP allows only inline styles with a nonce and no scripts or network at all.
 */
import { formatBytes, formatLikelyRange, formatNs, formatPercent } from '../heat/format';
import { rankLines } from '../heat/hottest';
import { type HeatLine, type HeatmapParams, profileLabel } from '../heat/model';
import {
  CLIENT_COMMANDS,
  type ClientCommandArguments,
  type EstimateRange,
  type LiveAllocation,
  type OracleMetric,
  type Peak,
} from '../protocol.generated';
import type { SimulationResult } from '../simulationSummary';
import { severityOf, statusLabel, summaryLine } from '../simulationSummary';
import { alignLines, splitLines } from './lineAlign';
import { measuredVsEstimatedSection } from './measuredEstimated';
import { LABEL_PX, SMALL_PX } from './textWidth';
import { type TuneView, tuneSection } from './tune';
import {
  type CapacityBar,
  type Track,
  type WaterfallFamily,
  boundsWaterfall,
  capacityBars,
  decompositionBar,
  esc,
  roofline,
  timeline,
} from './charts';

/** The command the findings list links to (allowed in the webview's command URIs). */
export const GO_TO_LINE = CLIENT_COMMANDS.goToLine;
/** The "Calibrate from this profile" button's command (allowed in the webview's command URIs). */
export const CALIBRATE_FROM_PROFILE = CLIENT_COMMANDS.calibrateFromProfile;

/** The button under a measured profile: fit the estimate to it (server command `calibrate`). */
function calibrateButton(params: HeatmapParams): string[] {
  const path = params.profile?.path;
  if (params.source !== 'measured' || !path) return [];
  const link: ClientCommandArguments[typeof CALIBRATE_FROM_PROFILE] = [path];
  const args = encodeURIComponent(JSON.stringify(link));
  return [`<p><a href="command:${CALIBRATE_FROM_PROFILE}?${args}">Calibrate from this profile</a></p>`];
}

/** What an estimate says about the user's calibration ("calibrated on 5 of your profiles, ..."), if any. */
function calibrationNote(kernel: object): string[] {
  const note = 'calibration' in kernel ? kernel.calibration : undefined;
  return isRecord(note) && typeof note.message === 'string' ? [`<p>${esc(note.message)}</p>`] : [];
}

export interface PanelData {
  simulation?: SimulationResult;
  /** The simulation ran on an earlier version of its document's text. */
  simulationStale?: boolean;
  /** The document's last "Tune kernel…" search. */
  tune?: TuneView;
  /** `lines`: the heat shifted with edits since it arrived, `text`: the document now (both optional). */
  /** `label`: the layer shown, as the server names it ("Measured, from …"). */
  heat?: { params: HeatmapParams; stale: boolean; lines?: readonly LineTime[]; text?: string; label?: string };
  /** The heat data the user chose to compare later data against (NKI: Set Profile Baseline). */
  baseline?: HeatmapParams;
  /** The document's text and the heat's (shifted) lines when the baseline was set: lines are followed across edits. */
  baselineSource?: { text: string; lines: readonly LineTime[] };
}

/** A line's busy time (0-based line), as the before/after view compares them. */
export type LineTime = Pick<HeatLine, 'line' | 'busy_ns'>;

/** One side of the before/after view: its data, and optionally its lines as of `text`. */
export interface CompareSide {
  params: HeatmapParams;
  lines?: readonly LineTime[];
  text?: string;
}

function num(o: Record<string, unknown> | undefined, keys: readonly string[]): number | undefined {
  if (!o) return undefined;
  for (const k of keys) if (typeof o[k] === 'number' && Number.isFinite(o[k])) return o[k];
  return undefined;
}

function obj(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** Peak per memory (SBUF, PSUM…) against its capacity, from the result's `peak` (bytes per partition). */
export function peakBars(peak: Peak | undefined): CapacityBar[] {
  const bars: CapacityBar[] = [];
  for (const [name, region] of Object.entries(peak ?? {})) {
    const used = num(obj(region), ['peakBytes']);
    const capacity = num(obj(region), ['capacityBytes']);
    if (used !== undefined && capacity !== undefined) bars.push({ name: name.toUpperCase(), used, capacity });
  }
  return bars;
}

function metricRow(output: string, m: OracleMetric): string {
  const mark =
    m.passed === true
      ? '<span class="pass">✔ pass</span>'
      : m.passed === false
        ? '<span class="fail">✘ fail</span>'
        : '<span class="na">–</span>';
  const value =
    typeof m.value === 'number'
      ? Number.isInteger(m.value)
        ? String(m.value)
        : m.value.toExponential(3)
      : esc(JSON.stringify(m.value));
  return `<tr><td>${esc(output)}</td><td>${esc(m.name)}</td><td>${value}</td><td>${esc(m.threshold ?? '')}</td><td>${mark}</td></tr>`;
}

function simulationSection(r: SimulationResult, stale: boolean): string {
  // green only for a pass: a run without a reference or a cancelled one is neither pass nor fail
  const cls = r.status === 'passed' ? 'pass' : severityOf(r) === 'error' ? 'fail' : 'na';
  const parts: string[] = [
    `<h2>Simulation <span class="${cls}">${esc(statusLabel(r.status))}</span>${stale ? ' <span class="stale">· stale</span>' : ''}</h2>`,
  ];
  if (stale)
    parts.push(
      '<p class="stale">From an earlier version of the file — re-run (save, or NKI: Simulate Kernel) to update.</p>',
    );
  parts.push(`<p>${esc(summaryLine(r))}</p>`);
  if (r.error?.message)
    parts.push(`<pre class="error">${esc(r.error.message)}${r.error.line ? ` (line ${r.error.line})` : ''}</pre>`);
  const oracle = r.oracle;
  if (oracle) {
    const rows: string[] = [];
    for (const o of oracle.outputs ?? []) for (const m of o.metrics ?? []) rows.push(metricRow(o.name, m));
    for (const m of oracle.inputs ?? []) rows.push(metricRow('inputs', m));
    parts.push(
      `<h3>Oracle ${oracle.hasReference ? '(against the reference)' : '(no reference: shape and finiteness only)'}</h3>`,
    );
    if (rows.length)
      parts.push(
        `<table><tr><th>output</th><th>metric</th><th>value</th><th>needs</th><th></th></tr>${rows.join('')}</table>`,
      );
    for (const p of oracle.problems ?? []) parts.push(`<p class="fail">${esc(p)}</p>`);
    const outs = (oracle.outputs ?? []).map(
      (o) =>
        `<tr><td>${esc(o.name)}</td><td>${esc(o.dtype)}[${o.shape.join(', ')}]</td><td>${o.nan_count ?? 0}</td><td>${o.inf_count ?? 0}</td><td>${esc((o.notes ?? []).join('; '))}</td></tr>`,
    );
    if (outs.length)
      parts.push(
        `<h3>Outputs</h3><table><tr><th>name</th><th>type</th><th>NaN</th><th>Inf</th><th>notes</th></tr>${outs.join('')}</table>`,
      );
  }
  const bars = peakBars(r.peak);
  if (bars.length) parts.push('<h3>Peak on-chip memory per partition</h3>', capacityBars(bars));
  const live = Object.entries(r.peak ?? {}).flatMap(([mem, region]) =>
    Array.isArray(region?.live)
      ? region.live.filter((l) => obj(l)).map((l): [string, LiveAllocation] => [mem, l]) // tolerant: unchecked JSON
      : [],
  );
  if (live.length) {
    const rows = live.map(([mem, l]) => {
      const shape = Array.isArray(l.shape) ? `[${l.shape.map(Number).join(', ')}]` : '';
      const bytes = typeof l.bytesPerPartition === 'number' ? formatBytes(l.bytesPerPartition) : '';
      const name = typeof l.name === 'string' ? l.name : '?';
      const dtype = typeof l.dtype === 'string' ? l.dtype : '';
      return `<tr><td>${esc(mem.toUpperCase())}</td><td>${esc(name)}</td><td>${esc(dtype + shape)}</td><td>${esc(bytes)}</td><td>${typeof l.line === 'number' ? l.line : ''}</td></tr>`;
    });
    parts.push(
      `<table><tr><th>memory</th><th>live at peak</th><th>type</th><th>per partition</th><th>line</th></tr>${rows.join('')}</table>`,
    );
  }
  if (r.warnings.length)
    parts.push(`<h3>Warnings</h3><ul>${r.warnings.map((w) => `<li>${esc(w)}</li>`).join('')}</ul>`);
  return parts.join('\n');
}

function tracksOf(kernel: Record<string, unknown>, latency: number): Track[] {
  // Real intervals when the server sends them: kernel.timeline = [{name, kind, intervals: [[s, e], ...]}].
  if (Array.isArray(kernel.timeline)) {
    return (kernel.timeline as Record<string, unknown>[])
      .filter((t) => typeof t.name === 'string' && Array.isArray(t.intervals))
      .map((t) => ({
        name: t.name as string,
        kind: t.kind === 'dma' || t.kind === 'fixed' ? t.kind : 'compute',
        intervals: t.intervals as [number, number][],
      }));
  }
  // Otherwise one bar per engine of its busy union (and the DMA union), from time 0.
  const tracks: Track[] = [];
  const dma = num(kernel, ['dma_union_ns']);
  if (dma !== undefined) tracks.push({ name: 'DMA (union)', kind: 'dma', intervals: [[0, dma]] });
  for (const [engine, ns] of Object.entries(obj(kernel.engines) ?? obj(kernel.engine_ns) ?? {})) {
    if (typeof ns === 'number' && ns > 0)
      tracks.push({ name: engine, kind: 'compute', intervals: [[0, Math.min(ns, latency)]] });
  }
  return tracks;
}

function isLikelyRange(value: unknown): value is EstimateRange {
  return typeof value === 'object' && value !== null && typeof (value as EstimateRange).lowNs === 'number';
}

function profileSection(heat: { params: HeatmapParams; stale: boolean; label?: string }): string {
  const { params } = heat;
  const kernel = params.kernel ?? {};
  const source = heat.label
    ? esc(heat.label) // the layer shown, as the server names it everywhere
    : params.source === 'measured'
      ? `measured · ${esc(profileLabel(params))}`
      : '<strong>estimated</strong> (timeline scheduled from the simulator trace, not measured)';
  const parts: string[] = [
    `<h2>Profile <span class="muted">${source}${heat.stale ? ' · stale (file edited since)' : ''}</span></h2>`,
    ...calibrateButton(params),
    ...calibrationNote(kernel),
  ];
  const latency = num(kernel, ['latency_ns', 'total_ns']);
  if (latency !== undefined) {
    parts.push(`<p>Kernel latency ${esc(formatNs(latency))}</p>`);
    if (params.source === 'estimate' && 'latency_range' in kernel) {
      const range = kernel.latency_range;
      parts.push(`<p>${esc(formatLikelyRange(isLikelyRange(range) ? range : null))}</p>`);
    }
    // Plain words first; what the latency was taken from (e.g. Summary.total_exec_time) is the detail line, as
    // in the hover.
    if (typeof kernel.latency_source === 'string')
      parts.push(`<p class="muted detail">kernel time: ${esc(kernel.latency_source)}</p>`);
    const d = num(kernel, ['dma_union_ns']);
    const c = num(kernel, ['compute_union_ns']);
    const i = num(kernel, ['intersection_ns']);
    if (d !== undefined && c !== undefined && i !== undefined) {
      const idle = Math.max(0, latency - (d + c - i));
      parts.push(
        '<h3>DMA vs compute</h3>',
        decompositionBar(
          [
            { label: 'DMA only', ns: d - i, cls: 'dma' },
            { label: 'overlap', ns: i, cls: 'overlap' },
            { label: 'compute only', ns: c - i, cls: 'compute' },
            { label: 'idle', ns: idle, cls: 'idle' },
          ],
          latency,
        ),
      );
    }
    const tracks = tracksOf(kernel, latency);
    if (tracks.length) {
      const what = Array.isArray(kernel.timeline)
        ? 'Engine timeline'
        : 'Engine busy time (union per engine; no per-instruction intervals in this data)';
      parts.push(`<h3>${what}</h3>`, timeline(tracks, latency));
    }
  }
  const rf = obj(kernel.roofline);
  if (rf) parts.push(...rooflineSection(rf, params.source === 'estimate'));
  parts.push(...boundsSection(kernel, params.source === 'estimate'));
  parts.push(...investigationsSection(params));
  // the server's ranking (by the kernel's bottleneck) when the payload has it, else busy time
  const ranked = params.lines.some((l) => l.rank);
  const top = ranked
    ? rankLines(params.lines, 'rank').flatMap((n) => params.lines.filter((l) => l.line === n))
    : [...params.lines].sort((a, b) => b.busy_ns - a.busy_ns);
  if (top.length) {
    const rows = top
      .slice(0, 8)
      .map(
        (l) =>
          `<tr><td>${l.line + 1}</td><td>${esc(formatNs(l.busy_ns))}</td><td>${esc(formatNs(l.dma_ns ?? 0))}</td><td>${esc(formatPercent(l.share))}</td><td>${l.instr}</td><td>${esc(formatBytes(l.dma_bytes))}</td></tr>`,
      );
    parts.push(
      `<h3>Hottest lines</h3><table><tr><th>line</th><th>busy</th><th>DMA issued</th><th>share</th><th>instr</th><th>DMA</th></tr>${rows.join('')}</table>`,
    );
  }
  return parts.join('\n');
}

/**
 * The roofline point (server: profile.roofline.Roofline, one type for a measured profile and an estimate): the
 * chart when the point and both roofs are known, else what is known of it. Read as a record (the generated
 * `Roofline` type names the keys): tolerant of missing fields.
 */
function rooflineSection(rf: Record<string, unknown>, estimated: boolean): string[] {
  const bound = typeof rf.bound === 'string' ? rf.bound : 'unknown';
  const flops = typeof rf.flops_source === 'string' ? ` · FLOPs: ${esc(rf.flops_source)}` : '';
  const head = `<h3>Roofline <span class="muted">${esc(bound)}-bound${estimated ? ' (estimated)' : ''}${flops}</span></h3>`;
  const intensity = num(rf, ['intensity']);
  const achieved = num(rf, ['achieved_tflops']);
  const peak = num(rf, ['peak_tflops']);
  const ceiling = num(rf, ['ceiling_gbps']);
  if (intensity === undefined || achieved === undefined || peak === undefined || ceiling === undefined) {
    const known = intensity !== undefined ? `${intensity.toFixed(2)} FLOP/byte` : 'no FLOP count or no HBM bytes';
    return [head, `<p>${esc(known)}</p>`];
  }
  return [head, roofline({ intensity, achievedTflops: achieved, peakTflops: peak, ceilingGbps: ceiling, bound })];
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return obj(v) !== undefined;
}

/** The families of `kernel.bounds` (server: profile.bounds.Bounds.to_dict), tolerant of missing fields. */
export function waterfallFamilies(bounds: Record<string, unknown>): WaterfallFamily[] {
  const families = Array.isArray(bounds.families) ? bounds.families : [];
  return families.filter(isRecord).map((f) => ({
    name: typeof f.name === 'string' ? f.name : '?',
    bounds: (Array.isArray(f.bounds) ? f.bounds : []).filter(isRecord).map((b) => ({
      name: typeof b.name === 'string' ? b.name : '?',
      label: typeof b.label === 'string' ? b.label : typeof b.name === 'string' ? b.name : '?',
      ns: typeof b.ns === 'number' && Number.isFinite(b.ns) ? b.ns : null,
      gapMeans: typeof b.gap_means === 'string' ? b.gap_means : '',
      speedup: typeof b.speedup === 'number' && Number.isFinite(b.speedup) ? b.speedup : null,
    })),
  }));
}

function boundsSection(kernel: Record<string, unknown>, estimated: boolean): string[] {
  const bounds = obj(kernel.bounds);
  const total = num(bounds, ['total_ns']);
  if (!bounds || total === undefined) return [];
  const label = estimated ? ' · estimated' : '';
  const bottleneck = typeof bounds.bottleneck === 'string' ? bounds.bottleneck : '?';
  const notes = (Array.isArray(bounds.notes) ? bounds.notes : [])
    .filter((n): n is string => typeof n === 'string')
    .map((n) => `<li>${esc(n)}</li>`)
    .join('');
  return [
    `<h3>Bounds <span class="muted">bottleneck ${esc(bottleneck)}${label}</span></h3>`,
    boundsWaterfall(waterfallFamilies(bounds), total),
    '<p class="muted">Gaps are overheads, not predicted savings; speedups assume the slowest untouched engine.</p>',
    notes ? `<ul class="muted">${notes}</ul>` : '',
  ];
}

function investigationsSection(params: HeatmapParams): string[] {
  const invs = (Array.isArray(params.kernel?.investigations) ? params.kernel.investigations : []).filter(isRecord);
  if (!invs.length) return [];
  const rows = invs.map((i) => {
    const status = typeof i.status === 'string' ? i.status : '?';
    const cls = status === 'found' ? 'fail' : status === 'unavailable' ? 'na' : 'pass';
    const title = typeof i.title === 'string' ? i.title : typeof i.kind === 'string' ? i.kind : '';
    const summary = typeof i.summary === 'string' ? i.summary : '';
    return `<tr><td>${esc(title)}</td><td class="${cls}">${esc(status)}</td><td>${esc(summary)}</td></tr>`;
  });
  const found = (params.findings ?? []).map((f) => {
    const link: ClientCommandArguments[typeof GO_TO_LINE] = [params.uri, f.line];
    const args = encodeURIComponent(JSON.stringify(link));
    return `<li><a href="command:${GO_TO_LINE}?${args}">line ${f.line + 1}</a> <code>${esc(f.code)}</code> ${esc(f.message)}</li>`;
  });
  return [
    `<h3>Investigations${params.source === 'estimate' ? ' <span class="muted">estimated</span>' : ''}</h3>`,
    `<table><tr><th>investigation</th><th>status</th><th>what it examined</th></tr>${rows.join('')}</table>`,
    found.length ? `<ul>${found.join('')}</ul>` : '<p class="muted">No finding on this file\'s lines.</p>',
  ];
}

const STYLE = `
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); background: var(--vscode-editor-background); padding: 0 12px; }
h2 { font-size: 1.2em; margin-top: 1.2em; } h3 { font-size: 1em; margin-bottom: 4px; }
table { border-collapse: collapse; margin: 4px 0; } td, th { padding: 2px 8px; border-bottom: 1px solid var(--vscode-panel-border); text-align: left; }
.pass, .fail { white-space: nowrap; } .pass { color: var(--vscode-testing-iconPassed); } .fail { color: var(--vscode-testing-iconFailed); } .na, .muted { color: var(--vscode-descriptionForeground); font-weight: normal; } .stale { color: var(--vscode-editorWarning-foreground); font-weight: normal; }
.detail { font-size: 0.9em; font-style: italic; margin-top: 0; }
pre.error { white-space: pre-wrap; color: var(--vscode-errorForeground); }
svg text { fill: var(--vscode-foreground); font-size: ${LABEL_PX}px; } svg text.small { font-size: ${SMALL_PX}px; fill: var(--vscode-descriptionForeground); }
svg .track { fill: var(--vscode-editorWidget-background); stroke: var(--vscode-panel-border); }
svg .bar { fill: var(--vscode-charts-blue); } svg .bar.over { fill: var(--vscode-charts-red); }
svg .dma { fill: var(--vscode-charts-orange); } svg .compute { fill: var(--vscode-charts-blue); } svg .overlap { fill: var(--vscode-charts-purple); } svg .idle { fill: var(--vscode-disabledForeground); } svg .fixed { fill: var(--vscode-charts-lines); }
svg .total { fill: var(--vscode-disabledForeground); } svg .bound { fill: var(--vscode-charts-green); } svg .gap { fill: var(--vscode-charts-yellow); }
svg .roof { stroke: var(--vscode-charts-blue); stroke-width: 2; } svg .axis { stroke: var(--vscode-descriptionForeground); } svg .point { fill: var(--vscode-charts-red); }
svg .tune-point { fill: var(--vscode-editor-background); stroke: var(--vscode-charts-blue); } svg .tune-point.tune-winner { fill: var(--vscode-charts-blue); } svg .tune-range { stroke: var(--vscode-charts-blue); opacity: 0.5; } svg .tune-front { stroke: var(--vscode-charts-red); }
tr.winner td { font-weight: bold; }
`;

function boundValues(kernel: Record<string, unknown> | undefined): Map<string, number | null> {
  const out = new Map<string, number | null>();
  const bounds = obj(kernel?.bounds);
  const total = num(bounds, ['total_ns']);
  if (!bounds || total === undefined) return out;
  out.set('total_time', total);
  for (const fam of waterfallFamilies(bounds)) for (const b of fam.bounds) out.set(b.name, b.ns);
  return out;
}

function originOf(p: HeatmapParams): string {
  return p.source === 'measured' ? `measured · ${profileLabel(p)}` : 'estimated';
}

const signed = (d: number): string => `${d >= 0 ? '+' : '−'}${formatNs(Math.abs(d))}`;

interface LineDelta {
  a?: number; // 0-based line before
  b?: number; // 0-based line after
  aNs: number;
  bNs: number;
}

/** Per-line deltas: lines followed across the edit when both texts are known, else matched by number. */
function lineDeltas(before: CompareSide, after: CompareSide): { rows: LineDelta[]; followed: boolean } {
  const busy = (lines: readonly LineTime[]): Map<number, number> => {
    const m = new Map<number, number>();
    for (const l of lines) m.set(l.line, (m.get(l.line) ?? 0) + l.busy_ns);
    return m;
  };
  const la = busy(before.lines ?? before.params.lines);
  const lb = busy(after.lines ?? after.params.lines);
  const map =
    before.text !== undefined && after.text !== undefined
      ? alignLines(splitLines(before.text), splitLines(after.text))
      : undefined;
  if (!map) {
    const rows = [...new Set([...la.keys(), ...lb.keys()])].map((n) => ({
      a: n,
      b: n,
      aNs: la.get(n) ?? 0,
      bNs: lb.get(n) ?? 0,
    }));
    return { rows, followed: false };
  }
  const back = new Map([...map].map(([x, y]) => [y, x]));
  const rows: LineDelta[] = [];
  for (const [n, ns] of la) {
    const m = map.get(n);
    rows.push(m === undefined ? { a: n, aNs: ns, bNs: 0 } : { a: n, b: m, aNs: ns, bNs: lb.get(m) ?? 0 });
  }
  for (const [n, ns] of lb) {
    const m = back.get(n);
    if (m === undefined) rows.push({ b: n, aNs: 0, bNs: ns });
    else if (!la.has(m)) rows.push({ a: m, b: n, aNs: 0, bNs: ns });
  }
  return { rows, followed: true };
}

function lineLabel(r: LineDelta): string {
  if (r.a === undefined) return `${(r.b ?? 0) + 1} (added)`;
  if (r.b === undefined) return `${r.a + 1} (removed)`;
  return r.a === r.b ? `${r.b + 1}` : `${r.a + 1} → ${r.b + 1}`;
}

/** Before (the baseline) and after (the current data): bounds side by side and the lines whose time moved. */
export function compareSection(
  beforeSide: CompareSide | HeatmapParams,
  afterSide: CompareSide | HeatmapParams,
): string {
  const side = (s: CompareSide | HeatmapParams): CompareSide => ('params' in s ? s : { params: s });
  const before = side(beforeSide);
  const after = side(afterSide);
  const a = boundValues(before.params.kernel);
  const b = boundValues(after.params.kernel);
  const rows = [...new Set([...a.keys(), ...b.keys()])].map((name) => {
    const x = a.get(name) ?? null;
    const y = b.get(name) ?? null;
    const delta = x === null || y === null ? 'n/a' : signed(y - x);
    const fmt = (v: number | null): string => (v === null ? 'n/a' : formatNs(v));
    return `<tr><td>${esc(name)}</td><td>${esc(fmt(x))}</td><td>${esc(fmt(y))}</td><td>${esc(delta)}</td></tr>`;
  });
  const { rows: deltas, followed } = lineDeltas(before, after);
  const moved = deltas
    .filter((r) => r.aNs !== r.bNs)
    .sort((r, s) => Math.abs(s.bNs - s.aNs) - Math.abs(r.bNs - r.aNs))
    .slice(0, 8)
    .map(
      (r) =>
        `<tr><td>${esc(lineLabel(r))}</td><td>${esc(formatNs(r.aNs))}</td><td>${esc(formatNs(r.bNs))}</td><td>${esc(signed(r.bNs - r.aNs))}</td></tr>`,
    );
  const how = followed ? 'lines followed across the edit' : 'lines matched by number: source text unavailable';
  return [
    `<h2>Before / after <span class="muted">${esc(originOf(before.params))} → ${esc(originOf(after.params))}</span></h2>`,
    rows.length
      ? `<table><tr><th>bound</th><th>before</th><th>after</th><th>change</th></tr>${rows.join('')}</table>`
      : '<p class="muted">No bounds in one of the two (summary-only profile).</p>',
    `<h3>Lines whose busy time changed most <span class="muted">(${how})</span></h3>`,
    moved.length
      ? `<table><tr><th>line</th><th>before</th><th>after</th><th>change</th></tr>${moved.join('')}</table>`
      : '<p class="muted">No line changed.</p>',
  ].join('\n');
}

/** The whole document. `cspSource` is the webview's own origin; nothing else may load. */
export function renderPanel(data: PanelData, nonce: string, cspSource: string): string {
  const csp = `default-src 'none'; img-src ${cspSource} data:; style-src 'nonce-${nonce}'; script-src 'none'; connect-src 'none'; font-src ${cspSource};`;
  const body: string[] = [];
  if (data.simulation) body.push(simulationSection(data.simulation, data.simulationStale ?? false));
  if (data.tune) body.push(tuneSection(data.tune));
  if (data.heat)
    body.push(profileSection(data.heat), measuredVsEstimatedSection(data.heat.params.measured_vs_estimated));
  if (data.baseline && data.heat && data.baseline !== data.heat.params)
    body.push(
      compareSection(
        { params: data.baseline, lines: data.baselineSource?.lines, text: data.baselineSource?.text },
        { params: data.heat.params, lines: data.heat.lines, text: data.heat.text },
      ),
    );
  if (!body.length) {
    body.push(
      '<p class="muted">No data yet. Run <b>NKI: Simulate Kernel</b>, <b>NKI: Tune Kernel…</b> or <b>NKI: Load Profile…</b> on the active kernel file.</p>',
    );
  }
  return (
    `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8"><meta http-equiv="Content-Security-Policy" content="${csp}">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1.0"><style nonce="${nonce}">${STYLE}</style><title>NKI Kernel</title></head>` +
    `<body>${body.join('\n')}</body></html>`
  );
}
