/**
 * "Tune kernel…" in the editor: ask for the search space (pre-filled with the kernel's declared one, which the
 * server reads: `tuneSpace`) and a budget, keep the server's answer (`tune`) per document for the kernel panel,
 * and write the winner's values when the panel's "Apply winner" asks. The server searches, ranks and renders
 * every number and row; this module only asks, keeps and applies.
 */
import type * as vscode from 'vscode';
import { type RunServerCommand, applyLineEdits, documentOf } from './firstRun';
import { type DeclaredSpace, SERVER_COMMANDS, type TuneResult, type TuneSpec } from './protocol.generated';
import type { VsCode } from './vscodeApi';

/** A search's answer and the version of the document it searched (its edits apply to that text only). */
export interface TuneEntry {
  result: TuneResult;
  version: number;
}

/** The latest search per document. */
export class TuneStore {
  private readonly byUri = new Map<string, TuneEntry>();
  private readonly listeners: (() => void)[] = [];

  set(uri: string, entry: TuneEntry): void {
    this.byUri.set(uri, entry);
    this.changed();
  }

  forUri(uri: string): TuneEntry | undefined {
    return this.byUri.get(uri);
  }

  /** Tell the listeners (the kernel panel) to show the current state again. */
  changed(): void {
    for (const l of this.listeners) l();
  }

  onDidChange(listener: () => void): void {
    this.listeners.push(listener);
  }
}

/**
 * Ask for what to search: the space (pre-filled with the declared one, else empty with an example) and a budget
 * (empty: every point). Undefined when the user stops or the budget is not a positive whole number (said).
 */
export async function askTuneSpec(
  vs: VsCode,
  run: RunServerCommand,
  uri: string,
  kernel: string,
): Promise<TuneSpec | undefined> {
  const declared = (await run(SERVER_COMMANDS.tuneSpace, [uri, kernel])) as DeclaredSpace | null;
  const from = declared?.space
    ? `pre-filled from its ${declared.origin}${declared.size !== null ? ` (${declared.size.toLocaleString('en-US')} points before constraints)` : ''}`
    : 'none is declared above the kernel; e.g. TILE_N=128,256,512 BUFS=1..4 if TILE_N * BUFS <= 2048';
  const space = await vs.window.showInputBox({
    title: `NKI: tune ${kernel}: search space`,
    prompt: `NAME=values … [if CONSTRAINT; …] over module constants and keyword defaults; ${from}`,
    value: declared?.space ?? '',
    ignoreFocusOut: true,
  });
  if (space === undefined || !space.trim()) return undefined;
  const budget = await vs.window.showInputBox({
    title: `NKI: tune ${kernel}: budget`,
    prompt:
      'Points to try at most (Optuna’s TPE picks them in a larger space); empty: every point of a space up to 10,000',
    value: '',
    ignoreFocusOut: true,
  });
  if (budget === undefined) return undefined;
  const spec: TuneSpec = { uri, kernel, space: space.trim() };
  if (budget.trim()) {
    const n = Number(budget.trim());
    if (!Number.isInteger(n) || n <= 0) {
      void vs.window.showErrorMessage(`NKI: the budget must be a positive whole number, not "${budget.trim()}".`);
      return undefined;
    }
    spec.budget = n;
  }
  return spec;
}

/** Whether `entry`'s edits still apply: the document is open with the version that was searched. */
export function applicable(vs: VsCode, uri: string, entry: TuneEntry): boolean {
  return entry.result.edits.length > 0 && documentOf(vs, uri)?.version === entry.version;
}

/** The panel's "Apply winner": write the last search's winner into the document; true when applied. */
export async function applyTuneWinner(vs: VsCode, tunes: TuneStore, uri: unknown): Promise<boolean> {
  const entry = typeof uri === 'string' ? tunes.forUri(uri) : undefined;
  if (typeof uri !== 'string' || !entry?.result.edits.length) {
    void vs.window.showInformationMessage('NKI: no winner to apply: run NKI: Tune Kernel… first.');
    return false;
  }
  const doc: vscode.TextDocument | undefined = documentOf(vs, uri);
  if (!doc || !applicable(vs, uri, entry)) {
    void vs.window.showWarningMessage(
      `NKI: the file changed since the search of ${entry.result.report.kernel}: tune again to apply its winner.`,
    );
    return false;
  }
  const applied = await applyLineEdits(vs, doc, entry.result.edits);
  if (applied) {
    void vs.window.showInformationMessage(
      `NKI: ${entry.result.report.kernel}: the winner's values are in the editor (not saved). Its time is an estimate: confirm it on a Trn2 host.`,
    );
  }
  tunes.changed();
  return applied;
}
