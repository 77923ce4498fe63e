// Build the .vsix for THIS platform: bundle the TypeScript, install the Python server and its
// dependencies into bundled/ (native wheels are platform-specific), then vsce package with the
// matching --target. Output: nki-studio-<version>.vsix at the repository root.
// NKI_STUDIO_TARGET=<vscode target>|universal (scripts/package-all.sh): that target's wheels instead
// (bundle-python.mjs), output dist/nki-studio-<target>-<version>.vsix; universal has no --target.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NEUTRAL } from './targets.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const arch = { x64: 'x64', arm64: 'arm64' }[process.arch];
const platform = { linux: 'linux', darwin: 'darwin', win32: 'win32' }[process.platform];
if (!arch || !platform) throw new Error(`no VS Code target for ${process.platform}-${process.arch}`);
const chosen = process.env.NKI_STUDIO_TARGET;
const target = chosen ?? `${platform}-${arch}`;
const out = chosen
  ? path.join(root, 'dist', `${pkg.name}-${chosen}-${pkg.version}.vsix`)
  : path.join(root, `${pkg.name}-${pkg.version}.vsix`);
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const run = (cmd, args) => execFileSync(cmd, args, { cwd: root, stdio: 'inherit' });

run(process.execPath, [path.join(root, 'extension/scripts/build.mjs'), '--production']);
run(process.execPath, [path.join(root, 'extension/scripts/bundle-python.mjs')]);
// vsce's secret scan (secretlint) reads every file as text: over the bundled wheels' 150 MB of shared
// libraries it runs for tens of minutes. The scan is skipped; the only code we wrote in the package is
// dist/extension.js, built from this repository, and bundled/ holds pip-installed PyPI wheels.
run(bin('vsce'), [
  'package',
  '--no-dependencies',
  '--allow-missing-repository',
  '--skip-license',
  '--allow-package-all-secrets',
  '--allow-package-env-file',
  '--no-rewrite-relative-links',
  ...(target === NEUTRAL ? [] : ['--target', target]),
  '--out',
  out,
]);
console.log(`packaged ${path.relative(root, out)} for ${target} (${(fs.statSync(out).size / 2 ** 20).toFixed(1)} MiB)`);
