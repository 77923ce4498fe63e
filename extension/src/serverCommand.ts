/**
 * How the language server process is started. With the extension's bundled Python libraries:
 * `<python> -m nki_studio.boot serve`, with `bundled/libs` (the server and its pure-Python dependencies) first
 * on PYTHONPATH; the boot module itself adds `bundled/native/cp3XY` (numpy, pyarrow, ml_dtypes built for the
 * running CPython version) and refuses a Python older than 3.10 with exit code 3, so the server can start
 * before the interpreter has been probed. Without bundled libs (running from the repository) the
 * interpreter's own nki_studio is used: `<python> -m nki_studio serve`.
 */
import * as path from 'node:path';

/** Exit code of `nki_studio.boot` for an interpreter too old to run the server. */
export const TOO_OLD_EXIT = 3;

export interface Bundle {
  libs: string;
  /** The folder of native packages per CPython version (`cp3XY/`), when the .vsix carries one. */
  nativeRoot?: string;
}

export interface ServerCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** The extension's bundled libraries, or undefined when it has none (running from the repository). */
export function bundleFor(extensionPath: string, exists: (p: string) => boolean): Bundle | undefined {
  const libs = path.join(extensionPath, 'bundled', 'libs');
  if (!exists(libs)) return undefined;
  const nativeRoot = path.join(extensionPath, 'bundled', 'native');
  return exists(nativeRoot) ? { libs, nativeRoot } : { libs };
}

/**
 * The bundle as an interpreter uses it: on the server's private environment (privateEnv.ts) the compiled packages
 * are the venv's own, so the bundled native folder is left out (it may be for this CPython version but another
 * CPU, which is one reason to make the environment).
 */
export function bundleForInterpreter(bundle: Bundle | undefined, privateEnv: boolean): Bundle | undefined {
  return bundle && privateEnv ? { libs: bundle.libs } : bundle;
}

/** `subcommand`: `serve` (the language server) or `mcp` (the MCP server for agent mode, mcpServer.ts). */
export function serverCommand(
  interpreter: string,
  bundle: Bundle | undefined,
  baseEnv: Readonly<Record<string, string | undefined>>,
  subcommand: 'serve' | 'mcp' = 'serve',
): ServerCommand {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(baseEnv)) if (v !== undefined) env[k] = v;
  env.PYTHONUTF8 = '1';
  env.PYTHONUNBUFFERED = '1';
  // The language server gives memory back after documents close only with the C allocator (server/lsp/memory.py;
  // CPython's own keeps freed arenas). It hands its children (lint and simulation workers) the default again.
  if (subcommand === 'serve' && env.PYTHONMALLOC === undefined) env.PYTHONMALLOC = 'malloc';
  if (!bundle) return { command: interpreter, args: ['-m', 'nki_studio', subcommand], env };
  env.PYTHONPATH = [bundle.libs, ...(env.PYTHONPATH ? [env.PYTHONPATH] : [])].join(path.delimiter);
  if (bundle.nativeRoot) env.NKI_STUDIO_NATIVE_ROOT = bundle.nativeRoot;
  // The bundled versions must win over anything in the user's site-packages.
  env.PYTHONNOUSERSITE = '1';
  return { command: interpreter, args: ['-m', 'nki_studio.boot', subcommand], env };
}
