/**
 * The interpreter that last ran the server in this workspace, remembered (workspace state) so the next
 * start of the server need not wait for discovery: probing candidates spawns Python once or more, and
 * asking the Python extension can wait for its activation. The caller starts on the remembered
 * interpreter, checks it with a fresh discovery once the server is up, and restarts when it changed.
 * Entries are keyed by the effective `nki-studio.interpreter` value, so a changed (or, in an untrusted
 * workspace, ignored) setting never reuses an interpreter chosen under another one.
 *
 * Machine-wide (global state), what each launcher ran last time: a candidate such as a pyenv shim costs a
 * shell and a lookup on every start, so the first start in a new workspace runs the interpreter it resolved
 * to before — unprobed, like any first start, and checked by discovery afterwards (a project whose launcher
 * now picks another Python is restarted on that one).
 */
import type { Found } from './interpreter';

/** The part of vscode.Memento used here. */
export interface StateStore {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): PromiseLike<void>;
}

const KEY = 'nki-studio.lastInterpreter';
const RESOLVED_KEY = 'nki-studio.launchers';

interface Entry {
  setting: string;
  found: Pick<Found, 'path' | 'executable' | 'source' | 'version'>;
}

export class InterpreterCache {
  constructor(
    private readonly store: StateStore,
    private readonly exists: (path: string) => boolean,
    private readonly machine?: StateStore,
  ) {}

  /** What the launcher `path` ran last time (in any workspace), when that executable is still there. */
  resolved(path: string): string | undefined {
    const executable = this.machine?.get<Record<string, string>>(RESOLVED_KEY)?.[path];
    return executable !== undefined && this.exists(executable) ? executable : undefined;
  }

  /** The remembered interpreter for this setting value, when its executable is still there. */
  get(setting: string): Found | undefined {
    const entry = this.store.get<Entry>(KEY);
    if (!entry || entry.setting !== setting || !this.exists(entry.found.executable)) return undefined;
    return { ...entry.found, skipped: [] };
  }

  set(setting: string, found: Found): void {
    const entry: Entry = {
      setting,
      found: { path: found.path, executable: found.executable, source: found.source, version: found.version },
    };
    void this.store.update(KEY, entry);
    const launchers = this.machine?.get<Record<string, string>>(RESOLVED_KEY) ?? {};
    if (this.machine && found.executable !== found.path && launchers[found.path] !== found.executable) {
      void this.machine.update(RESOLVED_KEY, { ...launchers, [found.path]: found.executable });
    }
  }

  clear(): void {
    void this.store.update(KEY, undefined);
  }
}

/** Whether two discoveries would start the same server: same executable and Python version. */
export function sameInterpreter(a: Found, b: Found): boolean {
  return a.executable === b.executable && a.version[0] === b.version[0] && a.version[1] === b.version[1];
}
