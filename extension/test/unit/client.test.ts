import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { type Found, discoverInterpreter, firstCandidate, isFound } from '../../src/interpreter';
import { InterpreterCache, sameInterpreter } from '../../src/interpreterCache';
import { Coalescer, CrashBackoff, type Timers } from '../../src/restartPolicy';
import { bundleFor, serverCommand } from '../../src/serverCommand';
import { needsRestart, serverLogLevel, serverSettings } from '../../src/settings';
import { probes, store } from '../support/fakeProbes';

function config(values: Record<string, unknown>) {
  return { get: <T>(key: string) => values[key] as T | undefined };
}

describe('settings → server options', () => {
  it('sends the server keys, nests remote settings, adds trust and log level', () => {
    const s = serverSettings(
      config({
        target: 'trn2',
        nkiVersion: '0.7',
        simulateOnSave: true,
        heatmapMetric: 'wait',
        'remote.host': 'trn',
        'remote.neuronCore': 1,
        'remote.sshConfig': '',
        interpreter: '/x/python',
      }),
      true,
      'debug',
    );
    assert.equal(s.target, 'trn2');
    assert.equal(s.nkiVersion, '0.7');
    assert.equal(s.heatmapMetric, 'wait');
    assert.deepEqual(s.remote, { host: 'trn', neuronCore: 1 });
    assert.equal(s.trustedWorkspace, true);
    assert.equal(s.logLevel, 'debug');
    assert.equal(s.simulateOnSave, true);
    assert.equal('interpreter' in s, false, "the interpreter is the client's business");
  });

  it('leaves unset (empty) values to the server and forces simulate-on-save off when untrusted', () => {
    const s = serverSettings(config({ ruleDocsBaseUrl: '', simulateOnSave: true }), false, 'info');
    assert.equal('ruleDocsBaseUrl' in s, false);
    assert.equal(s.trustedWorkspace, false);
    assert.equal(s.simulateOnSave, false);
  });

  it("maps VS Code log levels to the server's", () => {
    assert.deepEqual([0, 1, 2, 3, 4, 5].map(serverLogLevel), ['error', 'debug', 'debug', 'info', 'warning', 'error']);
  });

  it('restarts only for the interpreter', () => {
    assert.equal(
      needsRestart((s) => s === 'nki-studio.interpreter'),
      true,
    );
    assert.equal(
      needsRestart((s) => s === 'nki-studio.target'),
      false,
    );
  });
});

describe('interpreter discovery order', () => {
  const versions: Record<string, [number, number]> = {
    '/set/py': [3, 12],
    '/ext/py': [3, 11],
    '/usr/bin/python3': [3, 10],
    '/usr/bin/python': [3, 13],
  };

  it('uses the setting first', async () => {
    const p = probes({
      setting: () => '/set/py',
      pythonExtension: () => Promise.resolve('/ext/py'),
      onPath: { python3: '/usr/bin/python3' },
      versions,
    });
    const r = await discoverInterpreter(p);
    assert.ok(isFound(r));
    assert.deepEqual([r.path, r.source], ['/set/py', 'setting']);
    assert.deepEqual(p.asked, ['/set/py']);
  });

  it('does not fall back silently when the configured interpreter is broken', async () => {
    const r = await discoverInterpreter(
      probes({ setting: () => '/broken', onPath: { python3: '/usr/bin/python3' }, versions }),
    );
    assert.ok(!isFound(r));
    assert.match(r.message, /nki-studio\.interpreter/);
    assert.match(r.fix, /Restart Server/);
  });

  it('then the Python extension, then python3, then python on PATH', async () => {
    let r = await discoverInterpreter(
      probes({ pythonExtension: () => Promise.resolve('/ext/py'), onPath: { python3: '/usr/bin/python3' }, versions }),
    );
    assert.ok(isFound(r) && r.source === 'python-extension');
    r = await discoverInterpreter(
      probes({ onPath: { python3: '/usr/bin/python3', python: '/usr/bin/python' }, versions }),
    );
    assert.ok(isFound(r) && r.path === '/usr/bin/python3' && r.source === 'PATH');
    r = await discoverInterpreter(probes({ onPath: { python: '/usr/bin/python' }, versions }));
    assert.ok(isFound(r) && r.path === '/usr/bin/python');
  });

  it('names the first candidate without running anything (the bundled server starts on it at once)', async () => {
    const p = probes({
      pythonExtension: () => Promise.reject(new Error('boom')),
      onPath: { python3: '/usr/bin/python3' },
      versions,
    });
    assert.deepEqual(await firstCandidate(p), { path: '/usr/bin/python3', source: 'PATH' });
    assert.deepEqual(await firstCandidate(probes({ setting: () => ' /set/py ', versions })), {
      path: '/set/py',
      source: 'setting',
    });
    assert.deepEqual(await firstCandidate(probes({ pythonExtension: () => Promise.resolve('/ext/py') })), {
      path: '/ext/py',
      source: 'python-extension',
    });
    assert.equal(await firstCandidate(probes({})), undefined);
    assert.deepEqual(p.asked, [], 'no interpreter was run');
  });

  it('skips interpreters older than 3.10 and a failing Python extension', async () => {
    const r = await discoverInterpreter(
      probes({
        pythonExtension: () => Promise.reject(new Error('boom')),
        onPath: { python3: '/old', python: '/usr/bin/python' },
        versions: { ...versions, '/old': [3, 8] },
      }),
    );
    assert.ok(isFound(r));
    assert.equal(r.path, '/usr/bin/python');
    assert.match(r.skipped.join(), /3\.8 is older than 3\.10/);
  });

  it('runs the server on the executable the candidate resolves to (a launcher such as a pyenv shim is skipped)', async () => {
    const shim = '/home/u/.pyenv/shims/python3';
    const r = await discoverInterpreter(
      probes({
        onPath: { python3: shim },
        versions: { [shim]: [3, 11, '/home/u/.pyenv/versions/3.11.7/bin/python3'] },
      }),
    );
    assert.ok(isFound(r));
    assert.deepEqual([r.path, r.executable], [shim, '/home/u/.pyenv/versions/3.11.7/bin/python3']);
    const plain = await discoverInterpreter(
      probes({ onPath: { python3: '/usr/bin/python3' }, versions: { '/usr/bin/python3': [3, 10, ''] } }),
    );
    assert.ok(isFound(plain) && plain.executable === '/usr/bin/python3');
  });

  it('explains how to fix it when nothing is usable', async () => {
    const r = await discoverInterpreter(probes({}));
    assert.ok(!isFound(r));
    assert.match(r.message, /no Python 3\.10\+/);
    assert.match(r.fix, /nki-studio\.interpreter/);
  });
});

describe('remembered interpreter', () => {
  const found = (executable: string, version: [number, number] = [3, 11]): Found => ({
    path: '/usr/bin/python3',
    executable,
    source: 'PATH',
    version,
    skipped: [],
  });

  it('gives back the last interpreter for the same setting value while its executable exists', () => {
    const present = new Set(['/opt/py/bin/python3']);
    const cache = new InterpreterCache(store(), (p) => present.has(p));
    assert.equal(cache.get(''), undefined);
    cache.set('', found('/opt/py/bin/python3'));
    assert.equal(cache.get('')?.executable, '/opt/py/bin/python3');
    assert.equal(cache.get('/other/python'), undefined); // another (or an ignored) setting value: discover afresh
    present.clear();
    assert.equal(cache.get(''), undefined);
  });

  it('remembers machine-wide what a launcher ran, for first starts in other workspaces', () => {
    const present = new Set(['/opt/py/bin/python3']);
    const machine = store();
    new InterpreterCache(store(), (p) => present.has(p), machine).set('', found('/opt/py/bin/python3'));
    const elsewhere = new InterpreterCache(store(), (p) => present.has(p), machine); // another workspace's state
    assert.equal(elsewhere.get(''), undefined);
    assert.equal(elsewhere.resolved('/usr/bin/python3'), '/opt/py/bin/python3');
    assert.equal(elsewhere.resolved('/usr/local/bin/python3'), undefined);
    present.clear(); // uninstalled meanwhile: run the launcher itself
    assert.equal(elsewhere.resolved('/usr/bin/python3'), undefined);
    const direct = new InterpreterCache(store(), () => true, store());
    direct.set('', found('/usr/bin/python3')); // not a launcher: nothing to remember
    assert.equal(direct.resolved('/usr/bin/python3'), undefined);
  });

  it('forgets on clear', () => {
    const cache = new InterpreterCache(store(), () => true);
    cache.set('', found('/opt/py/bin/python3'));
    cache.clear();
    assert.equal(cache.get(''), undefined);
  });

  it('compares what would run: executable and version', () => {
    assert.ok(sameInterpreter(found('/a'), found('/a')));
    assert.ok(!sameInterpreter(found('/a'), found('/b')));
    assert.ok(!sameInterpreter(found('/a', [3, 11]), found('/a', [3, 12])));
  });
});

describe('server command', () => {
  const ext = '/ext';
  const exists = (p: string) => [path.join(ext, 'bundled', 'libs'), path.join(ext, 'bundled', 'native')].includes(p);

  it('starts the bundled server through its boot module, bundled libs first on PYTHONPATH', () => {
    const bundle = bundleFor(ext, exists);
    const cmd = serverCommand('/usr/bin/python3', bundle, { PYTHONPATH: '/user', HOME: '/h' });
    assert.deepEqual(cmd.args, ['-m', 'nki_studio.boot', 'serve']);
    assert.equal(cmd.env.PYTHONPATH, ['/ext/bundled/libs', '/user'].join(path.delimiter));
    assert.equal(
      cmd.env.NKI_STUDIO_NATIVE_ROOT,
      '/ext/bundled/native',
      'the boot module picks cp3XY for its own Python',
    );
    assert.equal(cmd.env.PYTHONNOUSERSITE, '1');
    assert.equal(cmd.env.HOME, '/h');
    assert.equal(cmd.env.PYTHONMALLOC, 'malloc', 'the server returns freed memory after documents close');
  });

  it("keeps the user's PYTHONMALLOC, and the MCP server's default allocator", () => {
    const bundle = bundleFor(ext, exists);
    assert.equal(serverCommand('/usr/bin/python3', bundle, { PYTHONMALLOC: 'debug' }).env.PYTHONMALLOC, 'debug');
    assert.equal(serverCommand('/usr/bin/python3', bundle, {}, 'mcp').env.PYTHONMALLOC, undefined);
  });

  it('leaves the native folder out when the bundle has none', () => {
    const bundle = bundleFor(ext, (p) => p === path.join(ext, 'bundled', 'libs'));
    assert.equal(serverCommand('/usr/bin/python3', bundle, {}).env.NKI_STUDIO_NATIVE_ROOT, undefined);
  });

  it("uses the interpreter's own installation without a bundle (development)", () => {
    assert.equal(
      bundleFor(ext, () => false),
      undefined,
    );
    const cmd = serverCommand('/venv/python', undefined, {});
    assert.deepEqual(cmd.args, ['-m', 'nki_studio', 'serve']);
    assert.equal(cmd.env.PYTHONPATH, undefined);
  });
});

describe('restart policy', () => {
  it('backs off exponentially after crashes and gives up after five in the window', () => {
    const b = new CrashBackoff(1000, 5, 60_000);
    assert.deepEqual(
      [0, 1, 2, 3, 4].map((t) => b.next(t)),
      [1000, 2000, 4000, 8000, 16000],
    );
    assert.equal(b.next(5), undefined);
    assert.equal(b.next(120_000), 1000, 'old crashes leave the window');
    b.reset();
    assert.equal(b.next(120_001), 1000);
  });

  it('coalesces a burst of settings changes into one restart', () => {
    const pending: { fn: () => void; id: number }[] = [];
    let next = 0;
    const timers: Timers = {
      set: (fn) => {
        pending.push({ fn, id: next });
        return next++;
      },
      clear: (h) => {
        const i = pending.findIndex((p) => p.id === h);
        if (i >= 0) pending.splice(i, 1);
      },
    };
    let runs = 0;
    const c = new Coalescer(() => (runs += 1), 400, timers);
    c.trigger();
    c.trigger();
    c.trigger();
    assert.equal(pending.length, 1);
    pending.shift()?.fn();
    assert.equal(runs, 1);
  });
});
