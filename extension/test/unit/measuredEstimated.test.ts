import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseHeatmap } from '../../src/heat/model';
import { measuredVsEstimatedSection } from '../../src/panel/measuredEstimated';
import { renderPanel } from '../../src/panel/render';
import type { MeasuredVsEstimated } from '../../src/protocol.generated';
import { heatLine } from '../support/heatData';

const cmp: MeasuredVsEstimated = {
  measured: 'measured: Neuron Explorer profile prof_parquet',
  estimated: 'estimated: kernel in k.py, simulated and scheduled by nki-studio (not a measurement)',
  kernel: { measured_ns: 2000, estimated_ns: 1000, ratio: 0.5 },
  engines: {
    Vector: { measured_ns: 1500, estimated_ns: 1800, ratio: 1.2 },
    Sync: { measured_ns: 0, estimated_ns: 40, ratio: null },
  },
  lines: [
    {
      file: 'k.py',
      line: 14,
      line_measured: 12,
      line_estimated: 14,
      measured_ns: 900,
      estimated_ns: 300,
      ratio: 1 / 3,
      text: null,
    },
    {
      file: 'k.py',
      line: 9,
      line_measured: 9,
      line_estimated: null,
      measured_ns: 200,
      estimated_ns: 0,
      ratio: 0,
      text: null,
    },
    {
      file: 'k.py',
      line: 7,
      line_measured: null,
      line_estimated: 7,
      measured_ns: 0,
      estimated_ns: 100,
      ratio: null,
      text: null,
    },
  ],
  lines_matched_by: 'source text (lines aligned across the edit)',
};

describe('measured vs estimated', () => {
  it("shows the server's kernel, engine and line ratios, each side labelled", () => {
    const html = measuredVsEstimatedSection(cmp);
    assert.match(html, /<h2>Measured vs estimated<\/h2>/);
    assert.ok(html.includes(cmp.measured) && html.includes(cmp.estimated));
    assert.match(html, /<td>kernel latency<\/td><td>2\.0 µs<\/td><td>1\.0 µs<\/td><td>0\.50×<\/td>/);
    assert.match(html, /<td>Vector<\/td><td>1\.5 µs<\/td><td>1\.8 µs<\/td><td>1\.20×<\/td>/);
    assert.match(html, /<td>Sync<\/td><td>0 ns<\/td><td>40 ns<\/td><td>–<\/td>/);
    assert.match(html, /<td>12 → 14<\/td><td>900 ns<\/td><td>300 ns<\/td><td>0\.33×<\/td>/);
    assert.match(html, /<td>9 \(profile only\)<\/td>/);
    assert.match(html, /<td>7 \(estimate only\)<\/td>/);
    assert.match(html, /lines aligned across the edit/);
    assert.equal(measuredVsEstimatedSection(undefined), '');
  });

  it('appears in the panel only when the heat payload carries the comparison', () => {
    const params = { uri: 'u', source: 'estimate' as const, lines: [heatLine(3, 400)], kernel: {} };
    assert.doesNotMatch(renderPanel({ heat: { stale: false, params } }, 'n', 'x'), /Measured vs estimated/);
    const both = renderPanel({ heat: { stale: false, params: { ...params, measured_vs_estimated: cmp } } }, 'n', 'x');
    assert.match(both, /Measured vs estimated/);
  });

  it('is kept from the notification when well formed, dropped when not', () => {
    const raw = { uri: 'u', source: 'measured', lines: [], measured_vs_estimated: cmp };
    const parsed = parseHeatmap(raw);
    assert.ok(typeof parsed !== 'string');
    assert.deepEqual(parsed.measured_vs_estimated, cmp);
    const broken = parseHeatmap({ ...raw, measured_vs_estimated: { ...cmp, lines: 'none' } });
    assert.ok(typeof broken !== 'string' && !('measured_vs_estimated' in broken));
  });
});
