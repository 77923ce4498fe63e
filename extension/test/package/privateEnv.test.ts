/**
 * The platform-neutral .vsix (dist/nki-studio-universal-<version>.vsix, scripts/package-all.sh universal) bundles no
 * compiled packages; "NKI: Create Server Environment" gives the server a private one. Here the command's own steps
 * (privateEnv.ts: venv, then pip with the manifest's pins) run for real on a clean Python, and the server then
 * loads NumPy and pyarrow from that venv and the rest from the unpacked package. Needs the package registry (or
 * pip's cache). $NKI_STUDIO_UNIVERSAL_VSIX picks the package.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ROOT } from '../e2e/codeServer';
import { projectPython } from '../e2e/fixtures';
import { createSteps, envPaths, parseManifest, requirementsFile } from '../../src/privateEnv';
import { spawnRunner } from '../../src/privateEnvCommand';
import { bundleFor, bundleForInterpreter, serverCommand } from '../../src/serverCommand';

const version = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const vsix = path.resolve(
  process.env.NKI_STUDIO_UNIVERSAL_VSIX ?? path.join(ROOT, 'dist', `nki-studio-universal-${version}.vsix`),
);
const token = { isCancellationRequested: false, onCancellationRequested: () => ({ dispose: () => undefined }) };

describe('the universal .vsix with a private server environment', { timeout: 600_000 }, () => {
  let dir: string;

  before(() => {
    assert.ok(fs.existsSync(vsix), `${vsix} is missing: run bash scripts/package-all.sh universal`);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nki-universal-'));
    execFileSync('unzip', ['-q', vsix, '-d', dir]);
  });

  after(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('bundles no compiled file and no native folder', () => {
    const ext = path.join(dir, 'extension');
    assert.ok(!fs.existsSync(path.join(ext, 'bundled', 'native')));
    const manifest = parseManifest(fs.readFileSync(path.join(ext, 'bundled', 'manifest.json'), 'utf8'));
    assert.ok(manifest && manifest.pythons.length === 0 && manifest.requirements.some((r) => r.startsWith('numpy==')));
  });

  it("runs the server on the environment the command's steps create", async () => {
    const ext = path.join(dir, 'extension');
    const manifest = parseManifest(fs.readFileSync(path.join(ext, 'bundled', 'manifest.json'), 'utf8'));
    assert.ok(manifest);
    const base = execFileSync(
      projectPython(),
      ['-c', 'import sys; print(getattr(sys, "_base_executable", None) or sys.executable)'],
      { encoding: 'utf8' },
    ).trim();
    const paths = envPaths(path.join(dir, 'globalStorage'));
    const [venv, pip] = createSteps(base, paths);
    const made = await spawnRunner(venv, () => undefined, token);
    assert.equal(made.code, 0, made.output);
    fs.writeFileSync(paths.requirements, requirementsFile(manifest));
    const installed = await spawnRunner(pip, () => undefined, token);
    assert.equal(installed.code, 0, installed.output);

    const cmd = serverCommand(
      paths.python,
      bundleForInterpreter(
        bundleFor(ext, (p) => fs.existsSync(p)),
        true,
      ),
      { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.tmpdir() },
    );
    assert.equal(cmd.env.NKI_STUDIO_NATIVE_ROOT, undefined);
    // the versions the pins chose, loaded from the venv; the server itself from the package
    const code =
      'import numpy, pyarrow.parquet, ml_dtypes, nki_studio, importlib.metadata as m; ' +
      'print(numpy.__file__); print(pyarrow.__file__); print(nki_studio.__file__); print(m.version("numpy"))';
    const out = execFileSync(paths.python, ['-c', code], { env: cmd.env, encoding: 'utf8' }).trim().split('\n');
    assert.ok(out[0].startsWith(paths.dir) && out[1].startsWith(paths.dir), out.join('\n'));
    assert.ok(out[2].startsWith(ext), out[2]);
    const pin = manifest.requirements.find((r) => r.startsWith(`numpy==${out[3]}`));
    assert.ok(pin, `numpy ${out[3]} is not a pin of the manifest`);
    // and the language server's CLI runs: lint of an example, as the boot module starts it
    const lint = spawnSync(
      paths.python,
      [...cmd.args.slice(0, 2), 'lint', '--format', 'json', path.join(ROOT, 'examples', 'deprecated_loop.py')],
      { env: cmd.env, encoding: 'utf8' },
    );
    assert.ok(lint.status === 0 || lint.status === 1, lint.stderr); // 1: error-level findings
    assert.match(lint.stdout, /NKI\d{3}/);
  });
});
