/**
 * The server's private environment: when the package's bundled compiled set (bundled/native/cp3XY, see
 * extension/scripts/bundle-python.mjs) does not fit the user's interpreter (another CPython version, or the
 * platform-neutral package, which bundles none), "NKI: Create Server Environment" makes a venv in the extension's
 * global storage from that interpreter and installs the exact pins of bundled/manifest.json (`requirements`, the
 * lines of extension/native-pins.txt: pip evaluates their markers for the venv's Python). The server then runs on
 * the venv's Python with bundled/libs (pure) first on PYTHONPATH. Plain data and decisions here; running the
 * steps and asking the user is privateEnvCommand.ts.
 */
import * as path from 'node:path';

/** What the package bundled (bundled/manifest.json). */
export interface Manifest {
  /** The VS Code target (`linux-x64`…, `universal`) or, for a host build, `<platform>-<arch>`. */
  platform: string;
  /** CPython versions ("3.12") with a bundled native folder. */
  pythons: string[];
  /** Exact pins with PEP 508 markers, one requirement per entry. */
  requirements: string[];
}

/** Parse bundled/manifest.json; undefined for anything that is not one (or has no `requirements`). */
export function parseManifest(text: string): Manifest | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  const m = raw as Partial<Record<keyof Manifest, unknown>> | null;
  const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');
  if (!m || typeof m.platform !== 'string' || !strings(m.pythons) || !strings(m.requirements)) return undefined;
  if (m.requirements.length === 0) return undefined;
  return { platform: m.platform, pythons: m.pythons, requirements: m.requirements };
}

/** What a finished environment records (`nki-env.json` in it): a changed package or interpreter invalidates it. */
export interface EnvRecord {
  /** The CPython version the venv was made with ("3.10"). */
  python: string;
  /** The manifest requirements it installed. */
  requirements: string[];
  /** The interpreter it was made from, as configured or found (the `nki-studio.interpreter` value, if set). */
  base?: string;
}

export function parseRecord(text: string): EnvRecord | undefined {
  try {
    const r = JSON.parse(text) as Partial<EnvRecord> | null;
    if (r && typeof r.python === 'string' && Array.isArray(r.requirements)) return r as EnvRecord;
  } catch {
    // not a record
  }
  return undefined;
}

/** Where the environment lives: one per extension install (the requirements differ between releases). */
export interface EnvPaths {
  dir: string;
  /** The venv's interpreter. */
  python: string;
  record: string;
  /** The requirements file pip is given. */
  requirements: string;
}

export function envPaths(globalStorage: string, platform: NodeJS.Platform = process.platform): EnvPaths {
  const paths = platform === 'win32' ? path.win32 : path.posix;
  const join = (...parts: string[]): string => paths.join(...parts);
  const dir = join(globalStorage, 'server-env');
  return {
    dir,
    python: platform === 'win32' ? join(dir, 'Scripts', 'python.exe') : join(dir, 'bin', 'python'),
    record: join(dir, 'nki-env.json'),
    requirements: join(dir, 'requirements.txt'),
  };
}

/** How the compiled packages reach the server for an interpreter. */
export type NativeFit =
  /** The package's own folder for this CPython version. */
  | { kind: 'bundled' }
  /** A finished private environment for this package. */
  | { kind: 'private-env' }
  /** Neither: the command should be offered (`reason` says why, for the user). */
  | { kind: 'needs-env'; reason: string };

const version = (v: readonly [number, number]): string => `${v[0]}.${v[1]}`;

/** Whether a record is a finished environment for this package's requirements. */
export function recordFits(manifest: Manifest, record: EnvRecord | undefined): boolean {
  return (
    record !== undefined &&
    record.requirements.length === manifest.requirements.length &&
    record.requirements.every((r, i) => r === manifest.requirements[i])
  );
}

/** Decide for an interpreter of CPython `python`. */
export function nativeFit(manifest: Manifest, python: readonly [number, number], record?: EnvRecord): NativeFit {
  if (manifest.pythons.includes(version(python))) return { kind: 'bundled' };
  if (recordFits(manifest, record) && record?.python === version(python)) return { kind: 'private-env' };
  const has = manifest.pythons.length
    ? `bundles NumPy, pyarrow and the other compiled packages for CPython ${manifest.pythons.join(', ')} only`
    : 'is the platform-neutral one and bundles no compiled packages (NumPy, pyarrow…)';
  return {
    kind: 'needs-env',
    reason: `This NKI Studio package (${manifest.platform}) ${has}; the server's interpreter is Python ${version(python)}.`,
  };
}

/** The distributions a requirement list names, for the consent message ("numpy==2.2.6; …" → "numpy"). */
export function requirementNames(requirements: readonly string[]): string[] {
  return [...new Set(requirements.map((r) => r.split(/[=<>!~;\s[]/)[0]))];
}

/** One process the command runs. */
export interface Step {
  title: string;
  command: string;
  args: string[];
}

/**
 * The processes that create the environment: a fresh venv from `basePython` (its ensurepip supplies pip), then
 * pip installs exactly the pinned binary wheels (`--no-deps`: the pins are the whole compiled set, the pure part
 * is bundled/libs; `--only-binary`: nothing is ever built on the user's machine).
 */
export function createSteps(basePython: string, paths: EnvPaths): Step[] {
  return [
    { title: 'Creating the environment', command: basePython, args: ['-m', 'venv', '--clear', paths.dir] },
    {
      title: 'Installing the pinned packages',
      command: paths.python,
      args: [
        '-m',
        'pip',
        'install',
        '--disable-pip-version-check',
        '--no-input',
        '--progress-bar',
        'off',
        '--no-deps',
        '--only-binary=:all:',
        '--requirement',
        paths.requirements,
      ],
    },
  ];
}

/** The requirements file's text: the manifest's lines as they are (markers included). */
export function requirementsFile(manifest: Manifest): string {
  return `${manifest.requirements.join('\n')}\n`;
}

/** pip's words when the index cannot be reached (no network, DNS, a proxy refusing). */
const OFFLINE = [
  /NewConnectionError/,
  /Temporary failure in name resolution/,
  /Name or service not known/,
  /nodename nor servname provided/,
  /getaddrinfo failed/,
  /Network is unreachable/,
  /No route to host/,
  /ProxyError/,
  /Connection (refused|timed out|reset)/,
  /Read timed out/,
];

/** Whether a failed pip run failed because the registry could not be reached. */
export function looksOffline(output: string): boolean {
  return OFFLINE.some((re) => re.test(output));
}

/** The progress line for one line of pip's output, or undefined for lines not worth showing. */
export function progressLine(line: string): string | undefined {
  const m = /^\s*(Collecting|Downloading|Installing collected packages:|Successfully installed)\s*(.*)$/.exec(line);
  if (!m) return undefined;
  const what = m[2].replace(/\s*\(.*\)$/, '').replace(/^.*\//, '');
  return m[1].endsWith(':') ? `installing ${what}` : `${m[1].toLowerCase()} ${what}`.trim();
}
