/**
 * Test inputs made by the project's own Python tools: synthetic profiles (tests/profile/fixturegen.py) for the
 * profile readers, and the estimated timeline of a simulation (`nki-studio simulate --json`).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from './codeServer';

export function projectPython(): string {
  const venv = path.join(ROOT, '.venv', 'bin', 'python');
  return fs.existsSync(venv) ? venv : 'python3';
}

/** Write every profile format of a synthetic profile of `kernelFile` into `outDir`; returns format → path. */
export function makeProfile(kernelFile: string, outDir: string, instructions = 400): Record<string, string> {
  const out = execFileSync(
    projectPython(),
    [path.join(ROOT, 'tests', 'profile', 'fixturegen.py'), kernelFile, outDir, String(instructions)],
    { encoding: 'utf8' },
  );
  const paths: Record<string, string> = {};
  for (const line of out.split('\n')) {
    const m = /^([\w-]+): (.+)$/.exec(line.trim());
    if (m) paths[m[1]] = m[2];
  }
  return paths;
}

/** 1-based lines the synthetic profile attributes instructions to (the kernels' statement lines). */
export function profiledLines(kernelFile: string): number[] {
  const code =
    'import sys, json; sys.path.insert(0, sys.argv[1]); import fixturegen; ' +
    'print(json.dumps(sorted(fixturegen.kernel_body_lines(open(sys.argv[2]).read()))))';
  return JSON.parse(
    execFileSync(projectPython(), ['-c', code, path.join(ROOT, 'tests', 'profile'), kernelFile], { encoding: 'utf8' }),
  ) as number[];
}

/** 1-based lines of `kernelFile` that the estimated timeline of its simulation puts instructions on. */
export function estimatedLines(kernelFile: string): number[] {
  const out = execFileSync(projectPython(), ['-m', 'nki_studio', 'simulate', kernelFile, '--json'], {
    encoding: 'utf8',
    cwd: ROOT,
  });
  const parsed = JSON.parse(out) as unknown;
  const results = (Array.isArray(parsed) ? parsed : [parsed]) as { estimate?: { lines: { line: number }[] } }[];
  return results.flatMap((r) => (r.estimate?.lines ?? []).map((l) => l.line));
}

/** A syntactically valid NKI kernel of about `lines` lines: one long chain of element-wise ops. */
export function longKernel(lines: number): string {
  const head = [
    'import nki',
    'import nki.isa as nisa',
    'import nki.language as nl',
    '',
    '',
    '@nki.jit',
    'def big_kernel(x):',
    '    t0 = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)',
    '    nisa.dma_copy(dst=t0, src=x[0:128, 0:512])',
  ];
  const body: string[] = [];
  for (let i = 1; body.length + head.length < lines - 3; i += 1) {
    body.push(`    t${i} = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)`);
    body.push(`    nisa.tensor_scalar(dst=t${i}, data=t${i - 1}, op0=nl.multiply, operand0=1.0)`);
  }
  const last = (body.length / 2) | 0;
  return [
    ...head,
    ...body,
    '    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)',
    `    nisa.dma_copy(dst=out, src=t${last})`,
    '    return out',
    '',
  ].join('\n');
}
