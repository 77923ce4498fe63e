// Install the language server (this repository's Python package) and all its dependencies into
// bundled/, to ship inside the .vsix: nothing has to be pip-installed on the user's machine.
//   bundled/libs/            pure-Python and abi3 packages (any CPython >= 3.10), with their *.dist-info
//   bundled/native/cp3XY/    packages with version-specific compiled modules (numpy, pyarrow, ml_dtypes)
//   bundled/manifest.json    what was bundled for which platform/Python
// Compiled wheels are platform- AND CPython-version-specific, so the .vsix is per platform (vsce --target)
// and carries native packages for the Python version(s) it was bundled with. Extra versions:
//   NKI_STUDIO_BUNDLE_PYTHONS="/usr/bin/python3.10 /usr/bin/python3.12" npm run package
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
const bundled = path.join(root, 'bundled');
const libs = path.join(bundled, 'libs');

function defaultPython() {
  const venv = path.join(root, '.venv', 'bin', 'python');
  return fs.existsSync(venv) ? venv : 'python3';
}

const pythons = (process.env.NKI_STUDIO_BUNDLE_PYTHONS ?? defaultPython()).split(/\s+/).filter(Boolean);

function run(cmd, args) {
  console.log(`$ ${cmd} ${args.join(' ')}`);
  return execFileSync(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
}

/** Top-level names (files or folders) a distribution installed, from its RECORD. */
function recordTops(distInfo) {
  const record = fs.readFileSync(path.join(distInfo, 'RECORD'), 'utf8');
  const files = record
    .split('\n')
    .map((l) => l.split(',')[0])
    .filter(Boolean);
  return { files, tops: [...new Set(files.map((f) => f.split('/')[0]))] };
}

const VERSION_SPECIFIC = /\.cpython-3\d+[^/]*\.(so|pyd)$|\.cp3\d+-win[^/]*\.pyd$/;

// Parts of the native packages the server never loads (checked with ldd: pyarrow's core and parquet
// modules do not link Flight or S3). Test suites, C/Cython sources and headers go too. The packaging
// test imports pyarrow.parquet, pyarrow.fs and numpy from the unpacked .vsix to prove nothing needed left.
const PRUNE = [
  /^pyarrow\/(tests|include|includes|src)$/,
  /^pyarrow\/.*\.(pyx|pxd|pxi|h|cc)$/,
  /^pyarrow\/(_flight|_s3fs|_pyarrow_cpp_tests)\.cpython/,
  /^pyarrow\/(libarrow_flight|libarrow_s3|libarrow_python_flight)\.so/,
  // wheels carry the unversioned and fully versioned names as copies; only the SONAME is loaded
  /^pyarrow\/libarrow_python(_parquet_encryption)?\.so(\.\d+\.\d+\.\d+)?$/,
  /^numpy\/(.*\/)?tests$/,
  /^ml_dtypes\/tests$/,
  // jedi ships typeshed stubs for ~200 third-party PyPI packages (5,000 files); the server completes the
  // standard library and NKI (own stubs), so only typeshed's stdlib part is kept.
  /^jedi\/third_party\/typeshed\/stubs$/,
];

function prune(dir, rel = '') {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const relPath = rel ? `${rel}/${entry.name}` : entry.name;
    const full = path.join(dir, entry.name);
    if (PRUNE.some((re) => re.test(relPath)) || entry.name === '__pycache__') {
      fs.rmSync(full, { recursive: true, force: true });
    } else if (entry.isDirectory()) {
      prune(full, relPath);
    }
  }
}

fs.rmSync(bundled, { recursive: true, force: true });
const manifest = { platform: `${process.platform}-${process.arch}`, pythons: [], native: {} };

for (const [i, python] of pythons.entries()) {
  const version = run(python, ['-c', 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")']).trim();
  const stage = path.join(bundled, `.stage-cp${version}`);
  run(python, [
    '-m',
    'pip',
    'install',
    '--quiet',
    '--no-compile',
    '--disable-pip-version-check',
    '--target',
    stage,
    '.',
  ]);
  const nativeDir = path.join(bundled, 'native', `cp${version}`);
  fs.mkdirSync(nativeDir, { recursive: true });
  const native = [];
  for (const entry of fs.readdirSync(stage)) {
    if (!entry.endsWith('.dist-info')) continue;
    const { files, tops } = recordTops(path.join(stage, entry));
    if (!files.some((f) => VERSION_SPECIFIC.test(f))) continue;
    native.push(entry.replace(/-[^-]+\.dist-info$/, ''));
    for (const top of tops) {
      const from = path.join(stage, top);
      if (fs.existsSync(from) && !top.startsWith('..') && top !== 'bin') fs.renameSync(from, path.join(nativeDir, top));
    }
  }
  prune(nativeDir);
  prune(stage);
  // Byte-compile now: the installed extension folder starts without __pycache__, and compiling pygls,
  // lsprotocol, jedi… on every cold start costs seconds. unchecked-hash .pyc files stay valid whatever
  // mtimes the .vsix extraction gives the sources; other Python versions simply ignore them.
  run(python, ['-m', 'compileall', '-q', '-j', '0', '--invalidation-mode', 'unchecked-hash', stage, nativeDir]);
  manifest.native[`cp${version}`] = native.sort();
  manifest.pythons.push(version.replace(/^3/, '3.'));
  // Console scripts carry this machine's interpreter path in their shebang: useless inside a .vsix.
  fs.rmSync(path.join(stage, 'bin'), { recursive: true, force: true });
  if (i === 0) {
    fs.renameSync(stage, libs); // the pure part is the same for every Python version
  } else {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

fs.writeFileSync(path.join(bundled, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
console.log(
  `bundled for ${manifest.platform}, CPython ${manifest.pythons.join(', ')}; native: ${JSON.stringify(manifest.native)}`,
);
