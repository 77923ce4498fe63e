import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { alignLines } from '../../src/panel/lineAlign';
import { renderPanel } from '../../src/panel/render';
import { heatLine } from '../support/heatData';

const BEFORE = [
  'def k(x):',
  '    t = load(x)',
  '    copy(t)',
  '    for i in range(4):',
  '        work(t)',
  '    return t',
];
// one line removed above the loop, two inserted, the loop's range edited: `work(t)` moves from line 4 to 5
const AFTER = [
  'def k(x):',
  '    # prefetch',
  '    t = load(x)',
  '    v = copy2(t)',
  '    for i in range(8):',
  '        work(t)',
  '    return t',
];

describe('line alignment', () => {
  it('matches equal lines in order; an edited line has no counterpart', () => {
    const map = alignLines(BEFORE, AFTER);
    assert.deepEqual(
      [...(map ?? [])],
      [
        [0, 0],
        [1, 2],
        [4, 5],
        [5, 6],
      ],
    );
    assert.deepEqual(
      [...(alignLines(['a', 'b '], ['a', 'b']) ?? [])],
      [
        [0, 0],
        [1, 1],
      ],
    ); // trailing whitespace does not count
  });

  it('gives up on inputs too large to align (the view falls back to line numbers)', () => {
    const big = Array.from({ length: 3000 }, (_, i) => `x${i}`);
    assert.equal(alignLines(big, [...big].reverse()), undefined);
  });
});

describe('before/after view across an edit', () => {
  const before = { uri: 'u', source: 'estimate' as const, lines: [heatLine(4, 400), heatLine(2, 50)], kernel: {} };
  const after = { uri: 'u', source: 'estimate' as const, lines: [heatLine(5, 900), heatLine(3, 70)], kernel: {} };

  it('follows the moved line and lists removed and added lines with their time', () => {
    const html = renderPanel(
      {
        heat: { stale: false, params: after, text: AFTER.join('\n') },
        baseline: before,
        baselineSource: { text: BEFORE.join('\n'), lines: before.lines },
      },
      'n',
      'x',
    );
    const view = html.split('Before / after')[1] ?? '';
    assert.match(view, /lines followed across the edit/);
    assert.match(view, /<td>5 → 6<\/td><td>400 ns<\/td><td>900 ns<\/td><td>\+500 ns<\/td>/);
    assert.match(view, /<td>3 \(removed\)<\/td><td>50 ns<\/td><td>0 ns<\/td><td>−50 ns<\/td>/);
    assert.match(view, /<td>4 \(added\)<\/td><td>0 ns<\/td><td>70 ns<\/td><td>\+70 ns<\/td>/);
  });

  it('without the texts matches by number and says so', () => {
    const html = renderPanel({ heat: { stale: false, params: after }, baseline: before }, 'n', 'x');
    const view = html.split('Before / after')[1] ?? '';
    assert.match(view, /lines matched by number: source text unavailable/);
    assert.match(view, /<td>6<\/td><td>0 ns<\/td><td>900 ns<\/td>/);
  });
});
