/**
 * The language server as the rest of the extension sees it: wires the interpreter choice (launchPlan.ts), the
 * language client (languageClient.ts) and the start/stop/restart state machine (serverLifecycle.ts) to VS Code,
 * keeps the server's settings current, restarts it (coalesced on settings changes, into full mode when trust is
 * granted) and sends it commands.
 */
import * as fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import type * as vscode from 'vscode';
import type {
  LanguageClient,
  WorkDoneProgressBegin,
  WorkDoneProgressEnd,
  WorkDoneProgressReport,
} from 'vscode-languageclient/node';
import { type Found, type NotFound, discoverInterpreter } from './interpreter';
import type { InterpreterCache } from './interpreterCache';
import { languageClientModule, languageClients } from './languageClient';
import { refuseUntrusted } from './trust';
import { realProbes } from './pythonProbes';
import { Coalescer } from './restartPolicy';
import { CREATE_ENV_COMMAND } from './privateEnvCommand';
import type { NotificationMethod, ServerCommand, ServerCommandArguments } from './protocol.generated';
import { type Bundle, bundleFor, bundleForInterpreter } from './serverCommand';
import type { ServerEnvironment } from './serverEnvironment';
import { NOT_RUNNING, ServerLifecycle, type ServerState } from './serverLifecycle';
import { needsRestart, serverLogLevel, serverSettings } from './settings';
import type { Timings } from './timings';
import type { VsCode } from './vscodeApi';

export type ProgressValue = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

export class ServerManager {
  private readonly lifecycle: ServerLifecycle<LanguageClient>;
  private readonly settingsRestart: Coalescer;
  private readonly disposables: vscode.Disposable[] = [];

  readonly onDidChangeState: vscode.Event<ServerState>;

  constructor(
    private readonly vs: VsCode,
    private readonly extensionPath: string,
    readonly log: vscode.LogOutputChannel,
    timings: Timings,
    activatedAt: number,
    private readonly interpreters: InterpreterCache,
    readonly environment: ServerEnvironment,
  ) {
    this.lifecycle = new ServerLifecycle({
      vs,
      log,
      timings,
      onInterpreter: (found) => this.offerEnvironment(found),
      bootstrap: {
        probes: realProbes(vs, (setting) => environment.python(setting)),
        cache: interpreters,
        bundle: () => bundleFor(extensionPath, (p) => fs.existsSync(p)),
        env: process.env,
        timings,
        log,
      },
      clients: languageClients({
        log,
        timings,
        activatedAt,
        settings: () => this.settings(),
        trusted: () => vs.workspace.isTrusted,
        refuseUntrusted: () => refuseUntrusted(vs),
      }),
    });
    this.onDidChangeState = this.lifecycle.onDidChangeState;
    this.settingsRestart = new Coalescer(() => void this.restart('interpreter setting changed'), 400);
    this.disposables.push(
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
    return this.lifecycle.currentState;
  }

  get interpreter(): string {
    return this.lifecycle.interpreter;
  }

  /** The interpreter the language server runs on ('' before it first started): the MCP server's too. */
  get executable(): string {
    return this.lifecycle.executablePath;
  }

  get trusted(): boolean {
    return this.vs.workspace.isTrusted;
  }

  /** Route a server notification (kept across restarts). */
  onNotification(method: NotificationMethod, handler: (params: unknown) => void): void {
    this.lifecycle.onNotification(method, handler);
  }

  settings(): Record<string, unknown> {
    return serverSettings(
      this.vs.workspace.getConfiguration('nki-studio'),
      this.trusted,
      serverLogLevel(this.log.logLevel),
    );
  }

  start(): Promise<void> {
    return this.lifecycle.start();
  }

  stop(): Promise<void> {
    return this.lifecycle.stop();
  }

  /** A deliberate restart (command, trust granted, interpreter changed): resets the crash backoff. */
  restart(reason: string): Promise<void> {
    return this.lifecycle.restart(reason);
  }

  /** Restart after the private environment changed: forget the remembered interpreter, so discovery picks it. */
  restartOnNewEnvironment(): Promise<void> {
    this.interpreters.clear();
    return this.restart('the server environment changed');
  }

  /** What the private environment is made from: discovery as for a start, the environment itself not counted. */
  baseInterpreter(): Promise<Found | NotFound> {
    return discoverInterpreter(realProbes(this.vs));
  }

  /** The bundle for another process on the server's interpreter (the MCP server). */
  bundleForExecutable(): Bundle | undefined {
    const bundle = bundleFor(this.extensionPath, (p) => fs.existsSync(p));
    return bundleForInterpreter(bundle, this.executable !== '' && this.executable === this.environment.python());
  }

  /** The server started on an interpreter the package has no compiled packages for: offer the environment. */
  private offerEnvironment(found: Found): void {
    const reason = this.environment.offerFor(found);
    if (!reason) return;
    this.log.warn(reason);
    const create = 'Create Server Environment';
    void this.vs.window
      .showWarningMessage(
        `NKI: ${reason} Simulation and profiles need them: create a private environment for the server?`,
        create,
        'Not Now',
      )
      .then((pick) => {
        if (pick === create) void this.vs.commands.executeCommand(CREATE_ENV_COMMAND);
      });
  }

  /** Push the current settings to a running server. */
  sendSettings(): void {
    const client = this.lifecycle.client;
    if (!client || this.currentState !== 'running') return;
    void client.sendNotification('workspace/didChangeConfiguration', { settings: { 'nki-studio': this.settings() } });
  }

  /**
   * workspace/executeCommand on the server with a work-done token: `onProgress` sees its $/progress,
   * cancelling `token` sends $/cancelRequest.
   */
  async executeCommand<C extends ServerCommand>(
    command: C,
    args: ServerCommandArguments[C],
    token?: vscode.CancellationToken,
    onProgress?: (value: ProgressValue) => void,
  ): Promise<unknown> {
    await this.lifecycle.whenRunning(60_000);
    const client = this.lifecycle.client;
    if (!client) throw new Error(NOT_RUNNING);
    const workDoneToken = `nki-studio-${randomUUID()}`;
    const { ExecuteCommandRequest, WorkDoneProgress } = languageClientModule();
    const sub = client.onProgress(WorkDoneProgress.type, workDoneToken, (value) => onProgress?.(value));
    try {
      return await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args, workDoneToken }, token);
    } finally {
      sub.dispose();
    }
  }

  dispose(): void {
    this.settingsRestart.dispose();
    this.lifecycle.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
