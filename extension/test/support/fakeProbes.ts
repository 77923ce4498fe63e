/** Interpreter probes and state stores for unit tests: no VS Code, no real Python. */
import type { InterpreterProbes } from '../../src/interpreter';
import type { StateStore } from '../../src/interpreterCache';

/** `versions`: candidate → [major, minor] (its own executable), or [major, minor, sys.executable], or an error. */
export function probes(
  over: Partial<InterpreterProbes> & {
    versions?: Record<string, [number, number] | [number, number, string] | string>;
    onPath?: Record<string, string>;
  },
): InterpreterProbes & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    setting: over.setting ?? (() => undefined),
    privateEnv: over.privateEnv,
    pythonExtension: over.pythonExtension ?? (() => Promise.resolve(undefined)),
    which: (name) => over.onPath?.[name],
    version: (p) => {
      asked.push(p);
      const v = over.versions?.[p] ?? 'not found';
      return Promise.resolve(typeof v === 'string' ? v : { version: [v[0], v[1]], executable: v[2] ?? p });
    },
  };
}

/** A workspace or global state kept in memory. */
export function store(): StateStore {
  const values = new Map<string, unknown>();
  return {
    get: <T>(k: string) => values.get(k) as T | undefined,
    update: (k: string, v: unknown) => Promise.resolve(void values.set(k, v)),
  };
}
