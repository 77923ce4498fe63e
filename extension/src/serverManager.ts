/**
 * The language server's lifecycle: find Python, start `python -m nki_studio serve` with
 * vscode-languageclient, keep its settings current, restart it (coalesced on settings changes, with
 * backoff after crashes, into full mode when trust is granted), and route `nki/*` notifications.
 */
import * as fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import type * as vscode from 'vscode';
import type {
  LanguageClient,
  LanguageClientOptions,
  ResponseError,
  ServerOptions,
  WorkDoneProgressBegin,
  WorkDoneProgressEnd,
  WorkDoneProgressReport,
} from 'vscode-languageclient/node';
import { type Found, type NotFound, discoverInterpreter, firstCandidate, isFound } from './interpreter';
import { type InterpreterCache, sameInterpreter } from './interpreterCache';
import { realProbes } from './pythonProbes';
import { CrashBackoff, Coalescer } from './restartPolicy';
import { bundleFor, serverCommand } from './serverCommand';
import { needsRestart, serverLogLevel, serverSettings } from './settings';
import type { Timings } from './timings';
import type { VsCode } from './vscodeApi';

type LanguageClientModule = typeof import('vscode-languageclient/node');

/**
 * vscode-languageclient is most of the extension's load time (about 50 ms of the bundle's require):
 * loaded when the server starts (while the interpreter probe runs), not when the extension activates.
 */
function languageClientModule(): LanguageClientModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- deliberately lazy; esbuild bundles it all the same
  return require('vscode-languageclient/node') as LanguageClientModule;
}

export type ServerState = 'starting' | 'running' | 'stopped' | 'failed' | 'no-python';

/** Background work (the interpreter check) waits at most this long for the first diagnostics. */
const STARTUP_GRACE_MS = 3000;

export type ProgressValue = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

export class ServerManager {
  private client: LanguageClient | undefined;
  private readonly backoff = new CrashBackoff();
  private readonly settingsRestart: Coalescer;
  private readonly stateEmitter: vscode.EventEmitter<ServerState>;
  private readonly handlers = new Map<string, (params: unknown) => void>();
  private readonly disposables: vscode.Disposable[] = [];
  private pendingRestart: ReturnType<typeof setTimeout> | undefined;
  private opened = new Map<string, number>();
  private state: ServerState = 'stopped';
  private interpreterInfo = '';
  private stopping = false;
  /** Counts start() calls, so a background check acts only on the start it belongs to. */
  private generation = 0;

  readonly onDidChangeState: vscode.Event<ServerState>;

  constructor(
    private readonly vs: VsCode,
    private readonly extensionPath: string,
    readonly log: vscode.LogOutputChannel,
    private readonly timings: Timings,
    private readonly activatedAt: number,
    private readonly interpreters: InterpreterCache,
  ) {
    this.stateEmitter = new vs.EventEmitter<ServerState>();
    this.onDidChangeState = this.stateEmitter.event;
    this.settingsRestart = new Coalescer(() => void this.restart('interpreter setting changed'), 400);
    this.disposables.push(
      this.stateEmitter,
      vs.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration('nki-studio')) return;
        if (needsRestart((s) => e.affectsConfiguration(s))) this.settingsRestart.trigger();
        else this.sendSettings();
      }),
      vs.workspace.onDidGrantWorkspaceTrust(() => void this.restart('workspace trusted: starting in full mode')),
      log.onDidChangeLogLevel(() => this.sendSettings()),
    );
  }

  get currentState(): ServerState {
    return this.state;
  }

  get interpreter(): string {
    return this.interpreterInfo;
  }

  get trusted(): boolean {
    return this.vs.workspace.isTrusted;
  }

  /** Route a server notification (kept across restarts). */
  onNotification(method: string, handler: (params: unknown) => void): void {
    this.handlers.set(method, handler);
    this.client?.onNotification(method, handler);
  }

  settings(): Record<string, unknown> {
    return serverSettings(
      this.vs.workspace.getConfiguration('nki-studio'),
      this.trusted,
      serverLogLevel(this.log.logLevel),
    );
  }

  async start(): Promise<void> {
    if (this.client) return;
    this.setState('starting');
    const generation = ++this.generation;
    const setting = this.vs.workspace.getConfiguration('nki-studio').get<string>('interpreter')?.trim() ?? '';
    // Start on the interpreter that ran the server last time (see interpreterCache.ts); it is checked by a
    // discovery once the first diagnostics are out, so that discovery does not compete with them.
    const remembered = this.interpreters.get(setting);
    const discover = (): Promise<Found | NotFound> => {
      const probeStarted = performance.now();
      return discoverInterpreter(realProbes(this.vs)).then((result) => {
        this.timings.record({
          event: 'interpreter',
          ms: performance.now() - probeStarted,
          remembered: remembered !== undefined,
        });
        for (const s of result.skipped) this.log.info(`interpreter skipped: ${s}`);
        return result;
      });
    };
    // With the bundle, a first start need not wait for the probe either: it starts on the first candidate
    // (nki_studio.boot refuses a too-old Python) and the discovery checks that choice once the server is up.
    const bundle = bundleFor(this.extensionPath, (p) => fs.existsSync(p));
    let speculative: Found | undefined;
    if (!remembered && bundle) {
      const candidate = await firstCandidate(realProbes(this.vs));
      // A launcher (pyenv shim...) starts what it resolved to last time on this machine, if known.
      if (candidate)
        speculative = {
          ...candidate,
          executable: this.interpreters.resolved(candidate.path) ?? candidate.path,
          version: [0, 0],
          skipped: [],
        };
    }
    const discovery = (remembered ?? speculative) ? undefined : discover();
    if (discovery) await new Promise((resolve) => setImmediate(resolve)); // let the probe's process start first
    const { CloseAction, ErrorAction, LanguageClient } = languageClientModule();
    const found = remembered ?? speculative ?? (await (discovery as Promise<Found | NotFound>));
    if (discovery && isFound(found)) this.interpreters.set(setting, found);
    if (!isFound(found)) {
      this.reportNoPython(found);
      return;
    }
    const cmd = serverCommand(found.executable, bundle, process.env);
    const runs = found.executable === found.path ? '' : `, runs ${found.executable}`;
    const from = remembered ? `${found.source}, remembered from the last start` : found.source;
    this.interpreterInfo = speculative
      ? `${found.path} (from ${from}${runs ? `${runs} as last time on this machine` : ''}; its version is checked as the server starts)`
      : `${found.path} (Python ${found.version.join('.')}, from ${from}${runs})`;
    this.log.info(
      `starting server: ${cmd.command} ${cmd.args.join(' ')} — ${this.interpreterInfo}; ` +
        (bundle
          ? `bundled libraries ${cmd.env.PYTHONPATH}`
          : "no bundled libraries: using the interpreter's own nki_studio"),
    );
    this.log.info(
      this.trusted
        ? 'workspace trusted: lint, simulate and profile'
        : 'restricted mode (untrusted workspace): lint only',
    );

    // Start-up is over at the first diagnostics, or STARTUP_GRACE_MS after the start (no Python file open).
    let startupOver: () => void = () => undefined;
    const startup = new Promise<void>((resolve) => {
      startupOver = resolve;
      setTimeout(resolve, STARTUP_GRACE_MS);
    });
    const serverOptions: ServerOptions = { command: cmd.command, args: cmd.args, options: { env: cmd.env } };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: 'file', language: 'python' },
        { scheme: 'untitled', language: 'python' },
      ],
      outputChannel: this.log,
      initializationOptions: this.settings(),
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => {
          this.onCrash('the server process exited');
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
      middleware: {
        workspace: {
          // The server pulls its section; add what only the client knows (trust, log level).
          configuration: async (params, token, next): Promise<unknown[] | ResponseError> => {
            const result: unknown[] | ResponseError = (await next(params, token)) as unknown[] | ResponseError;
            if (!Array.isArray(result)) return result;
            return params.items.map((item, i): unknown =>
              item.section === 'nki-studio' ? this.settings() : result[i],
            );
          },
        },
        didOpen: (document, next) => {
          this.opened.set(document.uri.toString(), performance.now());
          return next(document);
        },
        handleDiagnostics: (uri, diagnostics, next) => {
          startupOver();
          const key = uri.toString();
          const openedAt = this.opened.get(key);
          if (openedAt !== undefined) {
            this.opened.delete(key);
            const now = performance.now();
            this.timings.record({
              event: 'firstDiagnostics',
              uri: key,
              ms: now - openedAt,
              sinceActivateMs: now - this.activatedAt,
            });
          }
          next(uri, diagnostics);
        },
      },
    };
    const client = new LanguageClient('nki-studio', 'NKI Studio', serverOptions, clientOptions);
    for (const [method, handler] of this.handlers) client.onNotification(method, handler);
    this.client = client;
    const started = performance.now();
    let failed = false;
    try {
      await client.start();
    } catch (err) {
      failed = true;
      this.log.error(`server failed to start: ${String(err)}`);
      // A first start on an unprobed candidate: the discovery decides what to run (or that nothing can).
      if (speculative) {
        const dead = this.client;
        this.client = undefined;
        void dead?.dispose().catch(() => undefined);
        void this.afterSpeculativeFailure(setting, discover(), generation);
      } else {
        this.onCrash(`the server failed to start (${String(err)})`);
      }
    }
    // The interpreter check waits for the end of start-up: on a 2-core machine its probe process, started
    // alongside, delays the first diagnostics.
    const unchecked = remembered ?? (failed ? undefined : speculative);
    if (unchecked) void this.confirmInterpreter(setting, unchecked, !remembered, startup.then(discover), generation);
    if (failed) return;
    this.timings.record({ event: 'serverReady', ms: performance.now() - started });
    this.setState('running');
  }

  async stop(): Promise<void> {
    await this.shutdownClient();
    this.setState('stopped');
  }

  /** A deliberate restart (command, trust granted, interpreter changed): resets the crash backoff. */
  async restart(reason: string): Promise<void> {
    this.log.info(`restarting server: ${reason}`);
    this.backoff.reset();
    this.setState('starting'); // commands issued meanwhile wait for the new server instead of failing
    await this.shutdownClient();
    await this.start();
  }

  private async shutdownClient(): Promise<void> {
    if (this.pendingRestart) clearTimeout(this.pendingRestart);
    this.pendingRestart = undefined;
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    this.stopping = true;
    try {
      await client.stop(5000);
    } catch (err) {
      this.log.warn(`server did not stop cleanly: ${String(err)}`);
    } finally {
      this.stopping = false;
    }
  }

  /** Push the current settings to a running server. */
  sendSettings(): void {
    const client = this.client;
    if (!client || this.state !== 'running') return;
    void client.sendNotification('workspace/didChangeConfiguration', { settings: { 'nki-studio': this.settings() } });
  }

  /**
   * workspace/executeCommand on the server with a work-done token: `onProgress` sees its $/progress,
   * cancelling `token` sends $/cancelRequest.
   */
  async executeCommand(
    command: string,
    args: unknown[],
    token?: vscode.CancellationToken,
    onProgress?: (value: ProgressValue) => void,
  ): Promise<unknown> {
    await this.whenRunning(60_000);
    const client = this.client;
    if (!client) throw new Error('the NKI language server is not running (see "NKI: Show Logs")');
    const workDoneToken = `nki-studio-${randomUUID()}`;
    const { ExecuteCommandRequest, WorkDoneProgress } = languageClientModule();
    const sub = client.onProgress(WorkDoneProgress.type, workDoneToken, (value) => onProgress?.(value));
    try {
      return await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args, workDoneToken }, token);
    } finally {
      sub.dispose();
    }
  }

  /** Resolves once the server runs; waits while it is (re)starting, e.g. right after trust was granted. */
  whenRunning(timeoutMs: number): Promise<void> {
    if (this.state === 'running' && this.client) return Promise.resolve();
    if (this.state !== 'starting')
      return Promise.reject(new Error('the NKI language server is not running (see "NKI: Show Logs")'));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        sub.dispose();
        reject(new Error(`the NKI language server did not start within ${timeoutMs / 1000} s (see "NKI: Show Logs")`));
      }, timeoutMs);
      const sub = this.onDidChangeState((state) => {
        if (state === 'starting') return;
        clearTimeout(timer);
        sub.dispose();
        if (state === 'running') resolve();
        else reject(new Error('the NKI language server is not running (see "NKI: Show Logs")'));
      });
    });
  }

  dispose(): void {
    this.settingsRestart.dispose();
    void this.stop();
    for (const d of this.disposables) d.dispose();
  }

  private reportNoPython(found: NotFound): void {
    this.log.error(`${found.message} ${found.fix}`);
    this.setState('no-python');
    void this.vs.window.showErrorMessage(`${found.message} ${found.fix}`, 'Open Settings', 'Show Logs').then((pick) => {
      if (pick === 'Open Settings')
        void this.vs.commands.executeCommand('workbench.action.openSettings', 'nki-studio.interpreter');
      if (pick === 'Show Logs') this.log.show();
    });
  }

  /** The unprobed candidate could not run the server (too old, say): start on what discovery finds. */
  private async afterSpeculativeFailure(
    setting: string,
    discovery: Promise<Found | NotFound>,
    generation: number,
  ): Promise<void> {
    const fresh = await discovery;
    if (generation !== this.generation || this.state === 'stopped') return;
    if (!isFound(fresh)) {
      if (this.pendingRestart) clearTimeout(this.pendingRestart); // scheduled when the process closed
      this.pendingRestart = undefined;
      this.reportNoPython(fresh);
      return;
    }
    this.interpreters.set(setting, fresh); // the next start is a normal one on this interpreter
    // (a no-op when closing the process already scheduled the restart)
    this.onCrash(`the server failed to start on the first interpreter found; using ${fresh.executable}`);
  }

  /**
   * Started on an interpreter discovery did not just check (remembered from the last start, or the first
   * candidate, unprobed): discovery confirms it (a confirmed candidate is remembered), or the server starts
   * again on what discovery found (nothing remembered when it found nothing, or when the remembered one moved).
   */
  private async confirmInterpreter(
    setting: string,
    started: Found,
    speculative: boolean,
    discovery: Promise<Found | NotFound>,
    generation: number,
  ): Promise<void> {
    const fresh = await discovery;
    // An unprobed start ran the candidate itself (then whatever it launches is right) or what it resolved to
    // before (right only if it still resolves there).
    const ranLauncher = started.executable === started.path;
    const unprobedRight =
      isFound(fresh) && fresh.path === started.path && (ranLauncher || fresh.executable === started.executable);
    if (isFound(fresh) && (speculative ? unprobedRight : sameInterpreter(fresh, started))) {
      if (!speculative) return;
      this.interpreters.set(setting, fresh);
      const runs =
        fresh.executable === fresh.path ? '' : `, runs ${fresh.executable}${ranLauncher ? ' from the next start' : ''}`;
      this.interpreterInfo = `${fresh.path} (Python ${fresh.version.join('.')}, from ${fresh.source}${runs})`;
      this.log.info(`interpreter confirmed: ${this.interpreterInfo}`);
      return;
    }
    if (speculative && isFound(fresh)) this.interpreters.set(setting, fresh);
    else this.interpreters.clear();
    await this.whenRunning(60_000).catch(() => undefined);
    // not when the server was stopped or restarted meanwhile (that start already discovered afresh)
    if (generation !== this.generation || this.state === 'stopped') return;
    void this.restart(isFound(fresh) ? `the interpreter is now ${fresh.executable}` : 'no usable interpreter');
  }

  private onCrash(why: string): void {
    if (this.stopping || this.pendingRestart) return;
    const client = this.client;
    this.client = undefined;
    void client?.dispose().catch(() => undefined);
    const delay = this.backoff.next(Date.now());
    if (delay === undefined) {
      this.setState('failed');
      const msg = `NKI Studio: ${why} repeatedly; not restarting. The log has the server's error output.`;
      this.log.error(msg);
      void this.vs.window.showErrorMessage(msg, 'Show Logs', 'Restart Server').then((pick) => {
        if (pick === 'Show Logs') this.log.show();
        if (pick === 'Restart Server') void this.restart('restart requested');
      });
      return;
    }
    this.setState('starting');
    this.log.warn(`${why}; restarting in ${delay} ms`);
    this.pendingRestart = setTimeout(() => {
      this.pendingRestart = undefined;
      void this.start();
    }, delay);
  }

  private setState(state: ServerState): void {
    this.state = state;
    this.stateEmitter.fire(state);
  }
}
