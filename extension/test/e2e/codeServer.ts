/**
 * Starts a real VS Code (code-server from npm, installed by scripts/setup-extension.sh) on 127.0.0.1 with
 * throw-away user-data and extension folders, installs the built .vsix into it, and stops it by PID.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';

export const ROOT = path.resolve(__dirname, '..', '..', '..', '..');
export const CODE_SERVER = path.join(ROOT, '.cache', 'e2e', 'node_modules', '.bin', 'code-server');

/** A code-server install to drive: its launcher and, when not the machine's, the Node bin folder it needs. */
export interface CodeServerBuild {
  bin: string;
  nodeBin?: string;
}

/** The main suite's build: code-server 4.100.3 (VS Code 1.100) on the machine's Node 20. */
export const DEFAULT_BUILD: CodeServerBuild = { bin: CODE_SERVER };

/**
 * VS Code >= 1.101 (agent mode's MCP server definition provider API): code-server 4.103.2 (VS Code 1.103.2) on
 * Node 22 from PyPI, both installed by scripts/setup-extension.sh into their own folders.
 */
export const VSCODE_1_103: CodeServerBuild = {
  bin: path.join(ROOT, '.cache', 'e2e-vscode-1.103', 'node_modules', '.bin', 'code-server'),
  nodeBin: path.join(ROOT, '.cache', 'node22', 'bin'),
};

/** The environment a build runs in: its Node first on PATH (the launcher is `#!/usr/bin/env node`). */
function buildEnv(build: CodeServerBuild, extra?: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  if (build.nodeBin) env.PATH = `${build.nodeBin}${path.delimiter}${env.PATH ?? ''}`;
  return env;
}
export const ARTIFACTS = path.join(ROOT, 'test-artifacts', 'extension');

const run = promisify(execFile);

/** The .vsix under test: $NKI_STUDIO_VSIX when set (e.g. a benchmark baseline), else the one npm run package built. */
export function vsixPath(): string {
  if (process.env.NKI_STUDIO_VSIX) return path.resolve(process.env.NKI_STUDIO_VSIX);
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
  return path.join(ROOT, `${pkg.name}-${pkg.version}.vsix`);
}

/** Fail early, with the fix, when a prerequisite is missing (never skip silently). */
export function checkPrerequisites(build: CodeServerBuild = DEFAULT_BUILD): void {
  const missing: string[] = [];
  if (!fs.existsSync(build.bin)) missing.push(`code-server (${build.bin}): run scripts/setup-extension.sh`);
  if (build.nodeBin && !fs.existsSync(path.join(build.nodeBin, 'node')))
    missing.push(`Node (${build.nodeBin}/node): run scripts/setup-extension.sh`);
  if (!fs.existsSync('/usr/bin/chromium'))
    missing.push('/usr/bin/chromium: run scripts/setup-extension.sh (apt-get install chromium)');
  if (!fs.existsSync(vsixPath())) missing.push(`${vsixPath()}: run npm run package`);
  if (missing.length) throw new Error(`end-to-end prerequisites missing:\n  ${missing.join('\n  ')}`);
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

async function waitForHttp(url: string, timeoutMs: number, proc: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`code-server exited with ${proc.exitCode}:\n${log()}`);
    try {
      const res = await fetch(url);
      if (res.status < 500) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`code-server did not answer on ${url} within ${timeoutMs} ms:\n${log()}`);
}

export interface CodeServerOptions {
  workspace: string;
  trusted: boolean;
  /** Extra user settings. */
  settings?: Record<string, unknown>;
  /** User keybindings (keybindings.json entries), e.g. a key that runs a command with arguments. */
  keybindings?: unknown[];
  /** Extra environment for the server (inherited by the extension host and the language server). */
  env?: Record<string, string>;
  /**
   * A folder for the user data and extensions that outlives this server (the caller removes it): a later
   * server on it is a later window of the same VS Code install (global state kept, the .vsix installed once).
   */
  profileDir?: string;
  /** Which code-server to run (default: the main suite's, VS Code 1.100). */
  build?: CodeServerBuild;
}

export class CodeServer {
  private proc: ChildProcess | undefined;
  private output = '';
  url = '';

  private constructor(
    readonly dir: string,
    private readonly owned: boolean,
  ) {}

  /** Install the .vsix into fresh folders, then start the server (an extension installed later is not seen). */
  static async start(options: CodeServerOptions): Promise<CodeServer> {
    const build = options.build ?? DEFAULT_BUILD;
    const cs = options.profileDir
      ? new CodeServer(options.profileDir, false)
      : new CodeServer(fs.mkdtempSync(path.join(os.tmpdir(), 'nki-e2e-')), true);
    const userData = path.join(cs.dir, 'user-data');
    const extensions = path.join(cs.dir, 'extensions');
    fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
    fs.writeFileSync(
      path.join(userData, 'User', 'settings.json'),
      JSON.stringify({
        'workbench.startupEditor': 'none',
        'workbench.tips.enabled': false,
        'workbench.welcomePage.walkthroughs.openOnInstall': false,
        'telemetry.telemetryLevel': 'off',
        'extensions.autoUpdate': false,
        'extensions.autoCheckUpdates': false,
        'extensions.ignoreRecommendations': true,
        'security.workspace.trust.startupPrompt': 'never',
        'security.workspace.trust.banner': 'never',
        'editor.hover.delay': 200,
        'files.autoSave': 'off',
        ...options.settings,
      }),
    );
    fs.writeFileSync(path.join(userData, 'User', 'keybindings.json'), JSON.stringify(options.keybindings ?? []));
    const installed = fs.existsSync(extensions) && fs.readdirSync(extensions).some((d) => d.startsWith('nki-studio'));
    if (!installed)
      await run(
        build.bin,
        ['--install-extension', vsixPath(), '--user-data-dir', userData, '--extensions-dir', extensions],
        { timeout: 180_000, env: buildEnv(build) },
      );
    const port = await freePort();
    const args = [
      '--auth',
      'none',
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--disable-telemetry',
      '--disable-update-check',
      '--user-data-dir',
      userData,
      '--extensions-dir',
      extensions,
      ...(options.trusted ? ['--disable-workspace-trust'] : []),
      options.workspace,
    ];
    const proc = spawn(build.bin, args, {
      env: buildEnv(build, options.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cs.proc = proc;
    proc.stdout?.on('data', (d: Buffer) => (cs.output += d.toString()));
    proc.stderr?.on('data', (d: Buffer) => (cs.output += d.toString()));
    cs.url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(options.workspace)}`;
    await waitForHttp(`http://127.0.0.1:${port}/healthz`, 60_000, proc, () => cs.output);
    return cs;
  }

  get log(): string {
    return this.output;
  }

  /** Stop the server we started (by its PID) and remove its folders. */
  async stop(): Promise<void> {
    const proc = this.proc;
    if (proc && proc.exitCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (proc.exitCode === null) proc.kill('SIGKILL');
    }
    if (this.owned) fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A fresh workspace folder holding copies of the given files (paths relative to the repository, or absolute). */
export function makeWorkspace(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nki-ws-'));
  for (const [name, source] of Object.entries(files)) fs.copyFileSync(path.resolve(ROOT, source), path.join(dir, name));
  return dir;
}
