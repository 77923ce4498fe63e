/**
 * Layout of the kernel panel's SVG charts: no two text boxes intersect and nothing is drawn outside the viewBox.
 * Text boxes use the estimated widths of src/panel/textWidth.ts (its per-character table, in em) and a
 * 0.8 em ascent / 0.25 em descent; the data is the kind that overlapped or was cut before (long values in the
 * DMA-vs-compute legend, long bound names and "value · gap · speedup" texts at the waterfall's right edge).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decompositionBar } from '../../src/panel/charts';
import { renderPanel } from '../../src/panel/render';
import { LABEL_PX, SMALL_PX, textWidth } from '../../src/panel/textWidth';
import { parseSimulationResult } from '../../src/simulationSummary';
import { heatLine } from '../support/heatData';

interface Box {
  text: string;
  x0: number;
  x1: number;
  y0: number;
  y1: number;
}

function attr(tag: string, name: string): string | undefined {
  return new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1];
}

function unescape(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

/** Every `<svg>…</svg>` of `html`, with its viewBox, text boxes and rectangles. */
function charts(html: string): { label: string; view: number[]; texts: Box[]; rects: Box[] }[] {
  return [...html.matchAll(/<svg[^>]*>[\s\S]*?<\/svg>/g)].map(([svg]) => {
    const open = /<svg[^>]*>/.exec(svg)?.[0] ?? '';
    const view = (attr(open, 'viewBox') ?? '').split(' ').map(Number);
    const texts = [...svg.matchAll(/<text([^>]*)>([^<]*)<\/text>/g)].map(([, tag, body]) => {
      const text = unescape(body);
      const px = /class="small"/.test(tag) ? SMALL_PX : LABEL_PX;
      const w = textWidth(text, px);
      const x = Number(attr(tag, 'x'));
      const y = Number(attr(tag, 'y'));
      const anchor = attr(tag, 'text-anchor') ?? 'start';
      const x0 = anchor === 'end' ? x - w : anchor === 'middle' ? x - w / 2 : x;
      return { text, x0, x1: x0 + w, y0: y - 0.8 * px, y1: y + 0.25 * px, rotated: /transform=/.test(tag) };
    });
    const rects = [...svg.matchAll(/<rect([^>]*)\/?>/g)].map(([, tag]) => {
      const x = Number(attr(tag, 'x'));
      const y = Number(attr(tag, 'y'));
      return {
        text: `rect ${tag}`,
        x0: x,
        x1: x + Number(attr(tag, 'width')),
        y0: y,
        y1: y + Number(attr(tag, 'height')),
      };
    });
    // A rotated label (the roofline's y-axis title, drawn vertically along the left edge) has no horizontal box: left out.
    return { label: attr(open, 'aria-label') ?? '?', view, texts: texts.filter((t) => !t.rotated), rects };
  });
}

function overlaps(a: Box, b: Box): boolean {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

function assertLaidOut(html: string, expected: readonly string[]): void {
  const found = charts(html);
  assert.deepEqual(
    found.map((c) => c.label),
    expected,
  );
  for (const chart of found) {
    assert.equal(chart.view.length, 4, `${chart.label}: has a viewBox`);
    const [vx, vy, vw, vh] = chart.view;
    for (const box of [...chart.texts, ...chart.rects]) {
      const inside = box.x0 >= vx - 0.05 && box.x1 <= vx + vw + 0.05 && box.y0 >= vy - 0.05 && box.y1 <= vy + vh + 0.05;
      assert.ok(
        inside,
        `${chart.label}: "${box.text}" [${box.x0}, ${box.x1}] x [${box.y0}, ${box.y1}] leaves 0 0 ${vw} ${vh}`,
      );
    }
    chart.texts.forEach((a, i) =>
      chart.texts
        .slice(i + 1)
        .forEach((b) => assert.ok(!overlaps(a, b), `${chart.label}: "${a.text}" overlaps "${b.text}"`)),
    );
  }
}

const BOUNDS = {
  total_ns: 193_123,
  bottleneck: 'DMA',
  families: [
    {
      name: 'memory (DMA queues and HBM)',
      bounds: [
        { name: 'memory_bound', ns: 180_456, gap_means: 'DMA idle time', speedup: 1.07 },
        { name: 'memory_bound_ideal', ns: 91_234, gap_means: 'DMA inefficiency', speedup: 2.12 },
        { name: 'memory_bound_ideal_no_reloads', ns: 88_001, gap_means: 'reloads', speedup: 2.19 },
        { name: 'memory_bound_with_a_much_longer_name_than_usual', ns: null, gap_means: '', speedup: null },
      ],
    },
    { name: 'compute', bounds: [{ name: 'compute_bound', ns: 7_530, gap_means: 'engine idle', speedup: 25.6 }] },
  ],
};

function measuredPanel(latency: number, dma: number, compute: number, overlap: number): string {
  return renderPanel(
    {
      simulation: parseSimulationResult({
        status: 'passed',
        message: 'k matches the reference',
        kernel: 'k',
        peak: {
          sbuf: { capacityBytes: 196_608, peakBytes: 205_621, live: [] },
          psum: { capacityBytes: 16_384, peakBytes: 2_048, live: [] },
        },
      }),
      heat: {
        stale: false,
        params: {
          uri: 'file:///k.py',
          source: 'measured',
          profile: { label: 'run-42' },
          lines: [heatLine(3, 100)],
          kernel: {
            latency_ns: latency,
            dma_union_ns: dma,
            compute_union_ns: compute,
            intersection_ns: overlap,
            engines: { Vector: compute / 2, 'qSyncIO0 (DMA queue, ring 0)': dma, Tensor: compute / 3 },
            bounds: BOUNDS,
            roofline: { intensity: 0.75, achieved_tflops: 0.01, peak_tflops: 90, ceiling_gbps: 435, bound: 'memory' },
          },
        },
      },
    },
    'n',
    'x',
  );
}

describe('SVG layout of the kernel panel', () => {
  it('keeps every label inside its chart and apart from the others, for long and for tiny values', () => {
    const charts = [
      'peak on-chip memory per partition',
      'kernel time decomposition',
      'engine timeline',
      'roofline',
      'bounds waterfall',
    ];
    assertLaidOut(measuredPanel(193_123, 5_900, 7_500, 300), charts); // the "193[1 µs]dle"
    assertLaidOut(measuredPanel(1.5, 0.7, 0.9, 0.2), charts);
    assertLaidOut(measuredPanel(12_345_678_901, 9_876_543_210, 8_765_432_109, 7_654_321_098), charts);
  });

  it('wraps the legend instead of overlapping when the entries do not fit one row', () => {
    const long = [
      { label: 'DMA only', ns: 123_456_789, cls: 'dma' },
      { label: 'DMA under compute', ns: 98_765_432, cls: 'overlap' },
      { label: 'compute only', ns: 87_654_321, cls: 'compute' },
      { label: 'idle', ns: 193_123_456, cls: 'idle' },
    ];
    const svg = decompositionBar(long, 500_000_000);
    assert.ok(charts(svg)[0].view[3] > 42, 'a second legend row');
    assertLaidOut(svg, ['kernel time decomposition']);
  });

  it('estimates wide text wider than narrow text of the same length', () => {
    assert.ok(textWidth('MMMM', LABEL_PX) > textWidth('mmmm', LABEL_PX));
    assert.ok(textWidth('mmmm', LABEL_PX) > textWidth('iiii', LABEL_PX));
    assert.equal(textWidth('', LABEL_PX), 0);
  });
});
