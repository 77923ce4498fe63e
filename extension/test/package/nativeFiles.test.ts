/**
 * Every built per-target .vsix (dist/nki-studio-<target>-<version>.vsix, scripts/package-all.sh) carries compiled
 * files for its target only, read from the files' own headers (ELF machine, Mach-O CPU type, PE machine), and
 * the platform-neutral one carries none. $NKI_STUDIO_VSIXES (space-separated paths) picks the packages.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../e2e/codeServer';

/** The format and CPU of a compiled file, from its first bytes; undefined for anything else. */
export function binaryKind(head: Buffer): string | undefined {
  if (head.length >= 20 && head.readUInt32BE(0) === 0x7f454c46) {
    const machine = head.readUInt16LE(18);
    return `elf-${{ 0x3e: 'x64', 0xb7: 'arm64' }[machine] ?? machine.toString(16)}`;
  }
  if (head.length >= 8 && head.readUInt32LE(0) === 0xfeedfacf) {
    const cpu = head.readUInt32LE(4);
    return `macho-${{ 0x01000007: 'x64', 0x0100000c: 'arm64' }[cpu] ?? cpu.toString(16)}`;
  }
  if (head.length >= 8 && head.readUInt32BE(0) === 0xcafebabe && head.readUInt32BE(4) < 10) {
    // A universal (fat) Mach-O: big-endian count, then 20-byte entries starting with the CPU type.
    const cpus = [];
    for (let i = 0; i < head.readUInt32BE(4) && 8 + 20 * i + 4 <= head.length; i++)
      cpus.push({ 0x01000007: 'x64', 0x0100000c: 'arm64' }[head.readUInt32BE(8 + 20 * i)] ?? 'other');
    return `macho-fat-${cpus.sort().join('+')}`;
  }
  if (head.length >= 0x40 && head.toString('latin1', 0, 2) === 'MZ') {
    const pe = head.readUInt32LE(0x3c);
    if (pe + 6 <= head.length && head.toString('latin1', pe, pe + 4) === 'PE\0\0') {
      const machine = head.readUInt16LE(pe + 4);
      return `pe-${{ 0x8664: 'x64', 0xaa64: 'arm64', 0x14c: 'x86' }[machine] ?? machine.toString(16)}`;
    }
  }
  return undefined;
}

/** Whether a file of `kind` runs on VS Code target `target` (a fat Mach-O must include the target's CPU). */
export function fitsTarget(kind: string, target: string): boolean {
  const [os_, arch] = target.split('-');
  const format = { linux: 'elf', darwin: 'macho', win32: 'pe' }[os_];
  if (kind.startsWith('macho-fat-')) return format === 'macho' && kind.slice(10).split('+').includes(arch);
  return kind === `${format}-${arch}`;
}

function* files(dir: string): Generator<string> {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) yield* files(full);
    else if (e.isFile()) yield full;
  }
}

function head(file: string): Buffer {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(4096);
    return buf.subarray(0, fs.readSync(fd, buf, 0, buf.length, 0));
  } finally {
    fs.closeSync(fd);
  }
}

const packages = (
  process.env.NKI_STUDIO_VSIXES?.split(/\s+/).filter(Boolean) ??
  (fs.existsSync(path.join(ROOT, 'dist'))
    ? fs
        .readdirSync(path.join(ROOT, 'dist'))
        .filter((f) => f.endsWith('.vsix'))
        .map((f) => path.join(ROOT, 'dist', f))
    : [])
).sort();

describe('compiled files match each package target', () => {
  it('has packages to check', () => assert.ok(packages.length > 0, 'no dist/*.vsix: run scripts/package-all.sh'));
  for (const vsix of packages) {
    it(path.basename(vsix), () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nki-native-'));
      try {
        execFileSync('unzip', ['-q', vsix, '-d', dir]);
        const manifest = fs.readFileSync(path.join(dir, 'extension.vsixmanifest'), 'utf8');
        const target = /TargetPlatform="([^"]+)"/.exec(manifest)?.[1];
        const bundle = JSON.parse(fs.readFileSync(path.join(dir, 'extension', 'bundled', 'manifest.json'), 'utf8')) as {
          platform: string;
          requirements?: string[];
        };
        assert.equal(bundle.platform, target ?? 'universal', 'vsce target and bundled/manifest.json agree');
        const wrong: string[] = [];
        let compiled = 0;
        for (const file of files(path.join(dir, 'extension'))) {
          const kind = binaryKind(head(file));
          if (!kind) continue;
          compiled++;
          if (!target || !fitsTarget(kind, target)) wrong.push(`${path.relative(dir, file)}: ${kind}`);
        }
        assert.deepEqual(wrong.slice(0, 20), [], `${wrong.length} compiled files not for ${target ?? 'any platform'}`);
        if (target) assert.ok(compiled > 0, 'a per-target package carries compiled files');
        else assert.ok((bundle.requirements ?? []).length > 0, 'the neutral package pins what to install on demand');
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
