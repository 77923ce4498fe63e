// Tokenises sample NKI kernels with the real TextMate engine VS Code uses (vscode-textmate + vscode-oniguruma):
// the Python grammar (MagicPython, from tm-grammars) with our injection grammar, then checks the scopes.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';
import * as oniguruma from 'vscode-oniguruma';
import * as vsctm from 'vscode-textmate';

const ROOT = path.resolve(__dirname, '../../../..');
const INJECTION = path.join(ROOT, 'syntaxes', 'nki.injection.tmLanguage.json');
const PYTHON = require.resolve('tm-grammars/grammars/python.json');

interface Token {
  text: string;
  scopes: string[];
}

let grammar: vsctm.IGrammar;

async function loadGrammar(): Promise<vsctm.IGrammar> {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (sources: string[]) => new oniguruma.OnigScanner(sources),
      createOnigString: (s: string) => new oniguruma.OnigString(s),
    }),
    loadGrammar: (scopeName: string) => {
      const file = scopeName === 'source.python' ? PYTHON : scopeName === 'source.python.nki' ? INJECTION : null;
      return Promise.resolve(file ? vsctm.parseRawGrammar(fs.readFileSync(file, 'utf8'), file) : null);
    },
    // package.json "injectTo": ["source.python"] does this in VS Code
    getInjections: (scopeName: string) => (scopeName === 'source.python' ? ['source.python.nki'] : undefined),
  });
  const g = await registry.loadGrammar('source.python');
  assert.ok(g, 'python grammar loads');
  return g;
}

function tokenize(source: string): Token[][] {
  let state = vsctm.INITIAL;
  return source.split('\n').map((line) => {
    const result = grammar.tokenizeLine(line, state);
    state = result.ruleStack;
    return result.tokens.map((t) => ({ text: line.slice(t.startIndex, t.endIndex), scopes: t.scopes }));
  });
}

/** Scopes of the first token with exactly ``text`` on the line that contains ``marker``. */
function scopesOf(lines: Token[][], source: string, marker: string, text: string): string[] {
  const index = source.split('\n').findIndex((l) => l.includes(marker));
  assert.ok(index >= 0, `marker ${marker}`);
  const token = lines[index].find((t) => t.text === text);
  assert.ok(
    token,
    `token ${JSON.stringify(text)} on line ${index + 1}: ${JSON.stringify(lines[index].map((t) => t.text))}`,
  );
  return token.scopes;
}

const KERNEL = [
  'import nki',
  'import nki.language as nl',
  'import nki.isa as nisa',
  '',
  '',
  '# nki-studio: simulate x=float32[128,512] reference=ref seed=7',
  '@nki.jit',
  'def kernel(x):',
  '    out = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)',
  '    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)',
  '    acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)',
  '    nisa.dma_copy(dst=t, src=x)',
  '    nisa.nc_matmul(acc, t, t, perf_mode=nisa.matmul_perf_mode.none)',
  '    s = "nl.sbuf in a string"  # nl.psum in a comment',
  '    nl.ndarray_like = 1',
  '    return out',
].join('\n');

describe('NKI injection grammar', () => {
  before(async () => {
    grammar = await loadGrammar();
  });

  it('marks the @nki.jit decorator', () => {
    const lines = tokenize(KERNEL);
    assert.ok(scopesOf(lines, KERNEL, '@nki.jit', 'jit').includes('entity.name.function.decorator.nki'));
    assert.ok(scopesOf(lines, KERNEL, '@nki.jit', '@').includes('punctuation.definition.decorator.python'));
  });

  it('marks buffers', () => {
    const lines = tokenize(KERNEL);
    for (const [marker, buffer] of [
      ['shared_hbm)', 'shared_hbm'],
      ['nl.sbuf)', 'sbuf'],
      ['nl.psum)', 'psum'],
    ]) {
      assert.ok(scopesOf(lines, KERNEL, marker, buffer).includes('constant.language.buffer.nki'), buffer);
    }
  });

  it('marks dtypes', () => {
    const lines = tokenize(KERNEL);
    assert.ok(scopesOf(lines, KERNEL, 'dtype=nl.bfloat16', 'bfloat16').includes('support.type.dtype.nki'));
    assert.ok(scopesOf(lines, KERNEL, 'nl.zeros', 'float32').includes('support.type.dtype.nki'));
  });

  it('marks nl. and nisa. API names with their module', () => {
    const lines = tokenize(KERNEL);
    assert.ok(scopesOf(lines, KERNEL, 'out = nl.ndarray', 'ndarray').includes('support.function.nki.language'));
    assert.ok(scopesOf(lines, KERNEL, 'nl.zeros', 'zeros').includes('support.function.nki.language'));
    assert.ok(scopesOf(lines, KERNEL, 'nisa.dma_copy', 'dma_copy').includes('support.function.nki.isa'));
    assert.ok(scopesOf(lines, KERNEL, 'nisa.nc_matmul', 'nc_matmul').includes('support.function.nki.isa'));
    assert.ok(scopesOf(lines, KERNEL, 'nisa.nc_matmul', 'matmul_perf_mode').includes('support.type.nki.isa'));
    assert.ok(scopesOf(lines, KERNEL, 'nisa.dma_copy', 'nisa').includes('support.module.nki'));
  });

  it('marks spec comments and keeps them comments', () => {
    const lines = tokenize(KERNEL);
    const keyword = scopesOf(lines, KERNEL, '# nki-studio:', 'nki-studio');
    assert.ok(keyword.includes('keyword.other.spec.nki') && keyword.includes('comment.line.number-sign.python'));
    assert.ok(scopesOf(lines, KERNEL, '# nki-studio:', 'reference').includes('variable.parameter.spec.nki'));
  });

  it('leaves strings, comments and unknown attributes alone', () => {
    const lines = tokenize(KERNEL);
    const line = lines[KERNEL.split('\n').findIndex((l) => l.includes('in a string'))];
    assert.ok(
      line.every((t) => !t.scopes.some((s) => s.endsWith('.nki'))),
      JSON.stringify(line),
    );
    const unknown = scopesOf(lines, KERNEL, 'ndarray_like', 'ndarray_like');
    assert.ok(!unknown.some((s) => s.endsWith('.nki') || s.includes('.nki.')), unknown.join(' '));
  });

  it('marks legacy-only names and neuronxcc.nki module paths as legacy', () => {
    const source = [
      'from neuronxcc import nki',
      'import neuronxcc.nki.language as nl',
      'import neuronxcc.nki.compiler as ncc',
      '',
      '',
      '@nki.baremetal',
      'def kernel(a):',
      '    i_p = nl.arange(128)[:, None]',
      '    i_x, i_y = nl.mgrid[0:128, 0:512]',
      '    t = nl.ndarray((2, nl.par_dim(128), 512), nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=0))',
      '    u = neuronxcc.nki.language.static_cast(t, nl.bfloat16)',
      '    v = nl.load(a[i_p, i_y])',
    ].join('\n');
    const lines = tokenize(source);
    const legacy = (marker: string, text: string, scope: string): void => {
      assert.ok(scopesOf(lines, source, marker, text).includes(scope), `${text}: ${scope}`);
    };
    legacy('from neuronxcc', 'neuronxcc', 'support.module.legacy.nki');
    legacy('import neuronxcc.nki.language', 'neuronxcc.nki.language', 'support.module.legacy.nki');
    legacy('@nki.baremetal', 'baremetal', 'support.function.legacy.nki');
    legacy('nl.arange', 'arange', 'support.function.legacy.nki.language');
    legacy('nl.mgrid', 'mgrid', 'support.constant.legacy.nki.language');
    legacy('nl.par_dim', 'par_dim', 'support.function.legacy.nki.language');
    legacy('ncc.sbuf', 'sbuf', 'support.constant.legacy.nki.compiler');
    legacy('static_cast', 'static_cast', 'support.function.legacy.nki.language');
    // names both APIs have keep their current scopes
    legacy('nl.ndarray((2', 'ndarray', 'support.function.nki.language');
    legacy('nl.load', 'load', 'support.function.nki.language');
    assert.ok(!scopesOf(lines, source, 'nl.load', 'load').some((s) => s.includes('legacy')));
  });

  it('does nothing to plain Python names that only look similar', () => {
    const source = 'import numpy as np\nx = np.ndarray((2, 2), dtype=np.float32)\n';
    const lines = tokenize(source);
    assert.ok(lines.flat().every((t) => !t.scopes.some((s) => s.includes('.nki'))));
  });
});
