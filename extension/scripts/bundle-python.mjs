// Install the language server (this repository's Python package) and all its dependencies into
// bundled/, to ship inside the .vsix: nothing has to be pip-installed on the user's machine.
//   bundled/libs/            pure-Python packages only (any CPython >= 3.10), with their *.dist-info
//   bundled/native/cp3XY/    every package with a compiled file (numpy, pyarrow, ml_dtypes, abi3 ones too)
//   bundled/manifest.json    what was bundled for which platform/Python
// Compiled wheels are platform- AND CPython-version-specific, so the .vsix is per platform (vsce --target).
// Two ways to fill bundled/native:
//   host build (npm run package): pip installs for this machine, with each interpreter given; extra versions:
//     NKI_STUDIO_BUNDLE_PYTHONS="/usr/bin/python3.10 /usr/bin/python3.12" npm run package
//   target build (NKI_STUDIO_TARGET=darwin-arm64, scripts/package-all.sh): the pure part is pip-installed here,
//     every compiled distribution is replaced by the target's wheels at the same pinned version, fetched with
//     `pip download --platform … --python-version … --only-binary=:all: --no-deps` (nothing built from source)
//     for the versions in targets.mjs (NKI_STUDIO_TARGET_PYTHONS="3.11 3.12" overrides). NKI_STUDIO_TARGET=
//     universal: no compiled files at all (the platform-neutral package; they install on demand).
// The versions of the compiled distributions come from extension/native-pins.txt (exact pins with PEP 508 markers,
// read through scripts/native_pins.py): the pip install of the pure part is constrained by it, and a target build
// downloads the pins whose markers hold for that target and CPython version. manifest.json's `requirements`
// carries the file's lines, markers and all: what the on-demand install ("NKI: Create Server Environment",
// extension/src/privateEnv.ts) puts into the server's private environment, pip evaluating the markers there.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NEUTRAL, TARGETS } from './targets.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
const bundled = path.join(root, 'bundled');
const libs = path.join(bundled, 'libs');

function defaultPython() {
  const venv = path.join(root, '.venv', 'bin', 'python');
  return fs.existsSync(venv) ? venv : 'python3';
}

const pythons = (process.env.NKI_STUDIO_BUNDLE_PYTHONS ?? defaultPython()).split(/\s+/).filter(Boolean);
const PINS = path.join(root, 'extension', 'native-pins.txt');

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

// Any compiled file (version-specific, abi3 or a vendored shared library): its distribution is platform-specific.
const COMPILED = /\.(so|pyd|dylib|dll)$|\.so\.\d/;

// Parts of the native packages the server never loads (checked with ldd: pyarrow's core and parquet
// modules do not link Flight or S3). Test suites, C/Cython sources and headers go too. The packaging
// test imports pyarrow.parquet, pyarrow.fs and numpy from the unpacked .vsix to prove nothing needed left.
const PRUNE = [
  /^pyarrow\/(tests|include|includes|src)$/,
  /^pyarrow\/.*\.(pyx|pxd|pxi|h|cc)$/,
  /^pyarrow\/(_flight|_s3fs|_pyarrow_cpp_tests)\.(cpython|cp3)/,
  // The macOS and Windows names of the same libraries. macOS checked by the dylibs' load-command strings
  // (only *.2600.dylib names, no flight/s3); Windows inferred from the same build's Linux/macOS linkage.
  /^pyarrow\/(lib)?(arrow_flight|arrow_s3|arrow_python_flight)\.(so|\d+\.dylib|dylib|dll|lib)/,
  // wheels carry the unversioned and fully versioned names as copies; only the SONAME is loaded
  /^pyarrow\/libarrow_python(_parquet_encryption)?\.so(\.\d+\.\d+\.\d+)?$/,
  /^pyarrow\/libarrow_python(_parquet_encryption)?(\.\d+\.\d+\.\d+)?\.dylib$/,
  /^pyarrow\/.*\.lib$/, // Windows import libraries: only for linking C++ against pyarrow
  /^numpy\/(.*\/)?tests$/,
  /^ml_dtypes\/tests$/,
  // pywin32 (Windows only; mcp's stdio transport needs win32api, win32job, pywintypes): the Pythonwin IDE, COM
  // extensions, ADO and IIS bindings and the help file are never imported.
  /^(pythonwin|win32comext|adodbapi|isapi)$/,
  /^PyWin32\.chm$/,
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

/** pip install the server and its dependencies for `python` into `stage` (this machine's wheels). */
function pipInstall(python, stage) {
  run(python, [
    '-m',
    'pip',
    'install',
    '--quiet',
    '--no-compile',
    '--disable-pip-version-check',
    '--target',
    stage,
    '--constraint',
    PINS,
    '.',
  ]);
}

/** Byte-compile now: the installed extension folder starts without __pycache__, and compiling pygls, lsprotocol,
 * jedi… on every cold start costs seconds. unchecked-hash .pyc files stay valid whatever mtimes the .vsix
 * extraction gives the sources; other Python versions simply ignore them. */
function compile(python, dirs) {
  run(python, ['-m', 'compileall', '-q', '-j', '0', '--invalidation-mode', 'unchecked-hash', ...dirs]);
}

const distName = (distInfo) => distInfo.replace(/-[^-]+\.dist-info$/, '');
const normalise = (name) => name.replace(/[-_.]+/g, '_').toLowerCase();

/** Host build: every interpreter given installs for itself; its version-specific packages go to native/cp3XY. */
function hostBuild(pythons) {
  const manifest = {
    platform: `${process.platform}-${process.arch}`,
    pythons: [],
    native: {},
    requirements: pinLines(),
  };
  for (const [i, python] of pythons.entries()) {
    const version = run(python, ['-c', 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")']).trim();
    const stage = path.join(bundled, `.stage-cp${version}`);
    pipInstall(python, stage);
    const nativeDir = path.join(bundled, 'native', `cp${version}`);
    fs.mkdirSync(nativeDir, { recursive: true });
    const native = [];
    for (const entry of fs.readdirSync(stage)) {
      if (!entry.endsWith('.dist-info')) continue;
      const { files, tops } = recordTops(path.join(stage, entry));
      // abi3 ones too: libs stays pure (see targetBuild)
      if (!files.some((f) => COMPILED.test(f))) continue;
      native.push(distName(entry));
      for (const top of tops) {
        const from = path.join(stage, top);
        if (fs.existsSync(from) && !top.startsWith('..') && top !== 'bin')
          fs.renameSync(from, path.join(nativeDir, top));
      }
    }
    prune(nativeDir);
    prune(stage);
    compile(python, [stage, nativeDir]);
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
  return manifest;
}

/** Unpack a wheel into `dir` as an installer would (the .data/purelib|platlib parts to the top; no scripts). */
function unpackWheel(wheel, dir) {
  run(python0, ['-c', 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])', wheel, dir]);
  for (const entry of fs.readdirSync(dir)) {
    if (!entry.endsWith('.data')) continue;
    for (const part of ['purelib', 'platlib']) {
      const from = path.join(dir, entry, part);
      if (fs.existsSync(from)) fs.cpSync(from, dir, { recursive: true });
    }
    fs.rmSync(path.join(dir, entry), { recursive: true, force: true });
  }
}

/** `pip download` binary wheels only, without their dependencies, into `dest` (`args`: selectors and specs). */
function pipDownload(dest, args) {
  run(python0, [
    '-m',
    'pip',
    'download',
    '--quiet',
    '--disable-pip-version-check',
    '--no-deps',
    '--only-binary=:all:',
    '--dest',
    dest,
    ...args,
  ]);
}

/** `pip download` the pinned distributions for one target and CPython version; returns the wheel files. */
function download(target, version, pins) {
  const dir = path.join(root, '.cache', 'wheels', target, `cp${version.replace('.', '')}`);
  fs.mkdirSync(dir, { recursive: true });
  const platforms = TARGETS[target]?.platforms ?? [];
  pipDownload(dir, [
    '--implementation',
    'cp',
    '--python-version',
    version,
    ...platforms.flatMap((p) => ['--platform', p]),
    ...pins,
  ]);
  const wheels = fs.readdirSync(dir).filter((f) => f.endsWith('.whl'));
  return pins.map((pin) => {
    const [name, ver] = pin.split('==');
    const wheel = wheels.find((w) => {
      const [n, v] = w.split('-');
      return normalise(n) === normalise(name) && v === ver;
    });
    if (!wheel) throw new Error(`pip download gave no wheel for ${pin} (${target}, CPython ${version})`);
    return path.join(dir, wheel);
  });
}

/** The pin file's requirement lines (comments dropped), markers kept: manifest.json's `requirements`. */
function pinLines() {
  return fs
    .readFileSync(PINS, 'utf8')
    .split('\n')
    .map((l) => l.split('#')[0].trim())
    .filter(Boolean);
}

/** `name==version` for every pin whose marker holds for CPython `version` on `target` (scripts/native_pins.py). */
function pinsFor(target, version) {
  return run(python0, [path.join(root, 'scripts', 'native_pins.py'), 'pins', target, version])
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

/** Target build: the pure part from this machine, every compiled distribution as the target's wheels. */
function targetBuild(target, versions) {
  const stage = path.join(bundled, '.stage');
  pipInstall(python0, stage);
  const pinned = new Set(pinLines().map((l) => normalise(l.split(/[=;<>!~ ]/)[0])));
  for (const entry of fs.readdirSync(stage)) {
    if (!entry.endsWith('.dist-info')) continue;
    const { files, tops } = recordTops(path.join(stage, entry));
    if (!files.some((f) => COMPILED.test(f))) continue;
    // Every compiled distribution must be pinned: the target's wheels are downloaded for the pins only.
    if (!pinned.has(normalise(distName(entry))))
      throw new Error(`${distName(entry)} has compiled files but no pin in extension/native-pins.txt`);
    for (const top of tops)
      if (!top.startsWith('..')) fs.rmSync(path.join(stage, top), { recursive: true, force: true });
  }
  // Dependencies behind a Python-version marker this interpreter does not match (tomli, exceptiongroup on 3.10)
  // are pure: their wheels go into libs too, so every supported version finds them.
  const present = new Set(
    fs
      .readdirSync(stage)
      .filter((e) => e.endsWith('.dist-info'))
      .map((e) => normalise(distName(e))),
  );
  const marked = [
    ...new Set(
      fs
        .readdirSync(stage)
        .filter((e) => e.endsWith('.dist-info') && fs.existsSync(path.join(stage, e, 'METADATA')))
        .flatMap((e) => [
          ...fs
            .readFileSync(path.join(stage, e, 'METADATA'), 'utf8')
            .matchAll(/^Requires-Dist: ([A-Za-z0-9_.-]+)([^;\n]*); *(python_version[^\n]*)$/gm),
        ])
        .filter((m) => !m[3].includes('extra') && !/sys_platform|platform_/.test(m[3]))
        .filter((m) => !present.has(normalise(m[1])) && !pinned.has(normalise(m[1])))
        .map((m) => `${m[1]}${m[2].trim()}`),
    ),
  ];
  if (marked.length) {
    const dir = path.join(root, '.cache', 'wheels', 'pure');
    pipDownload(dir, ['--python-version', '3.10', ...marked]);
    for (const w of fs.readdirSync(dir).filter((f) => f.endsWith('-none-any.whl')))
      unpackWheel(path.join(dir, w), stage);
  }
  fs.rmSync(path.join(stage, 'bin'), { recursive: true, force: true });
  const manifest = { platform: target, pythons: [], native: {}, requirements: pinLines(), wheels: {} };
  if (target !== NEUTRAL) {
    for (const version of versions) {
      const tag = `cp${version.replace('.', '')}`;
      const nativeDir = path.join(bundled, 'native', tag);
      fs.mkdirSync(nativeDir, { recursive: true });
      const wheels = download(target, version, pinsFor(target, version));
      // Every compiled wheel, abi3 ones too, goes to the version's folder: an abi3 wheel has a minimum CPython
      // (cryptography's cp311-abi3), and libs stays pure, so a private environment's compiled set for another
      // version is never shadowed by a bundled one (both cost 4 MB: one CPython version per package).
      for (const wheel of wheels) {
        unpackWheel(wheel, nativeDir);
        (manifest.native[tag] ??= []).push(path.basename(wheel).split('-')[0]);
      }
      manifest.native[tag] = (manifest.native[tag] ?? []).sort();
      manifest.wheels[tag] = wheels.map((w) => path.basename(w)).sort();
      manifest.pythons.push(version);
      prune(nativeDir);
    }
  }
  prune(stage);
  const host = run(python0, ['-c', 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")']).trim();
  const hostNative = path.join(bundled, 'native', `cp${host.replace('.', '')}`);
  compile(python0, [stage, ...(fs.existsSync(hostNative) ? [hostNative] : [])]);
  fs.renameSync(stage, libs);
  return manifest;
}

const python0 = pythons[0];
const target = process.env.NKI_STUDIO_TARGET;
if (target && target !== NEUTRAL && !TARGETS[target]) throw new Error(`unknown target ${target}`);
fs.rmSync(bundled, { recursive: true, force: true });
fs.mkdirSync(bundled, { recursive: true });
const targetPythons =
  process.env.NKI_STUDIO_TARGET_PYTHONS?.split(/\s+/).filter(Boolean) ?? TARGETS[target]?.pythons ?? [];
const manifest = target ? targetBuild(target, targetPythons) : hostBuild(pythons);
fs.writeFileSync(path.join(bundled, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
console.log(
  `bundled for ${manifest.platform}, CPython ${manifest.pythons.join(', ') || 'none (compiled packages on demand)'}; native: ${JSON.stringify(manifest.native)}`,
);
