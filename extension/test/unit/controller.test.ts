import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BUCKETS } from '../../src/heat/buckets';
import { HeatController } from '../../src/heat/controller';
import type { HeatmapParams } from '../../src/heat/model';
import { FakeEditor, FakePosition, FakeSelection, FakeVsCode } from '../support/fakeVscode';
import { heatLine } from '../support/heatData';

const URI = 'file:///ws/kernel.py';
const TEXT = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n');

function setup(): { fake: FakeVsCode; editor: FakeEditor; heat: HeatController } {
  const fake = new FakeVsCode();
  const editor = new FakeEditor(URI, TEXT);
  fake.visibleTextEditors = [editor];
  fake.activeTextEditor = editor;
  const heat = new HeatController(fake.api());
  return { fake, editor, heat };
}

const params = (source: 'measured' | 'estimate' = 'measured'): HeatmapParams => ({
  uri: URI,
  source,
  profile:
    source === 'measured'
      ? {
          label: 'run-42',
          format: 'parquet',
          mapping: { recorded: '/home/ubuntu/kernel.py', local: '/ws/kernel.py', how: 'basename' },
        }
      : null,
  lines: [heatLine(4, 10_000), heatLine(10, 5_000), heatLine(20, 100)],
});

/** Decoration types by role: the painter creates fresh backgrounds, stale backgrounds, the bar, the blank bar. */
function hotLines(fake: FakeVsCode, editor: FakeEditor, stale = false): number[] {
  const types = fake.decorationTypes.slice(stale ? 7 : 0, stale ? 14 : 7);
  return types.flatMap((t) => editor.linesOf(t)).sort((a, b) => a - b);
}

describe('heat controller with a vscode test double', () => {
  it('creates a fixed set of decoration types, not one per line', () => {
    const { fake, heat } = setup();
    heat.apply(params());
    heat.apply({ ...params(), lines: Array.from({ length: 25 }, (_, i) => heatLine(i, i + 1)) });
    assert.equal(fake.decorationTypes.length, 3 * BUCKETS + 3); // backgrounds fresh/stale, gutter marks; 3 texts
  });

  it('paints the hot lines with whole-line backgrounds, bars and overview-ruler marks', () => {
    const { fake, editor, heat } = setup();
    fake.config.set('heatmap.style', 'bars');
    heat.apply(params());
    assert.deepEqual(hotLines(fake, editor), [4, 10, 20]);
    const hottest = fake.decorationTypes[6];
    assert.deepEqual(editor.linesOf(hottest), [4]);
    assert.equal(hottest.options.isWholeLine, true);
    assert.ok(hottest.options.overviewRulerColor);
    assert.match(
      String((hottest.options.light as { backgroundColor?: string } | undefined)?.backgroundColor),
      /^rgba\(128, 0, 38, /,
    );
    type Attachment = { before?: { contentText?: string; color?: string } };
    const bars = editor.decorations.get(fake.decorationTypes[14]) as {
      range: { start: { line: number } };
      renderOptions?: Attachment & { light?: Attachment };
    }[];
    assert.deepEqual(
      bars.map((b) => b.range.start.line),
      [4, 10, 20],
    );
    assert.match(bars[0].renderOptions?.before?.contentText ?? '', /10\.0\u00a0µs/);
    assert.match(bars[0].renderOptions?.before?.color ?? '', /^rgba\(177, 0, 38, 1/);
    assert.match(bars[0].renderOptions?.light?.before?.color ?? '', /^rgba\(128, 0, 38, 1/); // darker on light themes
    // every other line gets the blank bar
    assert.equal(editor.linesOf(fake.decorationTypes[15]).length, 30 - 3);
  });

  it('by default marks the gutter of every line with heat and writes the value after the hottest lines only', () => {
    const { fake, editor, heat } = setup();
    heat.apply(params()); // lines 4 (hottest), 10 (half of it), 20 (1 %)
    const gutter = fake.decorationTypes.slice(16, 16 + BUCKETS);
    assert.deepEqual(
      gutter.flatMap((t) => editor.linesOf(t)).sort((a, b) => a - b),
      [4, 10, 20],
    );
    assert.deepEqual(editor.linesOf(gutter[BUCKETS - 1]), [4]);
    assert.match(String(gutter[0].options.gutterIconPath), /^data:image\/svg\+xml/);
    type After = { after?: { contentText?: string } };
    const values = editor.decorations.get(fake.decorationTypes[16 + BUCKETS]) as {
      range: { start: { line: number } };
      renderOptions?: After;
    }[];
    assert.deepEqual(
      values.map((v) => [v.range.start.line, v.renderOptions?.after?.contentText]),
      [[4, '10.0 µs']],
    );
    // no bar and no padding: the code keeps its columns
    assert.deepEqual(editor.linesOf(fake.decorationTypes[14]), []);
    assert.deepEqual(editor.linesOf(fake.decorationTypes[15]), []);
  });

  it('paints adjacent lines of one bucket as one range', () => {
    const { fake, editor, heat } = setup();
    heat.apply({ ...params(), lines: [heatLine(5, 100), heatLine(6, 100), heatLine(7, 100), heatLine(9, 100)] });
    const ranges = editor.decorations.get(fake.decorationTypes[6]) as {
      start: { line: number };
      end: { line: number };
    }[];
    assert.deepEqual(
      ranges.map((r) => [r.start.line, r.end.line]),
      [
        [5, 7],
        [9, 9],
      ],
    );
  });

  it('paints bars only around the visible lines, and follows scrolling', () => {
    const fake = new FakeVsCode();
    fake.config.set('heatmap.style', 'bars');
    const editor = new FakeEditor(URI, Array.from({ length: 2000 }, (_, i) => `line ${i}`).join('\n'));
    fake.visibleTextEditors = [editor];
    const heat = new HeatController(fake.api());
    heat.apply({ ...params(), lines: Array.from({ length: 1000 }, (_, i) => heatLine(i * 2, 1 + (i % 7))) });
    // backgrounds cover the whole file, bars the screen (lines 0-39) and one screen below
    assert.equal(hotLines(fake, editor).length, 1000);
    const bars = (): number[] =>
      [...editor.linesOf(fake.decorationTypes[14]), ...editor.linesOf(fake.decorationTypes[15])].sort((a, b) => a - b);
    assert.deepEqual(
      bars(),
      Array.from({ length: 80 }, (_, i) => i),
    );
    fake.scroll(editor, 10, 49); // still well inside the painted window: nothing repainted
    assert.deepEqual(
      bars(),
      Array.from({ length: 80 }, (_, i) => i),
    );
    fake.scroll(editor, 1000, 1039);
    assert.deepEqual(
      bars(),
      Array.from({ length: 120 }, (_, i) => 960 + i),
    );
    assert.equal(hotLines(fake, editor).length, 1000);
  });

  it('shows the source in the legend: measured with the profile name, or estimated', () => {
    const { fake, heat } = setup();
    heat.apply(params('measured'));
    const legend = fake.statusItems[0];
    assert.ok(legend.visible);
    assert.match(legend.text, /measured · run-42/);
    assert.match(
      String((legend.tooltip as { value: string }).value),
      /home\/ubuntu\/kernel\.py` → `\/ws\/kernel\.py` \(basename\)/,
    );
    heat.apply(params('estimate'));
    assert.match(legend.text, /estimated/);
    assert.doesNotMatch(legend.text, /measured/);
  });

  it('shifts heat with edits and repaints it as stale', () => {
    const { fake, editor, heat } = setup();
    heat.apply(params());
    fake.edit(editor, 0, 0, 0, 0, 'import os\n');
    assert.deepEqual(hotLines(fake, editor, true), [5, 11, 21]);
    assert.deepEqual(hotLines(fake, editor, false), []);
    assert.match(fake.statusItems[0].text, /stale/);
    assert.equal(heat.heatOf(URI)?.stale, true);
  });

  it("takes the server's stale flag and clears on an empty payload", () => {
    const { fake, editor, heat } = setup();
    heat.apply({ ...params(), stale: true });
    assert.deepEqual(hotLines(fake, editor, true), [4, 10, 20]);
    heat.apply({ ...params(), lines: [] });
    assert.deepEqual(hotLines(fake, editor, true), []);
    assert.equal(heat.heatOf(URI), undefined);
  });

  it('re-applies decorations when an editor becomes visible', () => {
    const { fake, heat } = setup();
    heat.apply(params());
    const second = new FakeEditor(URI, TEXT);
    fake.visibleTextEditors = [second];
    fake.visibleEditorsChanged.fire([second]);
    assert.deepEqual(hotLines(fake, second), [4, 10, 20]);
  });

  it('jumps to the next hottest line', () => {
    const { editor, heat } = setup();
    heat.apply(params());
    assert.equal(heat.nextHottestLine(), 4);
    assert.equal(editor.selection.active.line, 4);
    assert.equal(heat.nextHottestLine(), 10);
    assert.equal(editor.revealed.length, 2);
  });

  it('starts the walk at the hottest line wherever the cursor is, and says n of N', () => {
    const { fake, editor, heat } = setup();
    heat.apply(params()); // ranked: 4, 10, 20
    const cursorAt = (line: number) => {
      editor.selection = new FakeSelection(new FakePosition(line, 0), new FakePosition(line, 0));
    };
    cursorAt(10); // on the second hottest line
    assert.equal(heat.nextHottestLine(), 4);
    assert.match(fake.statusMessages.at(-1) ?? '', /hottest line 1 of 3 \(line 5 · 10\.0 µs\)/);
    assert.equal(heat.nextHottestLine(), 10);
    assert.match(fake.statusMessages.at(-1) ?? '', /hottest line 2 of 3/);
    cursorAt(20); // the user moved: a new walk
    assert.equal(heat.nextHottestLine(), 4);
  });

  it('repaints by another metric when the setting changes', () => {
    const { fake, editor, heat } = setup();
    heat.apply({ ...params(), lines: [heatLine(4, 10_000), heatLine(10, 5_000, { dma_bytes: 1 << 20 })] });
    fake.config.set('heatmapMetric', 'dma');
    fake.configurationChanged.fire({ affectsConfiguration: (s: string) => s === 'nki-studio.heatmapMetric' });
    assert.deepEqual(hotLines(fake, editor), [10]);
    assert.equal(heat.currentMetric, 'dma');
  });

  it('clears everything', () => {
    const { fake, editor, heat } = setup();
    heat.apply(params());
    heat.clear();
    assert.deepEqual(hotLines(fake, editor), []);
    assert.equal(fake.statusItems[0].visible, false);
    assert.deepEqual(fake.executed.at(-1), ['setContext', 'nki-studio.heatmapActive', false]);
  });
});
