/**
 * How the language server process is started: `<python> -m nki_studio serve`, with the extension's
 * bundled Python libraries first on PYTHONPATH: `bundled/libs` (the server and its pure-Python
 * dependencies) and `bundled/native/cp3XY` (numpy, pyarrow, ml_dtypes built for that CPython version).
 * Without bundled libs (running from the repository) the interpreter's own nki_studio is used.
 */
import * as path from 'node:path';

export interface Bundle {
  libs: string;
  /** Native packages for the interpreter's CPython version, when the .vsix carries them. */
  native?: string;
  /** A warning for the log when the interpreter's version has no native packages in the bundle. */
  warning?: string;
}

export interface ServerCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** The bundle for an interpreter version, or undefined when the extension has no bundled libraries. */
export function bundleFor(extensionPath: string, version: readonly [number, number], exists: (p: string) => boolean): Bundle | undefined {
  const libs = path.join(extensionPath, 'bundled', 'libs');
  if (!exists(libs)) return undefined;
  const tag = `cp${version[0]}${version[1]}`;
  const native = path.join(extensionPath, 'bundled', 'native', tag);
  if (exists(native)) return { libs, native };
  return {
    libs,
    warning:
      `this build of the extension bundles numpy/pyarrow/ml_dtypes for other Python versions, not ${version.join('.')}: ` +
      'they must be importable by the chosen interpreter, or set "nki-studio.interpreter" to a Python version the build supports ' +
      '(see bundled/manifest.json in the extension folder).',
  };
}

export function serverCommand(interpreter: string, bundle: Bundle | undefined, baseEnv: Readonly<Record<string, string | undefined>>): ServerCommand {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(baseEnv)) if (v !== undefined) env[k] = v;
  if (bundle) {
    const paths = [bundle.libs, ...(bundle.native ? [bundle.native] : [])];
    if (env.PYTHONPATH) paths.push(env.PYTHONPATH);
    env.PYTHONPATH = paths.join(path.delimiter);
    // The bundled versions must win over anything in the user's site-packages.
    env.PYTHONNOUSERSITE = '1';
  }
  env.PYTHONUTF8 = '1';
  env.PYTHONUNBUFFERED = '1';
  return { command: interpreter, args: ['-m', 'nki_studio', 'serve'], env };
}
