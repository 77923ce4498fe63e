/**
 * The packaged .vsix is self-sufficient: unpacked, its bundled libraries run the language server on a clean
 * Python (`-S`: no site-packages at all, so nothing from a venv or the system) and lint a kernel.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { StreamMessageReader, StreamMessageWriter, createMessageConnection } from 'vscode-languageserver-protocol/node';
import { ROOT, vsixPath } from '../e2e/codeServer';
import { projectPython } from '../e2e/fixtures';
import { bundleFor, serverCommand } from '../../src/serverCommand';

interface Manifest {
  platform: string;
  pythons: string[];
  native: Record<string, string[]>;
}

/** The interpreter the venv was made from: a Python with none of the project's packages on its path under -S. */
function basePython(): string {
  return execFileSync(
    projectPython(),
    ['-c', 'import sys, os; print(getattr(sys, "_base_executable", None) or sys.executable)'],
    { encoding: 'utf8' },
  ).trim();
}

describe('the packaged .vsix', { timeout: 180_000 }, () => {
  let dir: string;
  let ext: string;
  let manifest: Manifest;

  before(() => {
    assert.ok(fs.existsSync(vsixPath()), `${vsixPath()} is missing: run npm run package`);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nki-vsix-'));
    execFileSync('unzip', ['-q', vsixPath(), '-d', dir]);
    ext = path.join(dir, 'extension');
    manifest = JSON.parse(fs.readFileSync(path.join(ext, 'bundled', 'manifest.json'), 'utf8')) as Manifest;
  });

  after(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('contains the bundle, the manifest and the Python server with its dependencies and their dist-info', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ext, 'package.json'), 'utf8')) as {
      main: string;
      contributes: { grammars?: { path: string }[] };
    };
    assert.ok(fs.existsSync(path.join(ext, pkg.main)), 'main bundle');
    for (const g of pkg.contributes.grammars ?? [])
      assert.ok(fs.existsSync(path.join(ext, g.path)), `grammar ${g.path}`);
    const libs = fs.readdirSync(path.join(ext, 'bundled', 'libs'));
    for (const dist of ['nki_studio', 'pygls', 'lsprotocol', 'jedi']) {
      assert.ok(
        libs.some((f) => f.startsWith(`${dist}-`) && f.endsWith('.dist-info')),
        `${dist} dist-info`,
      );
    }
    const native = Object.entries(manifest.native);
    assert.ok(native.length >= 1);
    for (const [tag, names] of native) {
      const files = fs.readdirSync(path.join(ext, 'bundled', 'native', tag));
      for (const name of ['numpy', 'pyarrow', 'ml_dtypes']) {
        assert.ok(names.includes(name), `${name} bundled for ${tag}`);
        assert.ok(
          files.some((f) => f.startsWith(`${name}-`) && f.endsWith('.dist-info')),
          `${name} dist-info for ${tag}`,
        );
      }
    }
    assert.equal(manifest.platform, `${process.platform}-${process.arch}`);
    assert.ok(!fs.existsSync(path.join(ext, 'node_modules')), 'no node_modules');
    assert.ok(
      !fs.readdirSync(ext).some((f) => ['.venv', 'server', 'tests', 'extension'].includes(f)),
      'no sources beyond the bundle',
    );
  });

  it('serves diagnostics from the unpacked tree with a clean Python', async () => {
    const python = basePython();
    const version = execFileSync(python, ['-c', 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")'], {
      encoding: 'utf8',
    }).trim();
    const nativeDir = path.join(ext, 'bundled', 'native', `cp${version}`);
    assert.ok(fs.existsSync(nativeDir), `the .vsix has no native packages for CPython ${version}`);
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: os.tmpdir(),
      PYTHONPATH: [path.join(ext, 'bundled', 'libs'), nativeDir].join(path.delimiter),
      PYTHONNOUSERSITE: '1',
    };
    // The native packages really load from the bundle (pyarrow.parquet reads profiles; pruning must not break it).
    const where = execFileSync(
      python,
      [
        '-S',
        '-c',
        'import numpy, pyarrow.parquet, pyarrow.fs, ml_dtypes, pygls, nki_studio; print(numpy.__file__); print(nki_studio.__file__)',
      ],
      { env, encoding: 'utf8' },
    );
    for (const line of where.trim().split('\n')) assert.ok(line.startsWith(ext), `${line} not from the unpacked .vsix`);

    // Started as the extension starts it (nki_studio.boot adds the native folder for this Python itself).
    const cmd = serverCommand(
      python,
      bundleFor(ext, (p) => fs.existsSync(p)),
      { PATH: env.PATH, HOME: env.HOME },
    );
    assert.deepEqual(cmd.args, ['-m', 'nki_studio.boot', 'serve']);
    const proc = spawn(python, ['-S', ...cmd.args], { env: cmd.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const conn = createMessageConnection(new StreamMessageReader(proc.stdout), new StreamMessageWriter(proc.stdin));
    const file = path.join(ROOT, 'examples', 'deprecated_loop.py');
    const uri = pathToFileURL(file).toString();
    const diagnostics = new Promise<{ code?: unknown; message: string }[]>((resolve) => {
      conn.onNotification(
        'textDocument/publishDiagnostics',
        (p: { uri: string; diagnostics: { code?: unknown; message: string }[] }) => {
          if (p.uri === uri && p.diagnostics.length > 0) resolve(p.diagnostics);
        },
      );
    });
    conn.listen();
    try {
      await conn.sendRequest('initialize', {
        processId: process.pid,
        rootUri: pathToFileURL(path.join(ROOT, 'examples')).toString(),
        capabilities: {},
        initializationOptions: { trustedWorkspace: false },
      });
      await conn.sendNotification('initialized', {});
      await conn.sendNotification('textDocument/didOpen', {
        textDocument: { uri, languageId: 'python', version: 1, text: fs.readFileSync(file, 'utf8') },
      });
      const timeout = new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`no diagnostics within 60 s; server stderr:\n${stderr}`)), 60_000),
      );
      const got = await Promise.race([diagnostics, timeout]);
      assert.ok(
        got.some((d) => d.code === 'NKI201'),
        JSON.stringify(got),
      );
      await conn.sendRequest('shutdown');
      await conn.sendNotification('exit');
    } finally {
      conn.dispose();
      proc.kill();
    }
  });
});
