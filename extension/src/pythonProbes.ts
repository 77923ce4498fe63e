/** The real interpreter probes: the setting, the (optional) Python extension's API, PATH, and a version check. */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { InterpreterProbes, PythonInfo } from './interpreter';
import type { VsCode } from './vscodeApi';

/** The parts of ms-python.python's exported API we use (new environments API, then the older settings API). */
interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: unknown): { path: string } | undefined;
    resolveEnvironment(
      env: { path: string } | string,
    ): Promise<{ executable?: { uri?: { fsPath: string } } } | undefined>;
  };
  settings?: { getExecutionDetails(resource?: unknown): { execCommand?: string[] } | undefined };
}

async function fromPythonExtension(vs: VsCode): Promise<string | undefined> {
  const ext = vs.extensions.getExtension<PythonExtensionApi>('ms-python.python');
  if (!ext) return undefined;
  const api = ext.isActive ? ext.exports : await ext.activate();
  const resource = vs.workspace.workspaceFolders?.[0]?.uri;
  const envPath = api.environments?.getActiveEnvironmentPath(resource);
  if (api.environments && envPath) {
    const env = await api.environments.resolveEnvironment(envPath);
    const exe = env?.executable?.uri?.fsPath;
    if (exe) return exe;
  }
  return api.settings?.getExecutionDetails(resource)?.execCommand?.[0];
}

export function which(name: string, envPath = process.env.PATH ?? ''): string | undefined {
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * Version and sys.executable of an interpreter. `-S` skips site-packages (and their .pth files): the
 * answer does not depend on them and the probe starts in about a tenth of the time. The output is
 * written without print() so a Python 2 answers too (and is then reported as too old).
 */
export function pythonInfo(exe: string): Promise<PythonInfo | string> {
  const code =
    'import sys; sys.stdout.write("%d %d %s" % (sys.version_info[0], sys.version_info[1], sys.executable or ""))';
  return new Promise((resolve) => {
    execFile(exe, ['-S', '-c', code], { timeout: 10_000 }, (err, stdout) => {
      if (err) {
        resolve(err.message.split('\n')[0]);
        return;
      }
      const m = /^(\d+) (\d+) ?(.*)$/.exec(stdout.trim());
      resolve(
        m
          ? { version: [Number(m[1]), Number(m[2])], executable: m[3] }
          : `unexpected version output ${JSON.stringify(stdout.trim())}`,
      );
    });
  });
}

/** `privateEnv`: the server's private environment's interpreter when it is complete (serverEnvironment.ts). */
export function realProbes(
  vs: VsCode,
  privateEnv?: (setting: string | undefined) => string | undefined,
): InterpreterProbes {
  return {
    setting: () => vs.workspace.getConfiguration('nki-studio').get<string>('interpreter'),
    privateEnv,
    pythonExtension: () => fromPythonExtension(vs),
    which: (name) => which(name),
    version: pythonInfo,
  };
}
