import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HeatController } from '../../src/heat/controller';
import type { HeatmapParams } from '../../src/heat/model';
import { FakeEditor, FakeVsCode } from '../support/fakeVscode';
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
  profile: source === 'measured' ? { label: 'run-42', format: 'parquet', mapping: { recorded: '/home/ubuntu/kernel.py', local: '/ws/kernel.py', how: 'basename' } } : null,
  lines: [heatLine(4, 10_000), heatLine(10, 5_000), heatLine(20, 100)],
});

/** Decoration types by role: the painter creates fresh buckets, stale buckets, then the blank bar. */
function hotLines(fake: FakeVsCode, editor: FakeEditor, stale = false): number[] {
  const types = fake.decorationTypes.slice(stale ? 7 : 0, stale ? 14 : 7);
  return types.flatMap((t) => editor.linesOf(t)).sort((a, b) => a - b);
}

describe('heat controller with a vscode test double', () => {
  it('creates a fixed set of decoration types, not one per line', () => {
    const { fake, heat } = setup();
    heat.apply(params());
    heat.apply({ ...params(), lines: Array.from({ length: 25 }, (_, i) => heatLine(i, i + 1)) });
    assert.equal(fake.decorationTypes.length, 15);
  });

  it('paints the hot lines with whole-line backgrounds, bars and overview-ruler marks', () => {
    const { fake, editor, heat } = setup();
    heat.apply(params());
    assert.deepEqual(hotLines(fake, editor), [4, 10, 20]);
    const hottest = fake.decorationTypes[6];
    assert.deepEqual(editor.linesOf(hottest), [4]);
    assert.equal(hottest.options.isWholeLine, true);
    assert.ok(hottest.options.overviewRulerColor);
    const opts = editor.decorations.get(hottest)?.[0] as { renderOptions?: { before?: { contentText?: string } } };
    assert.match(opts.renderOptions?.before?.contentText ?? '', /10\.0\u00a0µs/);
    // every other line gets the blank bar
    assert.equal(editor.linesOf(fake.decorationTypes[14]).length, 30 - 3);
  });

  it('shows the source in the legend: measured with the profile name, or estimated', () => {
    const { fake, heat } = setup();
    heat.apply(params('measured'));
    const legend = fake.statusItems[0];
    assert.ok(legend.visible);
    assert.match(legend.text, /measured · run-42/);
    assert.match(String((legend.tooltip as { value: string }).value), /home\/ubuntu\/kernel\.py` → `\/ws\/kernel\.py` \(basename\)/);
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

  it('takes the server\'s stale flag and clears on an empty payload', () => {
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
