/**
 * The kernel panel's "measured vs estimated" section: the server's comparison of the loaded profile with the
 * document's estimate (`measured_vs_estimated` of the heat payload, service.measured_estimated) as a table.
 * Nothing is computed here: every number and ratio is the server's.
 */
import { formatNs } from '../heat/format';
import type { EstimateRatio, LineEstimate, MeasuredVsEstimated } from '../protocol.generated';
import { esc } from './charts';

const TOP_LINES = 10;

function row(name: string, r: EstimateRatio): string {
  const ratio = r.ratio === null ? '–' : `${r.ratio.toFixed(2)}×`;
  return `<tr><td>${esc(name)}</td><td>${esc(formatNs(r.measured_ns))}</td><td>${esc(formatNs(r.estimated_ns))}</td><td>${esc(ratio)}</td></tr>`;
}

function lineName(l: LineEstimate): string {
  if (l.line_measured === null) return `${l.line_estimated ?? l.line} (estimate only)`;
  if (l.line_estimated === null) return `${l.line_measured} (profile only)`;
  return l.line_measured === l.line_estimated ? `${l.line}` : `${l.line_measured} → ${l.line_estimated}`;
}

const HEAD = '<tr><th></th><th>measured</th><th>estimated</th><th>estimated / measured</th></tr>';

/** The section, or '' when the payload carries no comparison. */
export function measuredVsEstimatedSection(cmp: MeasuredVsEstimated | undefined): string {
  if (!cmp) return '';
  const engines = Object.entries(cmp.engines).map(([name, r]) => row(name, r));
  const lines = cmp.lines.slice(0, TOP_LINES).map((l) => row(lineName(l), l));
  return [
    '<h2>Measured vs estimated</h2>',
    `<p class="muted">${esc(cmp.measured)}<br>${esc(cmp.estimated)}</p>`,
    `<table>${HEAD}${row('kernel latency', cmp.kernel)}</table>`,
    engines.length ? `<h3>Engines (busy time)</h3><table>${HEAD}${engines.join('')}</table>` : '',
    lines.length
      ? `<h3>Hottest lines <span class="muted">(${esc(cmp.lines_matched_by)})</span></h3><table>${HEAD}${lines.join('')}</table>`
      : '',
  ].join('\n');
}
