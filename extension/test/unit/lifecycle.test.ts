import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Found, InterpreterProbes } from '../../src/interpreter';
import { InterpreterCache } from '../../src/interpreterCache';
import type { Bootstrap, LaunchPlan } from '../../src/launchPlan';
import type { Timers } from '../../src/restartPolicy';
import type { Bundle } from '../../src/serverCommand';
import {
  type ClientEvents,
  type ManagedClient,
  type ServerState,
  START_WAIT_MS,
  STARTUP_GRACE_MS,
  ServerLifecycle,
} from '../../src/serverLifecycle';
import type { TimingEvent } from '../../src/timings';
import { probes, store } from '../support/fakeProbes';
import { FakeVsCode } from '../support/fakeVscode';

/** Lets pending promise callbacks and setImmediate callbacks (the probe's head start) run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Timers and a clock the test moves by hand. */
class ManualTimers implements Timers {
  now = 0;
  private seq = 0;
  private queue: { at: number; id: number; fn: () => void }[] = [];

  set(fn: () => void, ms: number): unknown {
    this.queue.push({ at: this.now + ms, id: ++this.seq, fn });
    return this.seq;
  }

  clear(handle: unknown): void {
    this.queue = this.queue.filter((t) => t.id !== handle);
  }

  /** Move the clock, running what falls due in order (and what that schedules). */
  async advance(ms: number): Promise<void> {
    const end = this.now + ms;
    for (;;) {
      const due = this.queue.filter((t) => t.at <= end).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.queue = this.queue.filter((t) => t !== due);
      this.now = due.at;
      due.fn();
      await settle();
    }
    this.now = end;
  }
}

class FakeClient implements ManagedClient {
  stops = 0;
  disposed = false;
  readonly notifications: string[] = [];
  private settleStart: { resolve(): void; reject(err: Error): void } | undefined;
  private readonly started: Promise<void>;

  constructor(
    readonly plan: LaunchPlan,
    readonly events: ClientEvents,
    manual: boolean,
  ) {
    this.started = manual
      ? new Promise((resolve, reject) => (this.settleStart = { resolve, reject }))
      : Promise.resolve();
  }

  start(): Promise<void> {
    return this.started;
  }
  stop(): Promise<void> {
    this.stops++;
    return Promise.resolve();
  }
  dispose(): Promise<void> {
    this.disposed = true;
    return Promise.resolve();
  }
  onNotification(method: string): void {
    this.notifications.push(method);
  }
  /** Let a manual start finish. */
  up(): void {
    this.settleStart?.resolve();
  }
  fail(message: string): void {
    this.settleStart?.reject(new Error(message));
  }
}

interface Options {
  probes?: InterpreterProbes;
  bundle?: Bundle;
  /** Client starts wait for `up()` / `fail()`. */
  manualStart?: boolean;
  onInterpreter?: (found: Found) => void;
}

const PATH_ONLY: Parameters<typeof probes>[0] = {
  onPath: { python3: '/usr/bin/python3' },
  versions: { '/usr/bin/python3': [3, 11] },
};
const BUNDLE: Bundle = { libs: '/ext/bundled/libs' };

function harness(options: Options = {}) {
  const vs = new FakeVsCode();
  const timers = new ManualTimers();
  const logged: string[] = [];
  const timings: TimingEvent[] = [];
  const log = {
    info: (m: string) => void logged.push(`info: ${m}`),
    warn: (m: string) => void logged.push(`warn: ${m}`),
    error: (m: string) => void logged.push(`error: ${m}`),
    show: () => void logged.push('show'),
  };
  const cache = new InterpreterCache(store(), () => true, store());
  const bootstrap: Bootstrap = {
    probes: options.probes ?? probes(PATH_ONLY),
    cache,
    bundle: () => options.bundle,
    env: {},
    timings: { record: (e) => void timings.push(e) },
    log,
  };
  const clients: FakeClient[] = [];
  let prepared = 0;
  const lifecycle = new ServerLifecycle({
    vs: vs.api(),
    log,
    timings: { record: (e) => void timings.push(e) },
    bootstrap,
    clients: {
      prepare: () => void prepared++,
      create: (plan, events) => {
        const client = new FakeClient(plan, events, options.manualStart ?? false);
        clients.push(client);
        return client;
      },
    },
    timers,
    now: () => timers.now,
    onInterpreter: options.onInterpreter,
  });
  const states: ServerState[] = [];
  lifecycle.onDidChangeState((s) => void states.push(s));
  return { vs, timers, logged, timings, cache, lifecycle, clients, states, prepared: () => prepared };
}

describe('server lifecycle', () => {
  it('starts on the discovered interpreter and runs', async () => {
    const h = harness();
    h.lifecycle.onNotification('nki/heatmap', () => undefined);
    await h.lifecycle.start();
    assert.equal(h.lifecycle.currentState, 'running');
    assert.deepEqual(h.states, ['starting', 'running']);
    assert.equal(h.clients.length, 1);
    const [client] = h.clients;
    assert.equal(client.plan.choice, 'probed');
    assert.deepEqual(
      [client.plan.command.command, ...client.plan.command.args],
      ['/usr/bin/python3', '-m', 'nki_studio', 'serve'],
    );
    assert.deepEqual(client.notifications, ['nki/heatmap'], 'handlers are registered on each new client');
    assert.equal(h.prepared(), 1);
    assert.equal(h.lifecycle.interpreter, '/usr/bin/python3 (Python 3.11, from PATH)');
    assert.ok(
      h.logged.includes(
        "info: starting server: /usr/bin/python3 -m nki_studio serve — /usr/bin/python3 (Python 3.11, from PATH); no bundled libraries: using the interpreter's own nki_studio",
      ),
    );
    assert.ok(h.logged.includes('info: workspace trusted: lint, simulate and profile'));
    assert.equal(h.cache.get('')?.executable, '/usr/bin/python3', 'a probed interpreter is remembered');
    assert.deepEqual(
      h.timings.map((t) => t.event),
      ['interpreter', 'serverReady'],
    );
  });

  it('says so when there is no Python', async () => {
    const h = harness({ probes: probes({}) });
    await h.lifecycle.start();
    assert.equal(h.lifecycle.currentState, 'no-python');
    assert.equal(h.clients.length, 0);
    assert.match(h.vs.errors[0], /found no Python 3\.10\+/);
    await assert.rejects(h.lifecycle.whenRunning(1000), /not running/);
  });

  it('restarts after a crash with growing back-off', async () => {
    const h = harness();
    await h.lifecycle.start();
    const first = h.clients[0];
    first.events.closed();
    assert.equal(h.lifecycle.currentState, 'starting');
    assert.equal(first.disposed, true);
    assert.ok(h.logged.includes('warn: the server process exited; restarting in 1000 ms'));
    await h.timers.advance(999);
    assert.equal(h.clients.length, 1);
    await h.timers.advance(1);
    assert.equal(h.clients.length, 2);
    assert.equal(h.lifecycle.currentState, 'running');
    assert.equal(h.clients[1].plan.choice, 'remembered', 'the restart does not wait for a probe');
    h.clients[1].events.closed();
    assert.ok(h.logged.includes('warn: the server process exited; restarting in 2000 ms'));
  });

  it('gives up after the restart policy limit, and restarts on request', async () => {
    const h = harness();
    h.vs.errorAnswer = 'Restart Server';
    await h.lifecycle.start();
    for (const delay of [1000, 2000, 4000, 8000, 16000]) {
      h.clients[h.clients.length - 1].events.closed();
      assert.ok(h.logged.includes(`warn: the server process exited; restarting in ${delay} ms`));
      await h.timers.advance(delay);
      assert.equal(h.lifecycle.currentState, 'running');
    }
    assert.equal(h.clients.length, 6);
    h.clients[5].events.closed();
    assert.equal(h.lifecycle.currentState, 'failed');
    const msg =
      "NKI Studio: the server process exited repeatedly; not restarting. The log has the server's error output.";
    assert.deepEqual(h.vs.errors, [msg]);
    assert.ok(h.logged.includes(`error: ${msg}`));
    await settle(); // the user picks "Restart Server"
    assert.ok(h.logged.includes('info: restarting server: restart requested'));
    assert.equal(h.clients.length, 7);
    assert.equal(h.lifecycle.currentState, 'running');
    h.clients[6].events.closed();
    assert.ok(h.logged.at(-1)?.endsWith('restarting in 1000 ms'), 'a deliberate restart resets the back-off');
  });

  it('coalesces restarts asked for while a start is under way into one, after it', async () => {
    const h = harness({ manualStart: true });
    void h.lifecycle.start();
    await settle();
    assert.equal(h.clients.length, 1);
    const a = h.lifecycle.restart('workspace trusted: starting in full mode');
    const b = h.lifecycle.restart('interpreter setting changed');
    assert.equal(a, b);
    void h.lifecycle.start(); // a start asked for meanwhile adds nothing
    await settle();
    assert.equal(h.clients.length, 1, 'nothing starts before the first start ends');
    h.clients[0].up();
    await settle();
    assert.equal(h.clients[0].stops, 1);
    assert.equal(h.clients.length, 2);
    h.clients[1].up();
    await b;
    assert.equal(h.clients.length, 2);
    assert.equal(h.lifecycle.currentState, 'running');
    assert.ok(h.logged.includes('info: restarting server: workspace trusted: starting in full mode'));
    assert.ok(h.logged.includes('info: restarting server: interpreter setting changed'));
  });

  it('does not wait for ever for a start that never ends', async () => {
    const h = harness({ manualStart: true });
    void h.lifecycle.start();
    await settle();
    const restarted = h.lifecycle.restart('restart requested');
    await h.timers.advance(START_WAIT_MS - 1);
    assert.equal(h.clients.length, 1);
    await h.timers.advance(1);
    assert.equal(h.clients[0].stops, 1, 'tried, as before the start could end');
    assert.equal(h.clients.length, 2);
    h.clients[1].up();
    await restarted;
    assert.equal(h.lifecycle.currentState, 'running');
    h.clients[0].up(); // the abandoned start ending late changes nothing
    await settle();
    assert.equal(h.lifecycle.client, h.clients[1]);
    assert.equal(h.clients.length, 2);
  });

  it('stops a start under way: its client is stopped once started and it never runs', async () => {
    const h = harness({ manualStart: true });
    void h.lifecycle.start();
    await settle();
    const stopped = h.lifecycle.stop();
    h.clients[0].up();
    await stopped;
    assert.equal(h.clients[0].stops, 1);
    assert.equal(h.lifecycle.currentState, 'stopped');
    assert.equal(h.states.includes('running'), false);
    assert.equal(h.lifecycle.client, undefined);
  });

  it('stops a start that is still choosing its interpreter: no client is created', async () => {
    let answer: (v: { version: [number, number]; executable: string }) => void = () => undefined;
    const p = probes(PATH_ONLY);
    p.version = () => new Promise((resolve) => (answer = resolve));
    const h = harness({ probes: p });
    const starting = h.lifecycle.start();
    await settle();
    const stopped = h.lifecycle.stop();
    answer({ version: [3, 11], executable: '/usr/bin/python3' });
    await Promise.all([starting, stopped]);
    assert.equal(h.clients.length, 0);
    assert.equal(h.lifecycle.currentState, 'stopped');
  });

  it('starts the bundle on the first candidate unprobed, and keeps it when discovery confirms it', async () => {
    const h = harness({
      bundle: BUNDLE,
      probes: probes({
        onPath: { python3: '/usr/bin/python3' },
        versions: { '/usr/bin/python3': [3, 12, '/usr/bin/python3.12'] },
      }),
    });
    await h.lifecycle.start();
    assert.equal(h.lifecycle.currentState, 'running');
    const [client] = h.clients;
    assert.equal(client.plan.choice, 'unprobed');
    assert.deepEqual(client.plan.command.args, ['-m', 'nki_studio.boot', 'serve']);
    assert.equal(h.lifecycle.interpreter, '/usr/bin/python3 (from PATH; its version is checked as the server starts)');
    assert.deepEqual(
      h.timings.map((t) => t.event),
      ['serverReady'],
      'the check waits for the end of start-up',
    );
    client.events.diagnostics();
    await settle();
    assert.deepEqual(
      h.timings.map((t) => t.event),
      ['serverReady', 'interpreter'],
    );
    const confirmed = '/usr/bin/python3 (Python 3.12, from PATH, runs /usr/bin/python3.12 from the next start)';
    assert.equal(h.lifecycle.interpreter, confirmed);
    assert.ok(h.logged.includes(`info: interpreter confirmed: ${confirmed}`));
    assert.equal(h.clients.length, 1, 'kept');
    assert.equal(h.cache.get('')?.executable, '/usr/bin/python3.12');
  });

  it('tells of each interpreter once its version is known (the private-environment offer reads it)', async () => {
    const seen: string[] = [];
    const record = (f: Found): void => void seen.push(`${f.path} ${f.version.join('.')}`);
    const probed = harness({ onInterpreter: record });
    await probed.lifecycle.start();
    assert.deepEqual(seen, ['/usr/bin/python3 3.11']);
    seen.length = 0;
    const unprobed = harness({
      bundle: BUNDLE,
      onInterpreter: record,
      probes: probes({ onPath: { python3: '/usr/bin/python3' }, versions: { '/usr/bin/python3': [3, 10] } }),
    });
    await unprobed.lifecycle.start();
    assert.deepEqual(seen, [], 'not before the version is known');
    unprobed.clients[0].events.diagnostics();
    await settle();
    assert.deepEqual(seen, ['/usr/bin/python3 3.10']);
  });

  it('restarts on the interpreter discovery picks when it is not the unprobed candidate', async () => {
    const h = harness({
      bundle: BUNDLE,
      probes: probes({
        pythonExtension: () => Promise.resolve('/venv/bin/python'),
        onPath: { python3: '/usr/bin/python3' },
        versions: { '/venv/bin/python': [3, 9], '/usr/bin/python3': [3, 11] },
      }),
    });
    await h.lifecycle.start();
    assert.equal(h.clients[0].plan.interpreter.path, '/venv/bin/python');
    await h.timers.advance(STARTUP_GRACE_MS); // no diagnostics: the check runs after the grace period
    assert.ok(h.logged.includes('info: restarting server: the interpreter is now /usr/bin/python3'));
    assert.equal(h.clients.length, 2);
    assert.equal(h.clients[0].stops, 1);
    const second = h.clients[1];
    assert.equal(second.plan.choice, 'remembered');
    assert.equal(second.plan.interpreter.executable, '/usr/bin/python3');
    assert.ok(
      h.logged.includes('info: interpreter skipped: python-extension /venv/bin/python: Python 3.9 is older than 3.10'),
    );
    second.events.diagnostics();
    await settle();
    assert.equal(h.clients.length, 2, 'the remembered interpreter is confirmed and kept');
    assert.equal(h.lifecycle.currentState, 'running');
  });

  it('starts on the remembered interpreter, and restarts on a fresh discovery when it moved', async () => {
    const h = harness();
    h.cache.set('', {
      path: '/usr/bin/python3',
      executable: '/old/python3',
      source: 'PATH',
      version: [3, 10],
      skipped: [],
    });
    await h.lifecycle.start();
    assert.equal(h.clients[0].plan.choice, 'remembered');
    assert.equal(
      h.lifecycle.interpreter,
      '/usr/bin/python3 (Python 3.10, from PATH, remembered from the last start, runs /old/python3)',
    );
    h.clients[0].events.diagnostics();
    await settle();
    assert.ok(h.logged.includes('info: restarting server: the interpreter is now /usr/bin/python3'));
    assert.equal(h.clients.length, 2);
    assert.equal(h.clients[1].plan.choice, 'probed', 'nothing remembered: the restart discovers afresh');
    assert.equal(h.lifecycle.currentState, 'running');
  });

  it('starts on what discovery finds when the unprobed candidate cannot run the server', async () => {
    const h = harness({
      bundle: BUNDLE,
      manualStart: true,
      probes: probes({
        pythonExtension: () => Promise.resolve('/venv/bin/python'),
        onPath: { python3: '/usr/bin/python3' },
        versions: { '/venv/bin/python': [3, 9], '/usr/bin/python3': [3, 11] },
      }),
    });
    const starting = h.lifecycle.start();
    await settle();
    h.clients[0].fail('exit code 3');
    await starting;
    await settle();
    assert.ok(h.logged.includes('error: server failed to start: Error: exit code 3'));
    assert.ok(
      h.logged.includes(
        'warn: the server failed to start on the first interpreter found; using /usr/bin/python3; restarting in 1000 ms',
      ),
    );
    await h.timers.advance(1000);
    assert.equal(h.clients.length, 2);
    assert.equal(h.clients[1].plan.interpreter.executable, '/usr/bin/python3');
    h.clients[1].up();
    await settle();
    assert.equal(h.lifecycle.currentState, 'running');
  });
});
