/**
 * The kernel panel's "Tune" section: the server's answer to "Tune kernel…" (`TuneResult`) as its summary, the
 * scatter plot, the ranked table and the "Apply winner" button. Nothing is computed or formatted here: the rows,
 * the lines under them and the SVG are the server's (`tune.report`, the same as `nki-studio tune` prints).
 */
import { CLIENT_COMMANDS, type ClientCommandArguments, type TuneResult } from '../protocol.generated';
import { esc } from './charts';

/** The "Apply winner" button's command (allowed in the webview's command URIs). */
export const APPLY_TUNE_WINNER = CLIENT_COMMANDS.applyTuneWinner;

/** A search to show; `applicable`: its edits still apply (the document has the text that was searched). */
export interface TuneView {
  result: TuneResult;
  applicable: boolean;
}

function applyButton(view: TuneView): string {
  const { result } = view;
  if (!result.edits.length) return '';
  if (!view.applicable)
    return '<p class="muted">The file changed since this search: tune again to apply its winner.</p>';
  const link: ClientCommandArguments[typeof APPLY_TUNE_WINNER] = [result.uri];
  const args = encodeURIComponent(JSON.stringify(link));
  return `<p><a href="command:${APPLY_TUNE_WINNER}?${args}">Apply winner</a> <span class="muted">writes its values into the editor (unsaved)</span></p>`;
}

/** The section. */
export function tuneSection(view: TuneView): string {
  const { result } = view;
  const head = result.header.map((h) => `<th>${esc(h)}</th>`).join('');
  const rows = result.rows
    .map((r) => `<tr${r[0] === '1' ? ' class="winner"' : ''}>${r.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`)
    .join('');
  const hidden = result.report.candidates.length - result.rows.length;
  return [
    `<h2>Tune ${esc(result.report.kernel)} <span class="muted">estimated times, not measured</span></h2>`,
    `<p>${esc(result.summary)}</p>`,
    applyButton(view),
    // The server's SVG (values escaped there); the webview runs no scripts, so markup is all it can be.
    `<div class="tune-scatter">${result.scatter}</div>`,
    `<table><tr>${head}</tr>${rows}</table>`,
    hidden > 0 ? `<p class="muted">… ${hidden} more (nki-studio tune --json lists every candidate)</p>` : '',
    `<p>${result.outcome.map(esc).join('<br>')}</p>`,
  ].join('\n');
}
