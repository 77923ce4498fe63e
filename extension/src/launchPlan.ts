/**
 * Bootstrap: which interpreter the language server starts on, as a launch plan (plain data: the command, which
 * interpreter, how it was chosen). The probes, the interpreter cache and the bundle are injected, so the choice
 * is testable without VS Code or real interpreters.
 *
 * A start need not wait for the interpreter probe (it spawns Python once or more, and asking the Python
 * extension can wait for its activation): it starts on the interpreter that ran the server last time (see
 * interpreterCache.ts), or, with the bundle, on the first candidate unprobed (nki_studio.boot refuses a too-old
 * Python). Such a plan is checked by a discovery once the server is up (`confirmPlan`).
 */
import {
  type Found,
  type InterpreterProbes,
  type NotFound,
  discoverInterpreter,
  firstCandidate,
  isFound,
} from './interpreter';
import { type InterpreterCache, sameInterpreter } from './interpreterCache';
import { type Bundle, type ServerCommand, bundleForInterpreter, serverCommand } from './serverCommand';
import type { Timings } from './timings';

/**
 * How the plan's interpreter was chosen: probed by a discovery just now, remembered from the last start, or the
 * first candidate, unprobed. The last two must be confirmed by a discovery once the server is up.
 */
export type Choice = 'probed' | 'remembered' | 'unprobed';

export interface LaunchPlan {
  /** The effective `nki-studio.interpreter` value (trimmed; '' = unset): the interpreter cache's key. */
  setting: string;
  interpreter: Found;
  choice: Choice;
  /** The extension's bundled libraries (undefined when running from the repository). */
  bundle: Bundle | undefined;
  command: ServerCommand;
  /** The interpreter, its version and where it came from (the log and the status item show it). */
  description: string;
}

/** What choosing an interpreter reads and records. */
export interface Bootstrap {
  probes: InterpreterProbes;
  cache: InterpreterCache;
  /** Looked up at every start. */
  bundle(): Bundle | undefined;
  /** The environment the server process inherits. */
  env: Readonly<Record<string, string | undefined>>;
  timings: Pick<Timings, 'record'>;
  log: { info(message: string): void };
}

export function isLaunchPlan(result: LaunchPlan | NotFound): result is LaunchPlan {
  return (result as LaunchPlan).command !== undefined;
}

/** A full interpreter discovery, timed (`remembered`: the start it checks did not wait for it); skips are logged. */
export function discover(boot: Bootstrap, remembered: boolean): Promise<Found | NotFound> {
  const probeStarted = performance.now();
  return discoverInterpreter(boot.probes).then((result) => {
    boot.timings.record({ event: 'interpreter', ms: performance.now() - probeStarted, remembered });
    for (const s of result.skipped) boot.log.info(`interpreter skipped: ${s}`);
    return result;
  });
}

/**
 * Choose the interpreter for a start. `meanwhile` runs once a probe process needed now has been started (or at
 * once when none is): work that can overlap the probe.
 */
export async function planLaunch(boot: Bootstrap, meanwhile: () => void): Promise<LaunchPlan | NotFound> {
  const setting = boot.probes.setting()?.trim() ?? '';
  const remembered = boot.cache.get(setting);
  const bundle = boot.bundle();
  let unprobed: Found | undefined;
  if (!remembered && bundle) {
    const candidate = await firstCandidate(boot.probes);
    // A launcher (pyenv shim...) starts what it resolved to last time on this machine, if known.
    if (candidate)
      unprobed = {
        ...candidate,
        executable: boot.cache.resolved(candidate.path) ?? candidate.path,
        version: [0, 0],
        skipped: [],
      };
  }
  const discovery = (remembered ?? unprobed) ? undefined : discover(boot, false);
  if (discovery) await new Promise((resolve) => setImmediate(resolve)); // let the probe's process start first
  meanwhile();
  const found = remembered ?? unprobed ?? (await (discovery as Promise<Found | NotFound>));
  if (discovery && isFound(found)) boot.cache.set(setting, found);
  if (!isFound(found)) return found;
  const runs = found.executable === found.path ? '' : `, runs ${found.executable}`;
  const from = remembered ? `${found.source}, remembered from the last start` : found.source;
  const planBundle = bundleForInterpreter(bundle, found.source === 'private-env');
  return {
    setting,
    interpreter: found,
    choice: remembered ? 'remembered' : unprobed ? 'unprobed' : 'probed',
    bundle: planBundle,
    command: serverCommand(found.executable, planBundle, boot.env),
    description: unprobed
      ? `${found.path} (from ${from}${runs ? `${runs} as last time on this machine` : ''}; its version is checked as the server starts)`
      : `${found.path} (Python ${found.version.join('.')}, from ${from}${runs})`,
  };
}

/** The log line for a start on `plan`. */
export function launchMessage(plan: LaunchPlan): string {
  const { command, args, env } = plan.command;
  return (
    `starting server: ${command} ${args.join(' ')} — ${plan.description}; ` +
    (plan.bundle
      ? `bundled libraries ${env.PYTHONPATH}`
      : "no bundled libraries: using the interpreter's own nki_studio")
  );
}

/** What a discovery made of a remembered or unprobed plan. */
export type Verdict =
  /** The remembered interpreter is still what discovery finds. */
  | { kind: 'kept' }
  /** The unprobed candidate is right; `description` replaces the plan's. */
  | { kind: 'confirmed'; description: string }
  /** The server must start again (on what discovery found, or to report that nothing can run it). */
  | { kind: 'restart'; reason: string };

/**
 * Check a plan discovery did not probe against a fresh discovery, and remember the outcome: a confirmed candidate
 * is remembered, a changed one replaced (nothing is remembered when discovery found nothing, or when the
 * remembered interpreter moved: the restart then discovers afresh).
 */
export function confirmPlan(plan: LaunchPlan, fresh: Found | NotFound, cache: InterpreterCache): Verdict {
  const started = plan.interpreter;
  const unprobed = plan.choice === 'unprobed';
  // An unprobed start ran the candidate itself (then whatever it launches is right) or what it resolved to
  // before (right only if it still resolves there).
  const ranLauncher = started.executable === started.path;
  const unprobedRight =
    isFound(fresh) && fresh.path === started.path && (ranLauncher || fresh.executable === started.executable);
  if (isFound(fresh) && (unprobed ? unprobedRight : sameInterpreter(fresh, started))) {
    if (!unprobed) return { kind: 'kept' };
    cache.set(plan.setting, fresh);
    const runs =
      fresh.executable === fresh.path ? '' : `, runs ${fresh.executable}${ranLauncher ? ' from the next start' : ''}`;
    return {
      kind: 'confirmed',
      description: `${fresh.path} (Python ${fresh.version.join('.')}, from ${fresh.source}${runs})`,
    };
  }
  if (unprobed && isFound(fresh)) cache.set(plan.setting, fresh);
  else cache.clear();
  return {
    kind: 'restart',
    reason: isFound(fresh) ? `the interpreter is now ${fresh.executable}` : 'no usable interpreter',
  };
}
