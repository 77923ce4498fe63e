import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RunServerCommand } from '../../src/firstRun';
import { renderPanel } from '../../src/panel/render';
import { APPLY_TUNE_WINNER, tuneSection } from '../../src/panel/tune';
import type { DeclaredSpace, TuneCandidate, TuneResult } from '../../src/protocol.generated';
import { TuneStore, applyTuneWinner, askTuneSpec } from '../../src/tune';
import { FakeEditor, FakeVsCode } from '../support/fakeVscode';

const URI = 'file:///w/k.py';

function candidate(values: Record<string, number | string>, rank: number | null): TuneCandidate {
  return {
    values,
    verdict: rank === null ? 'failed' : 'ranked',
    reason: rank === null ? 'out: allclose' : '',
    rank,
    tiedWith: [],
    estimatedNs: rank === null ? null : 1000 * rank,
    lowNs: null,
    highNs: null,
    bound: null,
    bottleneck: null,
    sbufPeakBytes: null,
    speedup: null,
    cached: false,
    seconds: 1,
  };
}

/** A server answer as `nki-studio.tune` sends it (rows and SVG are the server's text). */
function result(edits: TuneResult['edits']): TuneResult {
  const winner = candidate({ TILE: 512, NAME: '<b>' }, 1);
  return {
    status: 'ok',
    uri: URI,
    report: {
      kernel: 'k',
      path: '/w/k.py',
      target: 'trn2',
      space: { TILE: [256, 512] },
      constraints: [],
      spaceSize: 2,
      strategy: 'exhaustive',
      executor: 'local (2 workers)',
      baseline: null,
      candidates: [winner, candidate({ TILE: 256 }, 2), candidate({ TILE: 128 }, null)],
      winner,
      diff: '',
      rejectedByConstraints: 0,
      pruned: {},
      evaluated: 3,
      cacheHits: 0,
      elapsedS: 3,
      calibration: '',
      notes: [],
    },
    summary: 'tune k (/w/k.py, trn2): 2 points',
    header: ['rank', 'values', 'estimate (likely range)', 'verdict'],
    rows: [['1', 'TILE=512 NAME=<b>', '≈ 1.0 µs', 'ranked']],
    outcome: ['winner TILE=512: ≈ 1.0 µs estimated (not measured)'],
    scatter: '<svg xmlns="http://www.w3.org/2000/svg"><circle class="tune-point tune-winner"/></svg>',
    edits,
  };
}

const EDITS: TuneResult['edits'] = [
  { line: 3, replace: true, text: 'TILE = 512\n' },
  { line: 9, replace: true, text: 'def k(a, NAME="<b>"):\n' },
];

describe('the kernel panel shows a search', () => {
  it('renders the server rows escaped, its SVG, the hidden count, the outcome and the Apply winner button', () => {
    const html = tuneSection({ result: result(EDITS), applicable: true });
    assert.match(html, /<h2>Tune k <span class="muted">estimated times, not measured<\/span><\/h2>/);
    assert.match(html, /<tr><th>rank<\/th><th>values<\/th><th>estimate \(likely range\)<\/th><th>verdict<\/th><\/tr>/);
    assert.ok(html.includes('<tr class="winner"><td>1</td><td>TILE=512 NAME=&lt;b&gt;</td>'), html);
    assert.ok(html.includes('<circle class="tune-point tune-winner"/>'));
    assert.match(html, /… 2 more \(nki-studio tune --json lists every candidate\)/);
    assert.match(html, /winner TILE=512: ≈ 1\.0 µs estimated \(not measured\)/);
    const link = `command:${APPLY_TUNE_WINNER}?${encodeURIComponent(JSON.stringify([URI]))}`;
    assert.ok(html.includes(`<a href="${link}">Apply winner</a>`), html);
  });

  it('offers no button once the document changed, and none without a winner edit', () => {
    const stale = tuneSection({ result: result(EDITS), applicable: false });
    assert.ok(!stale.includes('Apply winner') && stale.includes('tune again to apply its winner'));
    const nothing = tuneSection({ result: result([]), applicable: true });
    assert.ok(!nothing.includes('Apply winner') && !nothing.includes('tune again'));
  });

  it('is part of the panel', () => {
    const html = renderPanel({ tune: { result: result(EDITS), applicable: true } }, 'n', 'self');
    assert.ok(html.includes('<h2>Tune k') && !html.includes('No data yet'));
  });
});

describe('Tune kernel… asks what to search', () => {
  const declared: DeclaredSpace = {
    kernel: 'k',
    space: 'TILE=256,512 if TILE <= 512',
    origin: 'tune comment',
    size: 2,
  };

  function server(answer: DeclaredSpace | null): { run: RunServerCommand; calls: unknown[] } {
    const calls: unknown[] = [];
    const run: RunServerCommand = (command, args) => {
      calls.push([command, args]);
      return Promise.resolve(answer);
    };
    return { run, calls };
  }

  it('pre-fills the declared space and sends the space and budget typed', async () => {
    const fake = new FakeVsCode();
    fake.inputBoxAnswer = (o) => (o.title?.endsWith('budget') ? ' 8 ' : o.value);
    const { run, calls } = server(declared);
    const spec = await askTuneSpec(fake.api(), run, URI, 'k');
    assert.deepEqual(calls, [['nki-studio.tuneSpace', [URI, 'k']]]);
    assert.equal(fake.inputBoxes[0].value, declared.space);
    assert.match(fake.inputBoxes[0].prompt ?? '', /pre-filled from its tune comment \(2 points before constraints\)/);
    assert.deepEqual(spec, { uri: URI, kernel: 'k', space: declared.space, budget: 8 });
  });

  it('says how to write a space when none is declared, and stops on a bad budget or Escape', async () => {
    const fake = new FakeVsCode();
    fake.inputBoxAnswer = (o) => (o.title?.endsWith('budget') ? '1.5' : 'TILE=1,2');
    assert.equal(await askTuneSpec(fake.api(), server(null).run, URI, 'k'), undefined);
    assert.match(fake.inputBoxes[0].prompt ?? '', /none is declared above the kernel/);
    assert.deepEqual(fake.errors, ['NKI: the budget must be a positive whole number, not "1.5".']);
    fake.inputBoxAnswer = () => undefined;
    assert.equal(await askTuneSpec(fake.api(), server(declared).run, URI, 'k'), undefined);
  });
});

describe('Apply winner', () => {
  function setUp(): { fake: FakeVsCode; editor: FakeEditor; tunes: TuneStore } {
    const fake = new FakeVsCode();
    const editor = new FakeEditor(URI, 'import nki\n');
    fake.textDocuments = [editor.document];
    const tunes = new TuneStore();
    tunes.set(URI, { result: result(EDITS), version: 1 });
    return { fake, editor, tunes };
  }

  it('writes the winner edits as one WorkspaceEdit while the document is the searched text', async () => {
    const { fake, tunes } = setUp();
    let refreshed = 0;
    tunes.onDidChange(() => (refreshed += 1));
    assert.equal(await applyTuneWinner(fake.api(), tunes, URI), true);
    const [edit] = fake.appliedEdits;
    assert.deepEqual(
      edit.edits.map((e) => [e.uri, e.range.start.line, e.range.end.line, e.text]),
      [
        [URI, 3, 4, 'TILE = 512\n'],
        [URI, 9, 10, 'def k(a, NAME="<b>"):\n'],
      ],
    );
    assert.equal(refreshed, 1);
    assert.match(fake.messages[0], /not saved\)\. Its time is an estimate/);
  });

  it('refuses once the document changed, and without a search', async () => {
    const { fake, editor, tunes } = setUp();
    editor.document.version = 2;
    assert.equal(await applyTuneWinner(fake.api(), tunes, URI), false);
    assert.deepEqual(fake.warnings, [['NKI: the file changed since the search of k: tune again to apply its winner.']]);
    assert.equal(await applyTuneWinner(fake.api(), tunes, 'file:///w/other.py'), false);
    assert.deepEqual(fake.appliedEdits, []);
    assert.match(fake.messages[0], /no winner to apply/);
  });
});
