/**
 * Keep heat on the right lines while the user edits: lines after an edit move with it, lines whose
 * content was deleted are dropped, and the caller marks the whole map stale (figures describe the code
 * as it was profiled).
 */

export interface LineChange {
  /** 0-based range of the replaced text, as in vscode.TextDocumentContentChangeEvent.range. */
  startLine: number;
  startCharacter: number;
  endLine: number;
  /** The inserted text. */
  text: string;
  /**
   * Only whitespace precedes the change on its start line (the change starts in the line's indentation).
   * Unknown (false) when not given.
   */
  indentBefore?: boolean;
}

function newlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n += 1;
  return n;
}

/** Where a line goes after one change; undefined when its content was deleted. */
export function shiftLine(line: number, change: LineChange): number | undefined {
  const added = newlines(change.text);
  const delta = added - (change.endLine - change.startLine);
  if (line < change.startLine) return line;
  if (line === change.startLine) {
    // Text inserted before the line's code (at column 0 or in its indentation) that ends in a newline and
    // indentation pushes the whole line down: Enter at the start of a line moves its code, so its heat too.
    const atStart = change.startCharacter === 0 || change.indentBefore === true;
    const pushesDown = atStart && change.endLine === change.startLine && /\n[ \t]*$/.test(change.text);
    return pushesDown ? line + delta : line;
  }
  if (line <= change.endLine) return undefined;
  return line + delta;
}

/**
 * Apply all changes of one edit event to a list of items with a `line` field. VS Code reports the
 * changes of one event against the same document state, non-overlapping; applying them from the bottom
 * up keeps every range valid.
 */
export function shiftLines<T extends { line: number }>(items: readonly T[], changes: readonly LineChange[]): T[] {
  const ordered = [...changes].sort((a, b) => b.startLine - a.startLine || b.startCharacter - a.startCharacter);
  const out: T[] = [];
  for (const item of items) {
    let line: number | undefined = item.line;
    for (const change of ordered) {
      if (line === undefined) break;
      line = shiftLine(line, change);
    }
    if (line !== undefined) out.push(line === item.line ? item : { ...item, line });
  }
  return out;
}

/** True when a change can move or delete lines (typing within a line cannot). */
export function changesLines(change: LineChange): boolean {
  return change.endLine !== change.startLine || change.text.includes('\n');
}
