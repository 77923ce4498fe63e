/**
 * The language server's start/stop/restart state machine: starts a client on a launch plan (launchPlan.ts),
 * confirms an interpreter the start did not probe once start-up is over, restarts after crashes with backoff
 * (restartPolicy.ts) and gives up after repeated ones. Overlapping requests are serialised: a start asked for
 * while one is under way joins it, restarts asked for meanwhile run once after it, and a stop ends a start under
 * way without it going 'running'. The client factory, timers and clock are injected so tests can drive it.
 */
import type * as vscode from 'vscode';
import { type Found, type NotFound, isFound } from './interpreter';
import {
  type Bootstrap,
  type LaunchPlan,
  confirmPlan,
  discover,
  isLaunchPlan,
  launchMessage,
  planLaunch,
} from './launchPlan';
import type { NotificationMethod } from './protocol.generated';
import { CrashBackoff, type Timers, realTimers } from './restartPolicy';
import type { Timings } from './timings';
import type { VsCode } from './vscodeApi';

export type ServerState = 'starting' | 'running' | 'stopped' | 'failed' | 'no-python';

/** Background work (the interpreter check) waits at most this long for the first diagnostics. */
export const STARTUP_GRACE_MS = 3000;

/**
 * How long a stop or restart waits for a start under way to end (vscode-languageclient cannot stop a client
 * that is starting). A server that never answers must not hold them up: they then go ahead without it.
 */
export const START_WAIT_MS = 5000;

/** What the lifecycle needs of a language client (vscode-languageclient's LanguageClient has it). */
export interface ManagedClient {
  start(): Promise<void>;
  stop(timeout: number): Promise<void>;
  dispose(): Promise<void>;
  onNotification(method: string, handler: (params: unknown) => void): unknown;
}

/** What a client reports back to the lifecycle. */
export interface ClientEvents {
  /** The server process exited (the client must not restart it itself). */
  closed(): void;
  /** Diagnostics arrived: start-up is over. */
  diagnostics(): void;
}

export interface ClientFactory<C extends ManagedClient> {
  /** Runs while the interpreter probe does, before the plan is known: load what `create` needs. */
  prepare(): void;
  create(plan: LaunchPlan, events: ClientEvents): C;
}

export interface LifecycleDeps<C extends ManagedClient> {
  vs: Pick<VsCode, 'EventEmitter' | 'window' | 'workspace' | 'commands'>;
  log: Pick<vscode.LogOutputChannel, 'info' | 'warn' | 'error' | 'show'>;
  timings: Pick<Timings, 'record'>;
  bootstrap: Bootstrap;
  clients: ClientFactory<C>;
  timers?: Timers;
  /** The clock the crash backoff counts with. */
  now?: () => number;
  /** Told the interpreter of each start once its version is known (probed, remembered, or confirmed later). */
  onInterpreter?: (found: Found) => void;
}

/** Why a command cannot be sent to the server. */
export const NOT_RUNNING = 'the NKI language server is not running (see "NKI: Show Logs")';

export class ServerLifecycle<C extends ManagedClient> {
  private current: C | undefined;
  private readonly backoff = new CrashBackoff();
  private readonly stateEmitter: vscode.EventEmitter<ServerState>;
  private readonly handlers = new Map<NotificationMethod, (params: unknown) => void>();
  private readonly timers: Timers;
  private readonly now: () => number;
  private pendingRestart: unknown;
  private state: ServerState = 'stopped';
  private interpreterInfo = '';
  private executable = '';
  private stopping = false;
  /** Counts starts and stops, so a start or background check acts only while it is the latest. */
  private generation = 0;
  /** Counts stops, so a restart queued before a stop does not run after it. */
  private stops = 0;
  /** The start or restart under way. */
  private busy: Promise<void> | undefined;
  /** A restart waiting for `busy` to end; later restart requests join it. */
  private queued: Promise<void> | undefined;

  readonly onDidChangeState: vscode.Event<ServerState>;

  constructor(private readonly deps: LifecycleDeps<C>) {
    this.stateEmitter = new deps.vs.EventEmitter<ServerState>();
    this.onDidChangeState = this.stateEmitter.event;
    this.timers = deps.timers ?? realTimers;
    this.now = deps.now ?? (() => Date.now());
  }

  get currentState(): ServerState {
    return this.state;
  }

  /** The interpreter the server runs on, described for the user ('' before the first start). */
  get interpreter(): string {
    return this.interpreterInfo;
  }

  /** The interpreter the server was last started on ('' before the first start). */
  get executablePath(): string {
    return this.executable;
  }

  /** The client, while one is started or starting. */
  get client(): C | undefined {
    return this.current;
  }

  /** Route a server notification (kept across restarts). */
  onNotification(method: NotificationMethod, handler: (params: unknown) => void): void {
    this.handlers.set(method, handler);
    this.current?.onNotification(method, handler);
  }

  start(): Promise<void> {
    if (this.current) return Promise.resolve();
    return this.busy ?? this.track(this.launch());
  }

  async stop(): Promise<void> {
    this.generation++; // a start under way ends without going 'running' (its client is stopped here)
    this.stops++;
    if (this.busy) await this.startEnded();
    await this.shutdownClient();
    this.setState('stopped');
  }

  /** A deliberate restart (command, trust granted, interpreter changed): resets the crash backoff. */
  restart(reason: string): Promise<void> {
    this.deps.log.info(`restarting server: ${reason}`);
    this.backoff.reset();
    this.setState('starting'); // commands issued meanwhile wait for the new server instead of failing
    if (this.queued) return this.queued;
    if (!this.busy) return this.track(this.relaunch());
    // The client of a start under way cannot be stopped before its start ends: restart once after it.
    const stops = this.stops;
    const queued = this.startEnded().then(() => {
      this.queued = undefined;
      return stops === this.stops ? this.track(this.relaunch()) : undefined;
    });
    this.queued = queued;
    return queued;
  }

  /** Resolves once the server runs; waits while it is (re)starting, e.g. right after trust was granted. */
  whenRunning(timeoutMs: number): Promise<void> {
    if (this.state === 'running' && this.current) return Promise.resolve();
    if (this.state !== 'starting') return Promise.reject(new Error(NOT_RUNNING));
    return new Promise((resolve, reject) => {
      const timer = this.timers.set(() => {
        sub.dispose();
        reject(new Error(`the NKI language server did not start within ${timeoutMs / 1000} s (see "NKI: Show Logs")`));
      }, timeoutMs);
      const sub = this.onDidChangeState((state) => {
        if (state === 'starting') return;
        this.timers.clear(timer);
        sub.dispose();
        if (state === 'running') resolve();
        else reject(new Error(NOT_RUNNING));
      });
    });
  }

  dispose(): void {
    void this.stop();
    this.stateEmitter.dispose();
  }

  private track(operation: Promise<void>): Promise<void> {
    this.busy = operation;
    const done = (): void => {
      if (this.busy === operation) this.busy = undefined;
    };
    operation.then(done, done);
    return operation;
  }

  /** Resolves when the start or restart under way ends, or after START_WAIT_MS. */
  private startEnded(): Promise<void> {
    const busy = this.busy;
    return new Promise((resolve) => {
      const timer = this.timers.set(resolve, START_WAIT_MS);
      const ended = (): void => {
        this.timers.clear(timer);
        resolve();
      };
      busy?.then(ended, ended);
    });
  }

  private async relaunch(): Promise<void> {
    await this.shutdownClient();
    await this.launch();
  }

  private async launch(): Promise<void> {
    const { bootstrap, clients, log } = this.deps;
    this.setState('starting');
    const generation = ++this.generation;
    const plan = await planLaunch(bootstrap, () => clients.prepare());
    if (generation !== this.generation) return; // stopped meanwhile (or given up on: see START_WAIT_MS)
    if (!isLaunchPlan(plan)) {
      this.reportNoPython(plan);
      return;
    }
    this.interpreterInfo = plan.description;
    this.executable = plan.command.command;
    log.info(launchMessage(plan));
    if (plan.choice !== 'unprobed') this.deps.onInterpreter?.(plan.interpreter);
    log.info(
      this.deps.vs.workspace.isTrusted
        ? 'workspace trusted: lint, simulate and profile'
        : 'restricted mode (untrusted workspace): lint only',
    );

    // Start-up is over at the first diagnostics, or STARTUP_GRACE_MS after the start (no Python file open).
    let startupOver: () => void = () => undefined;
    const startup = new Promise<void>((resolve) => {
      startupOver = resolve;
      this.timers.set(resolve, STARTUP_GRACE_MS);
    });
    const client = clients.create(plan, {
      closed: () => this.onCrash('the server process exited'),
      diagnostics: () => startupOver(),
    });
    for (const [method, handler] of this.handlers) client.onNotification(method, handler);
    this.current = client;
    const started = performance.now();
    let failed = false;
    try {
      await client.start();
    } catch (err) {
      failed = true;
      log.error(`server failed to start: ${String(err)}`);
      if (generation !== this.generation) {
        this.discardClient(client); // stopped or given up on meanwhile: nothing to stop
        return;
      }
      // A first start on an unprobed candidate: the discovery decides what to run (or that nothing can).
      if (plan.choice === 'unprobed') {
        this.discardClient(client);
        void this.afterUnprobedFailure(plan, discover(bootstrap, false), generation);
      } else {
        this.onCrash(`the server failed to start (${String(err)})`);
      }
    }
    if (generation !== this.generation) return; // stopped meanwhile: the stop shuts the client down
    // The interpreter check waits for the end of start-up: on a 2-core machine its probe process, started
    // alongside, delays the first diagnostics.
    if (plan.choice === 'remembered' || (plan.choice === 'unprobed' && !failed))
      void this.confirmInterpreter(
        plan,
        startup.then(() => discover(bootstrap, plan.choice === 'remembered')),
        generation,
      );
    if (failed) return;
    this.deps.timings.record({ event: 'serverReady', ms: performance.now() - started });
    this.setState('running');
  }

  private async shutdownClient(): Promise<void> {
    this.clearPendingRestart();
    const client = this.current;
    this.current = undefined;
    if (!client) return;
    this.stopping = true;
    try {
      await client.stop(5000);
    } catch (err) {
      this.deps.log.warn(`server did not stop cleanly: ${String(err)}`);
    } finally {
      this.stopping = false;
    }
  }

  /** Drop the current client without waiting for it (it failed or its process is gone); not another one. */
  private discardClient(client = this.current): void {
    if (!client || client !== this.current) return;
    this.current = undefined;
    void client.dispose().catch(() => undefined);
  }

  private clearPendingRestart(): void {
    if (this.pendingRestart !== undefined) this.timers.clear(this.pendingRestart);
    this.pendingRestart = undefined;
  }

  private reportNoPython(found: NotFound): void {
    const { vs, log } = this.deps;
    log.error(`${found.message} ${found.fix}`);
    this.setState('no-python');
    void vs.window.showErrorMessage(`${found.message} ${found.fix}`, 'Open Settings', 'Show Logs').then((pick) => {
      if (pick === 'Open Settings')
        void vs.commands.executeCommand('workbench.action.openSettings', 'nki-studio.interpreter');
      if (pick === 'Show Logs') log.show();
    });
  }

  /** The unprobed candidate could not run the server (too old, say): start on what discovery finds. */
  private async afterUnprobedFailure(
    plan: LaunchPlan,
    discovery: Promise<Found | NotFound>,
    generation: number,
  ): Promise<void> {
    const fresh = await discovery;
    if (generation !== this.generation || this.state === 'stopped') return;
    if (!isFound(fresh)) {
      this.clearPendingRestart(); // scheduled when the process closed
      this.reportNoPython(fresh);
      return;
    }
    this.deps.bootstrap.cache.set(plan.setting, fresh); // the next start is a normal one on this interpreter
    // (a no-op when closing the process already scheduled the restart)
    this.onCrash(`the server failed to start on the first interpreter found; using ${fresh.executable}`);
  }

  /**
   * Started on an interpreter discovery did not just check (remembered from the last start, or the first
   * candidate, unprobed): discovery confirms it, or the server starts again on what discovery found.
   */
  private async confirmInterpreter(
    plan: LaunchPlan,
    discovery: Promise<Found | NotFound>,
    generation: number,
  ): Promise<void> {
    const fresh = await discovery;
    const verdict = confirmPlan(plan, fresh, this.deps.bootstrap.cache);
    if (verdict.kind === 'kept') return;
    if (verdict.kind === 'confirmed') {
      if (isFound(fresh)) this.deps.onInterpreter?.(fresh);
      this.interpreterInfo = verdict.description;
      this.deps.log.info(`interpreter confirmed: ${this.interpreterInfo}`);
      return;
    }
    await this.whenRunning(60_000).catch(() => undefined);
    // not when the server was stopped or restarted meanwhile (that start already discovered afresh)
    if (generation !== this.generation || this.state === 'stopped') return;
    void this.restart(verdict.reason);
  }

  private onCrash(why: string): void {
    if (this.stopping || this.pendingRestart !== undefined) return;
    this.discardClient();
    const delay = this.backoff.next(this.now());
    if (delay === undefined) {
      this.setState('failed');
      const msg = `NKI Studio: ${why} repeatedly; not restarting. The log has the server's error output.`;
      this.deps.log.error(msg);
      void this.deps.vs.window.showErrorMessage(msg, 'Show Logs', 'Restart Server').then((pick) => {
        if (pick === 'Show Logs') this.deps.log.show();
        if (pick === 'Restart Server') void this.restart('restart requested');
      });
      return;
    }
    this.setState('starting');
    this.deps.log.warn(`${why}; restarting in ${delay} ms`);
    this.pendingRestart = this.timers.set(() => {
      this.pendingRestart = undefined;
      void this.start();
    }, delay);
  }

  private setState(state: ServerState): void {
    this.state = state;
    this.stateEmitter.fire(state);
  }
}
