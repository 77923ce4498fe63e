// Bundle the extension with esbuild into dist/extension.js (vscode stays external: the host provides it).
import * as esbuild from 'esbuild';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

const options = {
  entryPoints: ['extension/src/extension.ts'],
  bundle: true,
  outfile: 'dist/extension.js',
  external: ['vscode'],
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  sourcemap: !production,
  minify: production,
  // When the bundle starts loading (module scope: CJS wraps the file): activation time includes loading it.
  // The directive comes first again so the bundle stays strict code.
  banner: { js: '"use strict";var __nkiBundleLoadStart = performance.now();' },
  logLevel: 'info',
};

if (watch) {
  const ctx = await esbuild.context(options);
  await ctx.watch();
} else {
  await esbuild.build(options);
}
