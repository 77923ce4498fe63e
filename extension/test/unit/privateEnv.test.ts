import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import type { Found, NotFound } from '../../src/interpreter';
import { discoverInterpreter } from '../../src/interpreter';
import { InterpreterCache } from '../../src/interpreterCache';
import { planLaunch } from '../../src/launchPlan';
import {
  type Manifest,
  createSteps,
  envPaths,
  looksOffline,
  nativeFit,
  parseManifest,
  progressLine,
  requirementNames,
} from '../../src/privateEnv';
import {
  CREATE_ENV_COMMAND,
  CREATE_ENV_TITLE,
  type EnvCommandDeps,
  type RunResult,
  createServerEnvironment,
  failureMessage,
} from '../../src/privateEnvCommand';
import type { Step } from '../../src/privateEnv';
import { ServerEnvironment } from '../../src/serverEnvironment';
import { probes, store } from '../support/fakeProbes';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');

const PINS = ['numpy==2.4.6; python_version >= "3.11"', 'numpy==2.2.6; python_version < "3.11"', 'pyarrow==26.0.1'];
const perTarget: Manifest = { platform: 'darwin-arm64', pythons: ['3.12'], requirements: PINS };
const universal: Manifest = { platform: 'universal', pythons: [], requirements: PINS };

function found(version: [number, number], source: Found['source'] = 'PATH', p = '/usr/bin/python3'): Found {
  return { path: p, executable: p, source, version, skipped: [] };
}

describe('which compiled packages an interpreter gets', () => {
  it('uses the bundled folder for its CPython version', () => {
    assert.deepEqual(nativeFit(perTarget, [3, 12]), { kind: 'bundled' });
  });

  it('needs the environment for another version, or for the platform-neutral package', () => {
    const fit = nativeFit(perTarget, [3, 10]);
    assert.equal(fit.kind, 'needs-env');
    assert.match(fit.kind === 'needs-env' ? fit.reason : '', /CPython 3\.12 only.*Python 3\.10/);
    const neutral = nativeFit(universal, [3, 12]);
    assert.match(neutral.kind === 'needs-env' ? neutral.reason : '', /platform-neutral/);
  });

  it('takes a finished environment only when it was made for these pins and this version', () => {
    assert.deepEqual(nativeFit(perTarget, [3, 10], { python: '3.10', requirements: PINS }), { kind: 'private-env' });
    // an older release's pins, or another interpreter version: made again
    assert.equal(nativeFit(perTarget, [3, 10], { python: '3.10', requirements: PINS.slice(1) }).kind, 'needs-env');
    assert.equal(nativeFit(perTarget, [3, 13], { python: '3.10', requirements: PINS }).kind, 'needs-env');
  });

  it('reads only manifests that carry pins', () => {
    assert.deepEqual(parseManifest(JSON.stringify({ ...perTarget, native: {} })), perTarget);
    assert.equal(parseManifest(JSON.stringify({ platform: 'linux-x64', pythons: ['3.12'] })), undefined);
    assert.equal(parseManifest('{not json'), undefined);
    assert.deepEqual(requirementNames(PINS), ['numpy', 'pyarrow']);
  });
});

describe('the commands that create the environment', () => {
  it('makes a venv from the base interpreter, then pip installs exactly the pinned wheels into it', () => {
    const paths = envPaths('/store', 'linux');
    assert.equal(paths.python, '/store/server-env/bin/python');
    const [venv, pip] = createSteps('/usr/bin/python3.10', paths);
    assert.equal(venv.command, '/usr/bin/python3.10');
    assert.deepEqual(venv.args, ['-m', 'venv', '--clear', '/store/server-env']);
    assert.equal(pip.command, '/store/server-env/bin/python');
    assert.deepEqual(pip.args.slice(0, 3), ['-m', 'pip', 'install']);
    for (const flag of ['--no-deps', '--only-binary=:all:', '--no-input']) assert.ok(pip.args.includes(flag), flag);
    assert.equal(pip.args.at(-1), '/store/server-env/requirements.txt');
  });

  it('uses the Windows venv layout on Windows', () => {
    const paths = envPaths('C:\\Users\\me\\globalStorage', 'win32');
    assert.equal(paths.python, 'C:\\Users\\me\\globalStorage\\server-env\\Scripts\\python.exe');
  });

  it("tells pip's offline errors from other failures, and shows its progress lines", () => {
    assert.ok(looksOffline("Failed to establish a new connection: [Errno -3] Temporary failure in name resolution'"));
    assert.ok(looksOffline('ProxyError: Cannot connect to proxy'));
    assert.ok(!looksOffline('ERROR: No matching distribution found for numpy==2.4.6'));
    assert.equal(progressLine('Collecting numpy==2.2.6 (from -r req.txt (line 2))'), 'collecting numpy==2.2.6');
    assert.equal(
      progressLine('  Downloading https://files.example/numpy-2.2.6-cp310-cp310-win_amd64.whl (12.9 MB)'),
      'downloading numpy-2.2.6-cp310-cp310-win_amd64.whl',
    );
    assert.equal(progressLine('Installing collected packages: pyarrow, numpy'), 'installing pyarrow, numpy');
    assert.equal(progressLine('Requirement already satisfied: pip'), undefined);
  });

  it('says what to do when offline or when Python has no venv module', () => {
    const step: Step = { title: 'Installing the pinned packages', command: 'p', args: [] };
    const offline = failureMessage(step, { code: 1, output: 'NewConnectionError' }, perTarget, '3.10');
    assert.match(offline, /offline/);
    assert.match(
      offline,
      new RegExp(`run "${CREATE_ENV_TITLE}" again, or set "nki-studio.interpreter" to a Python 3\\.12`),
    );
    const noVenv = failureMessage(step, { code: 1, output: 'Error: ensurepip is not available' }, universal, '3.11');
    assert.match(noVenv, /apt install python3\.11-venv/);
    assert.doesNotMatch(noVenv, /nki-studio\.interpreter/); // the neutral package bundles no version
    const other = failureMessage(step, { code: 2, output: 'x\nERROR: disk full\n' }, perTarget, '3.10');
    assert.match(other, /installing the pinned packages failed: ERROR: disk full/);
  });
});

/** The command's world: a window that answers as told, steps that exit as told, files in memory. */
function world(opts: {
  manifest?: Manifest;
  base?: Found | NotFound;
  consent?: string;
  info?: string;
  results?: RunResult[];
  cancelAt?: number;
  record?: { python: string; requirements: string[] };
}) {
  const files = new Map<string, string>();
  const ran: Step[] = [];
  const shown: { info: string[]; warn: string[]; error: string[]; progress: string[] } = {
    info: [],
    warn: [],
    error: [],
    progress: [],
  };
  let restarts = 0;
  let stops = 0;
  let cancelled = false;
  const token = {
    get isCancellationRequested() {
      return cancelled;
    },
    onCancellationRequested: () => ({ dispose: () => undefined }),
  };
  const deps: EnvCommandDeps = {
    vs: {
      ProgressLocation: { Notification: 15, SourceControl: 1, Window: 10 },
      window: {
        showInformationMessage: (m: string) => {
          shown.info.push(m);
          return Promise.resolve(opts.info);
        },
        showWarningMessage: (m: string) => {
          shown.warn.push(m);
          return Promise.resolve(opts.consent);
        },
        showErrorMessage: (m: string) => {
          shown.error.push(m);
          return Promise.resolve(undefined);
        },
        withProgress: (
          _o: unknown,
          task: (p: { report(v: { message?: string }): void }, t: typeof token) => Promise<unknown>,
        ) => task({ report: (v) => v.message && shown.progress.push(v.message) }, token),
      },
    } as unknown as EnvCommandDeps['vs'],
    log: { info: () => undefined, warn: () => undefined, error: () => undefined, show: () => undefined },
    manifest: () => opts.manifest,
    paths: envPaths('/store', 'linux'),
    baseInterpreter: () => Promise.resolve(opts.base ?? found([3, 10])),
    run: (step, onLine) => {
      ran.push(step);
      // the requirements file is in place before pip runs
      if (step.args.includes('pip')) assert.ok(files.has('/store/server-env/requirements.txt'));
      onLine('Collecting numpy==2.2.6');
      if (opts.cancelAt === ran.length) cancelled = true;
      return Promise.resolve(opts.results?.[ran.length - 1] ?? { code: 0, output: '' });
    },
    files: {
      read: (p) => files.get(p),
      write: (p, t) => void files.set(p, t),
      remove: (p) => void files.delete(p),
    },
    restart: () => {
      restarts++;
      return Promise.resolve();
    },
    stop: () => {
      stops++;
      return Promise.resolve();
    },
  };
  if (opts.record) files.set('/store/server-env/nki-env.json', JSON.stringify(opts.record));
  return { deps, files, ran, shown, restarts: () => restarts, stops: () => stops };
}

describe('NKI: Create Server Environment', () => {
  it('asks first, downloads nothing without consent', async () => {
    const w = world({ manifest: perTarget, consent: undefined });
    assert.equal(await createServerEnvironment(w.deps), 'declined');
    assert.equal(w.ran.length, 0);
    assert.match(w.shown.warn[0], /Python 3\.10.*numpy, pyarrow.*package index/);
  });

  it('creates, records and restarts on consent, with progress', async () => {
    const w = world({ manifest: perTarget, consent: 'Download and Install' });
    assert.equal(await createServerEnvironment(w.deps), 'created');
    assert.deepEqual(
      w.ran.map((s) => s.args[1]),
      ['venv', 'pip'],
    );
    assert.equal(w.files.get('/store/server-env/requirements.txt'), `${PINS.join('\n')}\n`);
    assert.deepEqual(JSON.parse(w.files.get('/store/server-env/nki-env.json') ?? '{}'), {
      python: '3.10',
      requirements: PINS,
      base: '/usr/bin/python3',
    });
    assert.equal(w.restarts(), 1);
    assert.equal(w.stops(), 0, 'a first environment does not stop the server');
    assert.ok(w.shown.progress.includes('collecting numpy==2.2.6'));
  });

  it('offline: says so, records nothing, keeps the server as it was', async () => {
    const w = world({
      manifest: universal,
      consent: 'Download and Install',
      results: [
        { code: 0, output: '' },
        { code: 1, output: 'WARNING: Retrying ... NewConnectionError ... Network is unreachable' },
      ],
    });
    assert.equal(await createServerEnvironment(w.deps), 'offline');
    assert.match(w.shown.error[0], /cannot be reached.*offline/);
    assert.equal(w.files.has('/store/server-env/nki-env.json'), false);
    assert.equal(w.restarts(), 0);
  });

  it('stops when cancelled', async () => {
    const w = world({ manifest: perTarget, consent: 'Download and Install', cancelAt: 1 });
    assert.equal(await createServerEnvironment(w.deps), 'cancelled');
    assert.equal(w.ran.length, 1);
    assert.equal(w.files.has('/store/server-env/nki-env.json'), false);
  });

  it('says when no environment is needed, and only goes on when asked to', async () => {
    const w = world({ manifest: perTarget, base: found([3, 12]) });
    assert.equal(await createServerEnvironment(w.deps), 'not-needed');
    assert.match(w.shown.info[0], /bundled packages are for Python 3\.12/);
    const anyway = world({ manifest: perTarget, base: found([3, 12]), info: 'Create Anyway', consent: undefined });
    assert.equal(await createServerEnvironment(anyway.deps), 'declined'); // reached the consent question
  });

  it('stops the server before making again the environment it runs on, and starts it after a failure', async () => {
    const w = world({
      manifest: perTarget,
      record: { python: '3.10', requirements: PINS },
      info: 'Create Anyway',
      consent: 'Download and Install',
      results: [{ code: 1, output: 'Error: [WinError 32] python.exe is being used by another process' }],
    });
    assert.equal(await createServerEnvironment(w.deps), 'failed');
    assert.match(w.shown.info[0], /already has a private environment for Python 3\.10/);
    assert.equal(w.stops(), 1);
    assert.equal(w.restarts(), 1);
    assert.match(w.shown.error[0], /creating the environment failed: Error: \[WinError 32\]/);
    assert.equal(w.files.has('/store/server-env/nki-env.json'), false, 'the old record is gone with the old venv');
  });

  it('without a bundle or an interpreter there is nothing to make', async () => {
    assert.equal(await createServerEnvironment(world({}).deps), 'no-bundle');
    const none: NotFound = { message: 'no Python', fix: 'install one', skipped: [] };
    assert.equal(await createServerEnvironment(world({ manifest: universal, base: none }).deps), 'no-python');
  });

  it('is declared in package.json under its id, titled as the messages name it', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      contributes: { commands: { command: string; title: string; category: string }[] };
    };
    const cmd = pkg.contributes.commands.find((c) => c.command === CREATE_ENV_COMMAND);
    assert.ok(cmd);
    assert.equal(`${cmd.category}: ${cmd.title}`, CREATE_ENV_TITLE);
  });
});

describe('the environment as a server interpreter', () => {
  function environment(files: Record<string, string>): ServerEnvironment {
    return new ServerEnvironment('/ext', '/store', { read: (p) => files[p], exists: (p) => p in files }, 'linux');
  }
  const manifestFile = { '/ext/bundled/manifest.json': JSON.stringify(perTarget) };
  const done = {
    ...manifestFile,
    '/store/server-env/nki-env.json': JSON.stringify({ python: '3.10', requirements: PINS, base: '/set/py' }),
    '/store/server-env/bin/python': '',
  };

  it('is a candidate only when finished for these pins', () => {
    assert.equal(environment(done).python(), '/store/server-env/bin/python');
    // with the interpreter setting set: only the environment made from that interpreter
    assert.equal(environment(done).python('/set/py'), '/store/server-env/bin/python');
    assert.equal(environment(done).python('/other/py'), undefined);
    assert.equal(environment({ ...done, '/store/server-env/nki-env.json': '{}' }).python(), undefined);
    assert.equal(environment(manifestFile).python(), undefined);
  });

  it('is offered once a session, for an interpreter the bundle does not fit', () => {
    const env = environment(manifestFile);
    assert.equal(env.offerFor(found([3, 12])), undefined);
    assert.match(env.offerFor(found([3, 10])) ?? '', /CPython 3\.12 only/);
    assert.equal(env.offerFor(found([3, 10])), undefined);
    assert.equal(environment(manifestFile).offerFor(found([3, 11], 'private-env')), undefined);
  });

  it('stands in for the setting it was made from, and comes before the Python extension and PATH', async () => {
    const venv = '/store/server-env/bin/python';
    const versions: Record<string, [number, number]> = { [venv]: [3, 10], '/ext/py': [3, 12], '/set/py': [3, 11] };
    const withEnv = await discoverInterpreter(
      probes({ privateEnv: () => venv, pythonExtension: () => Promise.resolve('/ext/py'), versions }),
    );
    assert.equal((withEnv as Found).source, 'private-env');
    const env = environment(done);
    const fromSetting = await discoverInterpreter(
      probes({ setting: () => '/set/py', privateEnv: (s) => env.python(s), versions }),
    );
    assert.equal((fromSetting as Found).source, 'private-env', 'the environment made from the setting stands in');
    const otherSetting = await discoverInterpreter(
      probes({ setting: () => '/ext/py', privateEnv: (s) => env.python(s), versions }),
    );
    assert.equal((otherSetting as Found).path, '/ext/py');
    const broken = await discoverInterpreter(
      probes({ setting: () => '/set/py', privateEnv: () => '/gone/python', versions }),
    );
    assert.equal((broken as Found).path, '/set/py', 'a broken environment falls back to the setting');
  });

  it('starts the server without the bundled native folder (the venv has its own)', async () => {
    const venv = '/store/server-env/bin/python';
    const plan = await planLaunch(
      {
        probes: probes({ privateEnv: () => venv, versions: { [venv]: [3, 10] } }),
        cache: new InterpreterCache(store(), () => true),
        bundle: () => ({ libs: '/ext/bundled/libs', nativeRoot: '/ext/bundled/native' }),
        env: {},
        timings: { record: () => undefined },
        log: { info: () => undefined },
      },
      () => undefined,
    );
    assert.ok('command' in plan);
    assert.equal(plan.command.command, venv);
    assert.equal(plan.command.env.NKI_STUDIO_NATIVE_ROOT, undefined);
    assert.equal(plan.command.env.PYTHONPATH, '/ext/bundled/libs');
  });
});
