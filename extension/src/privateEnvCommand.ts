/**
 * "NKI: Create Server Environment": asks before downloading anything, creates the private environment
 * (privateEnv.ts) with progress in a cancellable notification, records it when it is complete, restarts the
 * server on it, and says plainly what went wrong otherwise (offline, no venv module, no wheel). The processes, the
 * file system and the interpreter discovery are injected, so the flow is testable without VS Code or Python.
 */
import { spawn } from 'node:child_process';
import * as readline from 'node:readline';
import type * as vscode from 'vscode';
import { type Found, type NotFound, isFound } from './interpreter';
import {
  type EnvPaths,
  type EnvRecord,
  type Manifest,
  type Step,
  createSteps,
  looksOffline,
  nativeFit,
  parseRecord,
  progressLine,
  requirementNames,
  requirementsFile,
} from './privateEnv';
import { CLIENT_COMMANDS } from './protocol.generated';
import type { VsCode } from './vscodeApi';

export const CREATE_ENV_COMMAND = CLIENT_COMMANDS.createServerEnvironment;
export const CREATE_ENV_TITLE = 'NKI: Create Server Environment';

export interface RunResult {
  /** Exit code; null when the process could not start or was killed. */
  code: number | null;
  /** stdout and stderr as they came. */
  output: string;
}

/** Runs one step, each output line to `onLine`; cancelling `token` ends the process. */
export type Runner = (
  step: Step,
  onLine: (line: string) => void,
  token: vscode.CancellationToken,
) => Promise<RunResult>;

export interface EnvFiles {
  read(file: string): string | undefined;
  write(file: string, text: string): void;
  remove(file: string): void;
}

export interface EnvCommandDeps {
  vs: Pick<VsCode, 'window' | 'ProgressLocation'>;
  log: Pick<vscode.LogOutputChannel, 'info' | 'warn' | 'error' | 'show'>;
  /** bundled/manifest.json, undefined when the extension runs from its repository. */
  manifest(): Manifest | undefined;
  paths: EnvPaths;
  /** The interpreter to make the environment from (discovery, not counting an existing private environment). */
  baseInterpreter(): Promise<Found | NotFound>;
  run: Runner;
  files: EnvFiles;
  /** Start the server again (on the new environment). */
  restart(): Promise<void>;
  /** Stop the server: before an environment it runs on is made again (Windows locks a running python.exe). */
  stop(): Promise<void>;
}

export type EnvOutcome =
  'created' | 'declined' | 'cancelled' | 'offline' | 'failed' | 'not-needed' | 'no-bundle' | 'no-python';

const DOWNLOAD = 'Download and Install';
const ANYWAY = 'Create Anyway';
const SHOW_LOGS = 'Show Logs';

/** The whole command. */
export async function createServerEnvironment(deps: EnvCommandDeps): Promise<EnvOutcome> {
  const { vs, log, paths } = deps;
  const manifest = deps.manifest();
  if (!manifest) {
    void vs.window.showInformationMessage(
      'NKI: this copy of the extension has no bundled server (it runs from its repository); install the server ' +
        'into your interpreter instead (`pip install -e .`).',
    );
    return 'no-bundle';
  }
  const base = await deps.baseInterpreter();
  if (!isFound(base)) {
    void vs.window.showErrorMessage(`NKI: ${base.message} ${base.fix}`);
    return 'no-python';
  }
  const py = `${base.version[0]}.${base.version[1]}`;
  const record = readRecord(deps);
  const fit = nativeFit(manifest, base.version, record);
  if (fit.kind !== 'needs-env') {
    // Still offered: the bundled folder can be for another CPU (an x86_64 Python under Rosetta, say).
    const why =
      fit.kind === 'bundled'
        ? `the package's bundled packages are for Python ${py}, the version of ${base.path}`
        : `the server already has a private environment for Python ${py}`;
    const pick = await vs.window.showInformationMessage(`NKI: no environment needed: ${why}.`, ANYWAY);
    if (pick !== ANYWAY) return 'not-needed';
  }
  const names = requirementNames(manifest.requirements);
  const consent = await vs.window.showWarningMessage(
    `${fit.kind === 'needs-env' ? `${fit.reason} ` : ''}Create a private environment for the NKI Studio server ` +
      `from ${base.path} (Python ${py}) and download the pinned ${names.join(', ')} from the Python package ` +
      "index (roughly 60–80 MB, depending on the platform; nothing outside the extension's storage changes)?",
    { modal: true },
    DOWNLOAD,
  );
  if (consent !== DOWNLOAD) return 'declined';
  return vs.window.withProgress(
    { location: vs.ProgressLocation.Notification, title: 'NKI: server environment', cancellable: true },
    async (progress, token) => {
      deps.files.remove(paths.record); // an interrupted run must not look finished
      const remake = fit.kind === 'private-env';
      if (remake) await deps.stop();
      const steps = createSteps(base.executable, paths);
      for (const [i, step] of steps.entries()) {
        progress.report({ message: step.title, increment: i === 0 ? 5 : 0 });
        if (i === 1) deps.files.write(paths.requirements, requirementsFile(manifest));
        log.info(`server environment: ${step.command} ${step.args.join(' ')}`);
        const result = await deps.run(
          step,
          (line) => {
            log.info(`  ${line}`);
            const shown = progressLine(line);
            if (shown) progress.report({ message: shown, increment: 90 / (names.length * 3) });
          },
          token,
        );
        if (token.isCancellationRequested || result.code !== 0) {
          if (remake) await deps.restart(); // on the base interpreter: the old environment is gone
          if (result.code !== 0 && !token.isCancellationRequested)
            return reportFailure(deps, step, result, manifest, py);
          void vs.window.showInformationMessage('NKI: creating the server environment was cancelled.');
          return 'cancelled';
        }
      }
      const done: EnvRecord = { python: py, requirements: manifest.requirements, base: base.path };
      deps.files.write(paths.record, `${JSON.stringify(done, null, 2)}\n`);
      log.info(`server environment ready: ${paths.python} (Python ${py})`);
      await deps.restart();
      void vs.window.showInformationMessage(
        `NKI: the server now runs on its private environment (Python ${py}, ${paths.dir}).`,
      );
      return 'created';
    },
  );
}

function readRecord(deps: EnvCommandDeps): EnvRecord | undefined {
  const text = deps.files.read(deps.paths.record);
  return text === undefined ? undefined : parseRecord(text);
}

/** The error message for a failed step: offline, no venv module, no wheel for this Python, or pip's last line. */
export function failureMessage(step: Step, result: RunResult, manifest: Manifest, py: string): string {
  const alternative = manifest.pythons.length
    ? `, or set "nki-studio.interpreter" to a Python ${manifest.pythons.join(' or ')} (this package bundles its packages)`
    : '';
  if (looksOffline(result.output))
    return (
      'NKI: the Python package index cannot be reached (this machine looks offline, or a proxy blocks it), so the ' +
      `server's packages for Python ${py} could not be downloaded. Connect and run "${CREATE_ENV_TITLE}" again` +
      `${alternative}.`
    );
  if (/ensurepip|No module named venv/.test(result.output))
    return (
      `NKI: Python ${py} cannot create virtual environments (its venv/ensurepip module is missing; on Debian and ` +
      `Ubuntu: apt install python${py}-venv). Install it and run "${CREATE_ENV_TITLE}" again${alternative}.`
    );
  if (/No matching distribution found/.test(result.output))
    return (
      `NKI: a pinned package has no binary wheel for Python ${py} on this platform (see the log)${alternative}. ` +
      'Python 3.10 to 3.13 are supported.'
    );
  const last =
    result.output
      .trim()
      .split('\n')
      .filter((l) => l.trim())
      .at(-1) ?? `exit code ${String(result.code)}`;
  return `NKI: ${step.title.toLowerCase()} failed: ${last.trim()} (the log has the whole output)`;
}

function reportFailure(
  deps: EnvCommandDeps,
  step: Step,
  result: RunResult,
  manifest: Manifest,
  py: string,
): EnvOutcome {
  const message = failureMessage(step, result, manifest, py);
  deps.log.error(message);
  void deps.vs.window.showErrorMessage(message, SHOW_LOGS).then((pick) => {
    if (pick === SHOW_LOGS) deps.log.show();
  });
  return looksOffline(result.output) ? 'offline' : 'failed';
}

/** The real runner: the process's stdout and stderr line by line; killed when the token is cancelled. */
export const spawnRunner: Runner = (step, onLine, token) =>
  new Promise((resolve) => {
    let output = '';
    const child = spawn(step.command, step.args, { stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
    const cancel = token.onCancellationRequested(() => child.kill());
    for (const stream of [child.stdout, child.stderr])
      readline.createInterface({ input: stream }).on('line', (line) => {
        output += `${line}\n`;
        onLine(line);
      });
    child.on('error', (err) => {
      // e.g. the interpreter is gone: 'close' need not follow
      cancel.dispose();
      resolve({ code: null, output: `${output}${err.message}\n` });
    });
    child.on('close', (code) => {
      cancel.dispose();
      resolve({ code, output });
    });
  });
