import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HeatController } from '../../src/heat/controller';
import { LayerStore, compareLines } from '../../src/heat/layers';
import { type HeatmapParams, parseHeatLayer } from '../../src/heat/model';
import type { MeasuredVsEstimated } from '../../src/protocol.generated';
import { FakeEditor, FakeVsCode } from '../support/fakeVscode';
import { heatLine } from '../support/heatData';

const URI = 'file:///ws/kernel.py';
const OTHER = 'file:///ws/other.py';
const TEXT = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n');

const comparison: MeasuredVsEstimated = {
  measured: 'measured: Neuron Explorer profile run-42',
  estimated: 'estimated: k in kernel.py (not a measurement)',
  kernel: { measured_ns: 38_700, estimated_ns: 30_000, ratio: 30_000 / 38_700 },
  engines: {},
  lines: [
    {
      measured_ns: 9_000,
      estimated_ns: 4_000,
      ratio: 4 / 9,
      file: 'kernel.py',
      line: 5,
      line_measured: 5,
      line_estimated: 5,
      text: null,
    },
    {
      measured_ns: 1_000,
      estimated_ns: 3_000,
      ratio: 3,
      file: 'kernel.py',
      line: 11,
      line_measured: 11,
      line_estimated: 11,
      text: null,
    },
    {
      measured_ns: 500,
      estimated_ns: 0,
      ratio: 0,
      file: 'kernel.py',
      line: 2,
      line_measured: 2,
      line_estimated: null,
      text: null,
    },
  ],
  lines_matched_by: 'line numbers',
};

function measured(uri = URI): HeatmapParams {
  return {
    uri,
    source: 'measured',
    profile: { label: 'run-42', format: 'parquet' },
    lines: [heatLine(4, 38_700), heatLine(10, 5_000)],
  };
}

function estimate(uri = URI, extra: Partial<HeatmapParams> = {}): HeatmapParams {
  return { uri, source: 'estimate', profile: null, lines: [heatLine(4, 900), heatLine(12, 937)], ...extra };
}

describe('layer store', () => {
  it('keeps the measured layer when an estimate of the same file arrives', () => {
    const store = new LayerStore();
    store.apply(measured());
    store.announce({ uri: URI, layer: 'measured', available: ['measured'], label: 'Measured, from run-42' });
    store.apply(estimate());
    // the server said measured and still has it: an estimate adds a layer, it does not take the screen
    assert.equal(store.shown(URI)?.layer, 'measured');
    assert.equal(store.shown(URI)?.heat.lines[0].busy_ns, 38_700);
    assert.deepEqual(store.available(URI), ['measured']); // the server's list decides until it sends a new one
    store.announce({
      uri: URI,
      layer: 'measured',
      available: ['measured', 'estimate'],
      label: 'Measured, from run-42',
    });
    assert.deepEqual(store.available(URI), ['measured', 'estimate']);
    assert.equal(store.layer(URI, 'estimate')?.lines[1].busy_ns, 937);
  });

  it('shows the layer received last until the server says which, then the server’s', () => {
    const store = new LayerStore();
    store.apply(measured());
    assert.equal(store.shown(URI)?.layer, 'measured');
    store.apply(estimate());
    assert.equal(store.shown(URI)?.layer, 'estimate');
    store.announce({
      uri: URI,
      layer: 'measured',
      available: ['measured', 'estimate'],
      label: 'Measured, from run-42',
    });
    assert.equal(store.shown(URI)?.layer, 'measured');
    assert.equal(store.shown(URI)?.label, 'Measured, from run-42');
  });

  it('builds the compare layer from the server’s measured-vs-estimated rows, at the estimated lines', () => {
    const store = new LayerStore();
    store.apply(measured());
    store.apply(estimate(URI, { measured_vs_estimated: comparison }));
    store.announce({
      uri: URI,
      layer: 'compare',
      available: ['measured', 'estimate', 'compare'],
      label: 'Measured − estimated',
    });
    const shown = store.shown(URI);
    assert.equal(shown?.layer, 'compare');
    assert.deepEqual(
      shown?.heat.lines.map((l) => [l.line, l.time_ns]),
      [
        [4, 5_000],
        [10, 2_000],
      ],
    );
    assert.equal(shown?.ratio, 30_000 / 38_700);
    assert.equal(shown?.heat.params.measured_vs_estimated, comparison);
  });

  it('drops a layer whose heat is cleared, and the compare layer with it', () => {
    const store = new LayerStore();
    store.apply(measured());
    store.apply(estimate(URI, { measured_vs_estimated: comparison }));
    assert.ok(store.layer(URI, 'compare'));
    store.apply({ ...measured(), lines: [], findings: [] });
    assert.equal(store.layer(URI, 'measured'), undefined);
    assert.equal(store.layer(URI, 'compare'), undefined);
    store.announce({ uri: URI, layer: 'compare', available: ['estimate'], label: 'x' });
    assert.equal(store.shown(URI)?.layer, 'estimate', 'a layer the store no longer has is never shown');
  });

  it('skips compared lines the estimate does not have', () => {
    assert.deepEqual(
      compareLines(comparison).map((l) => l.line),
      [4, 10],
    );
  });
});

describe('nki/heatLayer payloads', () => {
  it('keeps known layers and refuses unknown ones with a message', () => {
    assert.deepEqual(parseHeatLayer({ uri: URI, layer: 'compare', available: ['measured', 'bogus'], label: 'x' }), {
      uri: URI,
      layer: 'compare',
      available: ['measured'],
      label: 'x',
    });
    const unknown = parseHeatLayer({ uri: URI, layer: 'other' });
    assert.ok(typeof unknown === 'string' && /unknown layer "other"/.test(unknown));
    const missing = parseHeatLayer(null);
    assert.ok(typeof missing === 'string' && /missing uri/.test(missing));
  });
});

describe('heat controller layers', () => {
  function setup(): { fake: FakeVsCode; heat: HeatController } {
    const fake = new FakeVsCode();
    const editor = new FakeEditor(URI, TEXT);
    fake.visibleTextEditors = [editor, new FakeEditor(OTHER, TEXT)];
    fake.activeTextEditor = editor;
    return { fake, heat: new HeatController(fake.api()) };
  }

  it('keeps bars, legend and layer item on the measured layer after another file is simulated', () => {
    const { fake, heat } = setup();
    heat.apply(measured());
    heat.applyLayer({ uri: URI, layer: 'measured', available: ['measured'], label: 'Measured, from run-42' });
    heat.apply(estimate(OTHER));
    heat.applyLayer({
      uri: OTHER,
      layer: 'estimate',
      available: ['estimate'],
      label: 'Estimated (simulator trace, not measured): k',
    });
    const [legend, layerItem] = fake.statusItems;
    assert.match(legend.text, /measured · run-42/);
    assert.doesNotMatch(legend.text, /estimated/);
    assert.match(layerItem.text, /Measured/);
    assert.match(String(layerItem.tooltip), /Measured, from run-42/);
    assert.equal(heat.heatOf(URI)?.params.source, 'measured');
    assert.equal(heat.heatOf(OTHER)?.params.source, 'estimate');
  });

  it('follows the server to the estimated layer and back, naming it', () => {
    const { fake, heat } = setup();
    heat.apply(measured());
    heat.apply(estimate());
    heat.applyLayer({
      uri: URI,
      layer: 'estimate',
      available: ['measured', 'estimate'],
      label: 'Estimated (simulator trace, not measured): k',
    });
    const [legend, layerItem] = fake.statusItems;
    assert.match(legend.text, /estimated/);
    assert.match(layerItem.text, /Estimated \$\(chevron-down\)/);
    assert.deepEqual(heat.layerOf(URI).available, ['measured', 'estimate']);
    heat.applyLayer({
      uri: URI,
      layer: 'measured',
      available: ['measured', 'estimate'],
      label: 'Measured, from run-42',
    });
    assert.match(legend.text, /measured · run-42/);
  });

  it('colours by the kernel’s bottleneck by default: a DMA-bound kernel by the DMA its lines issue', () => {
    const { fake, heat } = setup();
    heat.apply(
      estimate(URI, {
        default_metric: 'dma_time',
        lines: [heatLine(3, 5_000, { dma_ns: 0 }), heatLine(7, 0, { dma_ns: 6_000 })],
      }),
    );
    assert.equal(heat.currentMetric, 'auto');
    assert.match(fake.statusItems[0].text, /DMA time issued/);
    assert.equal(heat.nextHottestLine(), 7, 'the dma_copy line is the hottest');
  });

  it('walks the hottest lines in the server’s order when the payload ranks them', () => {
    const { heat } = setup();
    heat.apply(
      estimate(URI, {
        default_metric: 'dma_time',
        lines: [
          heatLine(3, 5_000, { rank: 3 }),
          heatLine(7, 0, { dma_ns: 6_000, rank: 2 }),
          heatLine(9, 0, { rank: 1 }),
        ],
      }),
    );
    assert.deepEqual([heat.nextHottestLine(), heat.nextHottestLine(), heat.nextHottestLine()], [9, 7, 3]);
  });
});
