/**
 * Which Python runs the language server. Order: the `nki-studio.interpreter` setting, else the server's private
 * environment when "NKI: Create Server Environment" made one for this package (privateEnv.ts), else the Python
 * extension's active interpreter when that extension is installed (optional: code-server and offline
 * hosts do not have it), else `python3` (then `python`) on PATH. Each candidate must be Python ≥ 3.10.
 * The server then runs on the executable the probe reports (sys.executable), not on the candidate: a
 * launcher such as a pyenv shim costs a shell and a lookup (about 0.1 s) on every start.
 * The probes are injected so the order is testable without VS Code or real interpreters.
 */

export const MIN_PYTHON: readonly [number, number] = [3, 10];

export type InterpreterSource = 'setting' | 'private-env' | 'python-extension' | 'PATH';

/** What the version probe learns from running a candidate. */
export interface PythonInfo {
  version: [number, number];
  /** sys.executable: the interpreter the candidate ends up running ('' when Python cannot tell). */
  executable: string;
}

export interface InterpreterProbes {
  /** The setting's value (trimmed; empty = unset). */
  setting(): string | undefined;
  /**
   * The private environment's interpreter when it is complete for this package (absent: none is looked for).
   * `setting`: the interpreter setting's value, when set: the environment counts only if it was made from it.
   */
  privateEnv?(setting: string | undefined): string | undefined;
  /** The Python extension's interpreter, undefined when the extension is absent or has none. */
  pythonExtension(): Promise<string | undefined>;
  /** Absolute path of an executable on PATH, or undefined. */
  which(name: string): string | undefined;
  /** Version and real executable of an interpreter, or an error message when it does not run. */
  version(path: string): Promise<PythonInfo | string>;
}

export interface Found {
  /** The candidate as configured or found (shown to the user). */
  path: string;
  /** What to start the server with: the candidate's sys.executable, else the candidate. */
  executable: string;
  source: InterpreterSource;
  version: [number, number];
  /** Candidates that were skipped, and why (shown in the log). */
  skipped: string[];
}

export interface NotFound {
  message: string;
  fix: string;
  skipped: string[];
}

function tooOld(v: [number, number]): boolean {
  return v[0] < MIN_PYTHON[0] || (v[0] === MIN_PYTHON[0] && v[1] < MIN_PYTHON[1]);
}

const FIX =
  'Install Python 3.10 or newer, then set "nki-studio.interpreter" to its path (Settings → NKI Studio → Interpreter) ' +
  'or put python3 on PATH, and run "NKI: Restart Server".';

/** Walk the candidates in order; the first that runs and is new enough wins. */
export async function discoverInterpreter(probes: InterpreterProbes): Promise<Found | NotFound> {
  const skipped: string[] = [];
  const check = async (path: string, source: InterpreterSource): Promise<Found | undefined> => {
    const info = await probes.version(path);
    if (typeof info === 'string') {
      skipped.push(`${source} ${path}: ${info}`);
      return undefined;
    }
    if (tooOld(info.version)) {
      skipped.push(`${source} ${path}: Python ${info.version.join('.')} is older than ${MIN_PYTHON.join('.')}`);
      return undefined;
    }
    return { path, executable: info.executable || path, source, version: info.version, skipped };
  };

  for await (const candidate of candidates(probes)) {
    const found = await check(candidate.path, candidate.source);
    if (found) return found;
    if (candidate.source === 'setting') {
      // The user chose this one explicitly: say so rather than silently running something else.
      return {
        message: `The interpreter in "nki-studio.interpreter" cannot run the server (${skipped.join('; ')}).`,
        fix: FIX,
        skipped,
      };
    }
  }
  return { message: 'NKI Studio found no Python 3.10+ to run its language server.', fix: FIX, skipped };
}

export interface Candidate {
  path: string;
  source: InterpreterSource;
}

/** The candidates in order, without running any: the setting (alone, when set, after the private environment
 * made from it), else the private environment, the Python extension's, then python3 and python on PATH. */
async function* candidates(probes: InterpreterProbes): AsyncGenerator<Candidate> {
  const setting = probes.setting()?.trim();
  if (setting) {
    // the environment made from the configured interpreter stands in for it (falling back to it if broken)
    const made = probes.privateEnv?.(setting);
    if (made) yield { path: made, source: 'private-env' };
    yield { path: setting, source: 'setting' };
    return;
  }
  const privateEnv = probes.privateEnv?.(undefined);
  if (privateEnv) yield { path: privateEnv, source: 'private-env' };
  const fromExtension = await probes.pythonExtension().catch(() => undefined);
  if (fromExtension) yield { path: fromExtension, source: 'python-extension' };
  for (const name of ['python3', 'python']) {
    const path = probes.which(name);
    if (path) yield { path, source: 'PATH' };
  }
}

/**
 * The candidate discovery tries first, without running it: the bundled server can start on it at once, since
 * its boot module checks the version itself, and a full discovery confirms the choice once the server is up.
 */
export async function firstCandidate(probes: InterpreterProbes): Promise<Candidate | undefined> {
  for await (const candidate of candidates(probes)) return candidate;
  return undefined;
}

export function isFound(result: Found | NotFound): result is Found {
  return (result as Found).path !== undefined;
}
