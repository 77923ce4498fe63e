import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BAR_CELLS, VALUE_WIDTH, barText, blankBar } from '../../src/heat/bars';
import { BUCKETS, LIGHT_PALETTE, PALETTE, backgroundAlpha, bucketLines, bucketOf, rgba } from '../../src/heat/buckets';
import { formatMetric, formatNs } from '../../src/heat/format';
import { hottestStep, rankLines } from '../../src/heat/hottest';
import { metricValue, parseHeatmap, profileLabel } from '../../src/heat/model';
import { gutterMark } from '../../src/heat/painter';
import { VALUE_BUCKET, barWindow, barsInWindow, lineRuns, planDecorations, windowStale } from '../../src/heat/plan';
import { heatLine } from '../support/heatData';

/** WCAG relative luminance of a #rrggbb colour. */
function luminance(hex: string): number {
  const n = Number.parseInt(hex.slice(1), 16);
  const ch = [(n >> 16) & 255, (n >> 8) & 255, n & 255].map((v) => {
    const c = v / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2];
}

describe('buckets and palette', () => {
  it('has one colour per bucket', () => {
    assert.equal(PALETTE.length, BUCKETS);
    assert.equal(LIGHT_PALETTE.length, BUCKETS);
  });

  it('is sequential in lightness (readable without hue, so colour-blind safe)', () => {
    for (const palette of [PALETTE, LIGHT_PALETTE]) {
      for (let i = 1; i < palette.length; i += 1)
        assert.ok(luminance(palette[i]) < luminance(palette[i - 1]), `${palette[i]} not darker than ${palette[i - 1]}`);
    }
  });

  it('is darker on light themes, bucket by bucket, so cool lines still show on white', () => {
    for (let b = 0; b < BUCKETS; b += 1) assert.ok(luminance(LIGHT_PALETTE[b]) < luminance(PALETTE[b]), `bucket ${b}`);
    assert.ok(luminance(LIGHT_PALETTE[0]) < 0.75, 'the coolest light-theme colour is no pale yellow');
  });

  it('scales background opacity with heat', () => {
    for (let b = 1; b < BUCKETS; b += 1) assert.ok(backgroundAlpha(b) > backgroundAlpha(b - 1));
    assert.ok(backgroundAlpha(BUCKETS - 1) <= 0.5, 'hottest background must leave code readable');
  });

  it('converts hex to rgba', () => {
    assert.equal(rgba('#fd8d3c', 0.5), 'rgba(253, 141, 60, 0.500)');
  });

  it('puts the hottest line in the top bucket and nothing for zero', () => {
    assert.equal(bucketOf(100, 100), BUCKETS - 1);
    assert.equal(bucketOf(0, 100), -1);
    assert.equal(bucketOf(1, 100), 0);
    assert.equal(bucketOf(50, 100), 3);
    assert.equal(bucketOf(Number.NaN, 100), -1);
    assert.equal(bucketOf(5, 0), -1);
  });

  it('buckets by the chosen metric', () => {
    const lines = [heatLine(1, 100, { dma_bytes: 0 }), heatLine(2, 10, { dma_bytes: 4096 })];
    assert.deepEqual(
      bucketLines(lines, 'busy').map((b) => [b.line.line, b.bucket]),
      [
        [1, 6],
        [2, 0],
      ],
    );
    assert.deepEqual(
      bucketLines(lines, 'dma').map((b) => [b.line.line, b.bucket]),
      [[2, 6]],
    );
  });

  it('reads metric values defensively', () => {
    assert.equal(metricValue(heatLine(0, -5), 'busy'), 0);
    assert.equal(metricValue({ ...heatLine(0, 5), wait_ns: Number.POSITIVE_INFINITY }, 'wait'), 0);
  });
});

describe('bars', () => {
  it('has the same width whatever the ratio and value', () => {
    const widths = [0, 0.01, 0.5, 0.999, 1].flatMap((r) =>
      ['1 ns', '123.4 µs', 'a-very-long-value'].map((v) => [...barText(r, v)].length),
    );
    assert.equal(new Set(widths).size, 1);
    assert.equal(widths[0], BAR_CELLS + VALUE_WIDTH + 2);
    assert.equal([...blankBar()].length, widths[0]);
  });

  it('fills proportionally', () => {
    assert.ok(barText(1, 'x').startsWith('█'.repeat(BAR_CELLS)));
    assert.ok(!barText(0, 'x').includes('█'));
    assert.ok(barText(0.5, 'x').startsWith('█'.repeat(BAR_CELLS / 2)));
  });

  it('uses no ordinary spaces (they would collapse in decoration text)', () => {
    assert.ok(!barText(0.3, '1.2 µs').includes(' '));
  });
});

describe('decoration plan', () => {
  const lines = [heatLine(3, 1000), heatLine(7, 500), heatLine(9, 10), heatLine(40, 999)];

  it('puts each hot line in its bucket once, with a bar', () => {
    const plan = planDecorations(lines, 'busy', 20, 'bars');
    assert.equal(plan.buckets.length, BUCKETS);
    const placed = plan.buckets.flatMap((b, i) => b.map((p) => [p.line, i]));
    assert.deepEqual(
      placed.sort((a, b) => a[0] - b[0]),
      [
        [3, 6],
        [7, 3],
        [9, 0],
      ],
    );
    assert.equal(plan.buckets[6][0].ratio, 1);
    assert.ok(barsInWindow(plan, { from: 3, to: 3 }).hot[0].text.includes('1.0\u00a0µs'));
  });

  it('skips lines past the end of the document', () => {
    const plan = planDecorations(lines, 'busy', 20, 'bars');
    assert.ok(!plan.buckets.flat().some((p) => p.line === 40));
  });

  it('gives every other line of the window a blank bar so code stays aligned, only when bars are on', () => {
    const plan = planDecorations(lines, 'busy', 12, 'bars');
    const { hot, cold } = barsInWindow(plan, { from: 0, to: 11 });
    assert.deepEqual(
      hot.map((p) => p.line),
      [3, 7, 9],
    );
    assert.equal(cold.length, 12 - 3);
    assert.ok(!cold.includes(3));
    assert.deepEqual(barsInWindow(plan, { from: 5, to: 8 }).cold, [5, 6, 8]);
    const noBars = planDecorations(lines, 'busy', 12, 'background');
    assert.deepEqual(barsInWindow(noBars, { from: 0, to: 11 }), { hot: [], cold: [] });
    assert.deepEqual(
      noBars.buckets[6].map((p) => p.line),
      [3],
    );
  });

  it('compact style: values on the hottest lines only, no padding of cold lines', () => {
    const plan = planDecorations(lines, 'busy', 12, 'compact');
    const { hot, cold } = barsInWindow(plan, { from: 0, to: 11 });
    // line 7 (half the hottest) and line 9 have heat (backgrounds, gutter marks) but show no value
    assert.deepEqual(
      hot.map((p) => [p.line, p.text]),
      [[3, formatMetric('busy', 1000)]],
    );
    assert.deepEqual(cold, []);
    assert.ok(plan.buckets.every((b, i) => i < VALUE_BUCKET || b.every((p) => p.ratio >= 4 / 7)));
  });

  it('compact style: the gutter mark widens with the heat', () => {
    const widths = PALETTE.map((c, b) => Number(/width%3D%22([\d.]+)%22%20height%3D%2212/.exec(gutterMark(c, b))?.[1]));
    assert.equal(widths[0], 2);
    assert.equal(widths[BUCKETS - 1], 14);
    for (let b = 1; b < BUCKETS; b += 1) assert.ok(widths[b] > widths[b - 1], `bucket ${b}`);
    assert.ok(gutterMark(PALETTE[0], 0).startsWith('data:image/svg+xml;utf8,'));
  });

  it('paints nothing when nothing is hot', () => {
    const plan = planDecorations([heatLine(1, 0)], 'busy', 5, 'bars');
    assert.equal(plan.buckets.flat().length, 0);
    assert.deepEqual(barsInWindow(plan, { from: 0, to: 4 }), { hot: [], cold: [] });
  });

  it('merges adjacent lines into runs', () => {
    assert.deepEqual(lineRuns([1, 2, 3, 5, 7, 8]), [
      [1, 3],
      [5, 5],
      [7, 8],
    ]);
    assert.deepEqual(lineRuns([]), []);
  });

  it('keeps bars on the screen plus one screen each side, within the document', () => {
    assert.deepEqual(barWindow([{ from: 100, to: 139 }], 2000), { from: 60, to: 179 });
    assert.deepEqual(
      barWindow(
        [
          { from: 0, to: 9 },
          { from: 30, to: 39 },
        ],
        50,
      ),
      { from: 0, to: 49 },
    );
    assert.deepEqual(barWindow([{ from: 5, to: 6 }], 100), { from: 0, to: 26 }); // at least 20 lines of margin
  });

  it('asks for a new window only when the screen nears its edge', () => {
    const painted = { from: 60, to: 179 };
    assert.equal(windowStale(painted, [{ from: 100, to: 139 }], 2000), false);
    assert.equal(windowStale(painted, [{ from: 115, to: 154 }], 2000), false);
    assert.equal(windowStale(painted, [{ from: 125, to: 164 }], 2000), true);
    assert.equal(windowStale(painted, [{ from: 70, to: 109 }], 2000), true);
    // the window already reaches the end of the document
    assert.equal(windowStale({ from: 60, to: 199 }, [{ from: 160, to: 199 }], 200), false);
  });
});

describe('next hottest line', () => {
  const lines = [heatLine(10, 5), heatLine(2, 50), heatLine(7, 20), heatLine(4, 0)];

  it('ranks hottest first and ignores cold lines', () => {
    assert.deepEqual(rankLines(lines, 'busy'), [2, 7, 10]);
  });

  it('starts at the hottest and walks down, wrapping', () => {
    assert.equal(hottestStep(lines, 'busy', 0)?.line, 2);
    assert.equal(hottestStep(lines, 'busy', 2)?.line, 7);
    assert.equal(hottestStep(lines, 'busy', 7)?.line, 10);
    assert.equal(hottestStep(lines, 'busy', 10)?.line, 2);
    assert.equal(hottestStep([], 'busy', 0)?.line, undefined);
  });

  it('says where the step is in the ranking: n of N', () => {
    assert.deepEqual(hottestStep(lines, 'busy', -1), { line: 2, rank: 1, of: 3 });
    assert.deepEqual(hottestStep(lines, 'busy', 10), { line: 2, rank: 1, of: 3 });
    assert.deepEqual(hottestStep(lines, 'busy', 7), { line: 10, rank: 3, of: 3 });
  });
});

describe('notification parsing and formatting', () => {
  it('accepts a well-formed payload and drops malformed lines', () => {
    const parsed = parseHeatmap({
      uri: 'file:///k.py',
      source: 'measured',
      profile: { label: 'p', path: '/x/p' },
      stale: true,
      lines: [heatLine(1, 5), { line: -1 }, { nope: 1 }, { line: 2, busy_ns: 3 }],
    });
    assert.ok(typeof parsed !== 'string');
    assert.equal(profileLabel(parsed), 'p');
    assert.equal(parsed.stale, true);
    assert.equal(profileLabel({ profile: { path: '/data/run_7/' } }), 'run_7');
    assert.deepEqual(
      parsed.lines.map((l) => l.line),
      [1, 2],
    );
    assert.deepEqual(parsed.lines[1].engines, {});
  });

  it('rejects bad payloads with a message', () => {
    assert.match(parseHeatmap(null) as string, /not an object/);
    assert.match(parseHeatmap({ uri: 'x', source: 'guess', lines: [] }) as string, /source/);
    assert.match(parseHeatmap({ uri: 'x', source: 'estimate' }) as string, /lines/);
  });

  it('formats values per metric', () => {
    assert.equal(formatNs(12_345), '12.3 µs');
    assert.equal(formatNs(999), '999 ns');
    assert.equal(formatMetric('dma', 2048), '2.0 KiB');
    assert.equal(formatMetric('instr', 12_000), '12.0k');
  });
});
