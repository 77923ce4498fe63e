/** The Markdown breakdown shown when hovering a hot line. */
import { formatBytes, formatCount, formatNs, formatPercent } from './format';
import type { HeatLine, HeatSource } from './model';

const SHOWN = new Set(['line', 'busy_ns', 'share', 'instr', 'wait_ns', 'engines', 'dma_bytes', 'iterations', 'top_opcodes']);
// Fields not worth a hover row (the file is the one being hovered; per-core figures only matter with >1 core).
const HIDDEN = new Set(['file', 'per_core_busy_ns']);

function escapeMd(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, (c) => `\\${c}`);
}

function sourceLabel(source: HeatSource, profile: string | null | undefined): string {
  return source === 'measured' ? `measured · ${escapeMd(profile ?? 'profile')}` : '**estimated** (cost model, not measured)';
}

function extraValue(key: string, value: unknown): string {
  if (typeof value === 'number' && key.endsWith('_ns')) return formatNs(value);
  if (typeof value === 'number' && key.endsWith('_bytes')) return formatBytes(value);
  if (typeof value === 'number' && key.startsWith('share')) return formatPercent(value);
  return scalar(value);
}

function scalar(value: unknown): string {
  if (typeof value === 'number') return Number.isInteger(value) ? formatCount(value) : value.toFixed(3);
  if (typeof value === 'string' || typeof value === 'boolean') return escapeMd(String(value));
  return escapeMd(JSON.stringify(value));
}

/** Markdown for one line. `stale` adds a warning that the file changed since the data was produced. */
export function hoverMarkdown(line: HeatLine, source: HeatSource, profile: string | null | undefined, stale: boolean): string {
  const out: string[] = [];
  out.push(`**NKI heat, line ${line.line + 1}** — ${sourceLabel(source, profile)}`);
  if (stale) out.push('', '⚠ *Stale: the file changed since this data was produced; lines were shifted with your edits.*');
  out.push('', '| metric | value |', '| --- | --- |');
  out.push(`| busy | ${formatNs(line.busy_ns)} (${formatPercent(line.share)} of kernel) |`);
  out.push(`| instructions | ${formatCount(line.instr)} |`);
  out.push(`| wait | ${formatNs(line.wait_ns)} |`);
  out.push(`| DMA | ${formatBytes(line.dma_bytes)} |`);
  const engines = Object.entries(line.engines).filter(([, v]) => typeof v === 'number' && v > 0);
  if (engines.length > 0) {
    out.push('', '| engine | busy |', '| --- | --- |');
    for (const [name, ns] of engines.sort((a, b) => b[1] - a[1])) out.push(`| ${escapeMd(name)} | ${formatNs(ns)} |`);
  }
  const top = Array.isArray(line.top_opcodes) ? (line.top_opcodes as Record<string, unknown>[]) : [];
  if (top.length > 0) {
    const ops = top.map((o) => `${escapeMd(String(o.opcode))} ×${formatCount(Number(o.count) || 0)}` + (typeof o.sum_ns === 'number' ? ` (${formatNs(o.sum_ns)})` : ''));
    out.push('', `**top opcodes**: ${ops.join(', ')}`);
  }
  const extras = Object.entries(line).filter(([k, v]) => !SHOWN.has(k) && !HIDDEN.has(k) && v !== null && v !== undefined);
  if (extras.length > 0) out.push('', extras.map(([k, v]) => `${escapeMd(k.replace(/_/g, ' '))}: ${extraValue(k, v)}`).join(' · '));
  if (line.iterations !== undefined) {
    const its = Array.isArray(line.iterations) ? line.iterations : [line.iterations];
    const shown = its.slice(0, 6).map((it) => {
      const label = typeof it.label === 'string' ? escapeMd(it.label) : scalar(it);
      return typeof it.busy_ns === 'number' ? `${label} ${formatNs(it.busy_ns)}` : label;
    });
    out.push('', `**iterations** (${its.length}): ${shown.join(', ')}${its.length > 6 ? ', …' : ''}`);
  }
  return out.join('\n');
}

/** Status-bar legend text, e.g. "NKI heat: busy time · measured · run-42". */
export function legendText(metricLabel: string, source: HeatSource, profile: string | null | undefined, stale: boolean): string {
  const where = source === 'measured' ? `measured · ${profile ?? 'profile'}` : 'estimated';
  return `$(flame) ${metricLabel} · ${where}${stale ? ' · stale' : ''}`;
}
