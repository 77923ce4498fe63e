/**
 * The log channel handed to the language client. The server logs each record twice: as window/logMessage and
 * on stderr (other editors show only one of them); VS Code's client writes both into this channel. Here a
 * stderr copy of a record the server also sent as a message is dropped, and the client's report of a clean exit
 * (code 0: a restart or shutdown the extension asked for) is information, not an error.
 */
import type * as vscode from 'vscode';

/** A record line on the server's stderr (server/lsp/logs.py `_FORMAT`: time, level, logger, message). */
const STDERR_RECORD = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (\S+): /;
/** A line the client writes: `[Error - 10:00:01] text` (vscode-languageclient's logOutputMessage). */
const CLIENT_LINE = /^\[(\w+)\s*- ([^\]]*)\] (.*)$/s;
/** The text of a server record the client got as window/logMessage (server/lsp/logs.py: `logger: message`). */
const SERVER_MESSAGE = /^nki_studio[\w.]*: /;

/**
 * The lines of one stderr chunk to keep. Once the server sends log messages (`forwarding`), its own records
 * (`nki_studio` loggers) are dropped with their traceback lines (a record and its traceback come in one write);
 * third-party warnings and anything else, like a crash's traceback, are kept.
 */
export function stderrToKeep(chunk: string, forwarding: boolean): string {
  if (!forwarding) return chunk;
  let dropping = false;
  const kept = chunk.split(/(?<=\n)/).filter((line) => {
    const record = STDERR_RECORD.exec(line);
    if (record) dropping = record[1] === 'nki_studio' || record[1].startsWith('nki_studio.');
    return !dropping;
  });
  return kept.join('');
}

/**
 * A line the client writes, as it should read: its report of a clean exit (code 0, a restart or shutdown the
 * extension asked for) as information instead of an error; anything else unchanged.
 */
export function clientLine(line: string): string {
  const m = CLIENT_LINE.exec(line);
  if (m && m[1] === 'Error' && m[3] === 'Server process exited with code 0.')
    return `[Info  - ${m[2]}] Server process exited with code 0 (stopped on request).`;
  return line;
}

/** `log` as the language client should write to it. */
export function clientChannel(log: vscode.LogOutputChannel): vscode.LogOutputChannel {
  let forwarding = false; // the server has sent a log message: its logging reaches the client
  return new Proxy(log, {
    get(target, prop): unknown {
      if (prop === 'append')
        return (text: string): void => {
          const kept = stderrToKeep(text, forwarding);
          if (kept) target.append(kept);
        };
      if (prop === 'appendLine')
        return (line: string): void => {
          if (SERVER_MESSAGE.test(CLIENT_LINE.exec(line)?.[3] ?? '')) forwarding = true;
          target.appendLine(clientLine(line));
        };
      // bound to the channel itself: its methods may rely on their own object
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
