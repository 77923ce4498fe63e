import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type * as vscode from 'vscode';
import { clientChannel, stderrToKeep } from '../../src/clientLog';

/** A LogOutputChannel double that records what was written, by method. */
function recorder(): { log: vscode.LogOutputChannel; lines: string[] } {
  const lines: string[] = [];
  const at =
    (kind: string) =>
    (text: string): void => {
      lines.push(`${kind} ${text}`);
    };
  const log = {
    name: 'NKI Studio',
    append: at('append'),
    appendLine: at('appendLine'),
  };
  return { log: log as unknown as vscode.LogOutputChannel, lines };
}

const RECORD = '2026-12-06 06:40:01,123 INFO nki_studio.lsp.server: lint of k.py: 2 diagnostics\n';
const TRACE =
  '2026-12-06 06:40:02,000 ERROR nki_studio.lsp.lint: rule failed\nTraceback (most recent call last):\n  File "x.py", line 1\nValueError: boom\n';
const THIRD_PARTY = '2026-12-06 06:40:03,000 WARNING py.warnings: DeprecationWarning: old\n';

describe('the language client log', () => {
  it('keeps stderr until the server sends log messages, then drops its copies of them (tracebacks too)', () => {
    assert.equal(stderrToKeep(RECORD, false), RECORD); // start-up: stderr is the only copy
    assert.equal(stderrToKeep(RECORD + TRACE + THIRD_PARTY, true), THIRD_PARTY);
    assert.equal(
      stderrToKeep('Fatal Python error: Segmentation fault\n', true),
      'Fatal Python error: Segmentation fault\n',
    );
  });

  it('writes each server line once', () => {
    const { log, lines } = recorder();
    const channel = clientChannel(log);
    channel.append(RECORD); // before any message: kept
    channel.appendLine('[Info  - 06:40:01] nki_studio.lsp.server: lint of k.py: 2 diagnostics'); // window/logMessage
    channel.append(RECORD); // its stderr copy
    assert.deepEqual(lines, [
      `append ${RECORD}`,
      'appendLine [Info  - 06:40:01] nki_studio.lsp.server: lint of k.py: 2 diagnostics',
    ]);
    assert.equal(channel.name, 'NKI Studio');
  });

  it('reports a clean exit (a restart) as information, other exits as errors', () => {
    const { log, lines } = recorder();
    const channel = clientChannel(log);
    channel.appendLine('[Error - 06:41:00] Server process exited with code 0.');
    channel.appendLine('[Error - 06:42:00] Server process exited with code 1.');
    assert.deepEqual(lines, [
      'appendLine [Info  - 06:41:00] Server process exited with code 0 (stopped on request).',
      'appendLine [Error - 06:42:00] Server process exited with code 1.',
    ]);
  });
});
