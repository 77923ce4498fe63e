import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { legendText } from '../../src/heat/legend';
import { peakBars, renderPanel } from '../../src/panel/render';
import { profileLoadSummary } from '../../src/profileSummary';
import { describeFailure, isCancellation, isUnknownCommand } from '../../src/serverErrors';
import { parseSimulationResult, severityOf, summaryLine } from '../../src/simulationSummary';
import { statusText } from '../../src/statusItem';
import { heatLine } from '../support/heatData';

/** The panel of an estimate's heat whose payload carries `kernel`. */
function estimatePanel(kernel: Record<string, unknown>): string {
  return renderPanel(
    { heat: { stale: false, params: { uri: 'u', source: 'estimate', lines: [heatLine(1, 10)], kernel } } },
    'n',
    'x',
  );
}

describe('legend', () => {
  it('labels estimates and stale data, and names the profile of measured data', () => {
    assert.match(legendText('busy time', 'estimate', null, false), /estimated/);
    assert.match(legendText('busy time', 'measured', 'p1', true), /measured · p1 · stale/);
  });
});

describe('simulation results', () => {
  const raw = {
    status: 'failed',
    message: 'add: oracle failed: out allclose',
    backend: 'embedded',
    kernel: 'add',
    timings: { inputs: 0.1, simulation: 1.0, oracle: 0.05 },
    oracle: {
      hasReference: true,
      passed: false,
      problems: [],
      inputs: [{ name: 'inputs unchanged', value: true, threshold: 'bitwise', passed: true }],
      outputs: [
        {
          name: 'out',
          shape: [128, 512],
          dtype: 'float32',
          nan_count: 0,
          inf_count: 0,
          metrics: [{ name: 'allclose', value: 0.3, threshold: 'atol 1e-5', passed: false }],
          notes: [],
        },
      ],
    },
    peak: {
      sbuf: {
        peakBytes: 150 * 1024,
        capacityBytes: 192 * 1024,
        live: [
          { name: 'x_tile', shape: [128, 512], dtype: 'float32', bytesPerPartition: 2048, file: '/k.py', line: 12 },
        ],
      },
      psum: { peakBytes: 4096, capacityBytes: 16384, live: [] },
    },
    warnings: ['w1'],
  };

  it('parses tolerantly and summarises in one line', () => {
    const r = parseSimulationResult(raw);
    assert.equal(
      summaryLine(r),
      'add: failed — add: oracle failed: out allclose · embedded backend · 1.15 s · 1 warning',
    );
    assert.equal(parseSimulationResult('garbage').status, 'unknown');
    const wrapped = parseSimulationResult({ uri: 'file:///k.py', kernel: 'add', result: raw });
    assert.equal(wrapped.status, 'failed');
    assert.equal(wrapped.uri, 'file:///k.py');
    assert.deepEqual(parseSimulationResult({ status: 'passed', warnings: [1, 'x'] }).warnings, ['x']);
  });

  it('reads peak memory against capacity', () => {
    assert.deepEqual(peakBars(raw.peak), [
      { name: 'SBUF', used: 150 * 1024, capacity: 192 * 1024 },
      { name: 'PSUM', used: 4096, capacity: 16384 },
    ]);
  });

  it('renders the panel with a locked-down CSP, escaped text and SVG charts', () => {
    const html = renderPanel(
      {
        simulation: parseSimulationResult({ ...raw, message: '<script>alert(1)</script>' }),
        heat: {
          stale: false,
          params: {
            uri: 'file:///k.py',
            source: 'estimate',
            lines: [heatLine(3, 100)],
            kernel: {
              latency_ns: 1000,
              dma_union_ns: 600,
              compute_union_ns: 700,
              intersection_ns: 400,
              engines: { Vector: 500, Tensor: 300 },
              roofline: { intensity: 2, achieved_tflops: 0.5, peak_tflops: 90, ceiling_gbps: 368, bound: 'memory' },
            },
          },
        },
      },
      'NONCE',
      'vscode-resource:',
    );
    assert.match(html, /default-src 'none'/);
    assert.match(html, /script-src 'none'/);
    assert.match(html, /connect-src 'none'/);
    assert.doesNotMatch(html, /https?:\/\//);
    assert.doesNotMatch(html, /<script>alert/);
    assert.match(html, /&lt;script&gt;/);
    assert.match(html, /<style nonce="NONCE">/);
    assert.match(html, /aria-label="peak on-chip memory per partition"/);
    assert.match(html, /x_tile<\/td><td>float32\[128, 512\]/);
    assert.match(html, /aria-label="kernel time decomposition"/);
    assert.match(html, /aria-label="engine timeline"/);
    assert.match(html, /aria-label="roofline"/);
    assert.match(html, /<strong>estimated<\/strong>/);
    assert.match(html, /✘ fail/);
    assert.match(html, /var\(--vscode-/);
  });

  it("reads the estimate's engine times and draws its roofline point, labelled estimated", () => {
    const html = estimatePanel({
      latency_ns: 100,
      engine_ns: { vector: 80 },
      roofline: {
        intensity: 0.25,
        achieved_tflops: 0.01,
        peak_tflops: 79,
        ceiling_gbps: 368,
        bound: 'memory',
        flops_source: 'simulator trace (estimated FLOPs)',
      },
    });
    assert.match(html, />vector</);
    assert.match(html, /memory-bound \(estimated\) · FLOPs: simulator trace \(estimated FLOPs\)/);
    assert.match(html, /aria-label="roofline"/);
  });

  it("states the estimate's likely range with its calibration, or that there is none", () => {
    const panel = (latency_range: unknown): string => estimatePanel({ latency_ns: 170_000, latency_range });
    const range = {
      lowNs: 140_000,
      highNs: 210_000,
      points: 5,
      generation: 'trn2',
      kernelClass: 'all',
      source: 'calibration suite',
    };
    assert.match(
      panel(range),
      /likely 140\.0 µs–210\.0 µs \(estimate’s likely range: 10th–90th percentile of measured\/estimated over 5 public measurements, trn2, all kernel classes; calibration suite\)/,
    );
    assert.match(panel({ ...range, kernelClass: 'memory' }), /memory-bound kernels/);
    assert.match(panel(null), /no calibration for this generation/);
  });

  it('says the kernel latency in plain words, what it was taken from on a detail line below', () => {
    const html = estimatePanel({ latency_ns: 218_666, latency_source: 'Summary.total_exec_time' });
    assert.match(html, /<p>Kernel latency 218\.7 µs<\/p>/);
    assert.match(html, /<p class="muted detail">kernel time: Summary\.total_exec_time<\/p>/);
    assert.doesNotMatch(estimatePanel({ latency_ns: 1000 }), /kernel time:/);
  });

  it('states what is known of a measured roofline point without FLOPs, in the same section', () => {
    const html = renderPanel(
      {
        heat: {
          stale: false,
          params: {
            uri: 'u',
            source: 'measured',
            lines: [heatLine(1, 10)],
            kernel: {
              latency_ns: 100,
              roofline: {
                intensity: null,
                achieved_tflops: null,
                peak_tflops: 79,
                ceiling_gbps: 368,
                bound: 'unknown',
              },
            },
          },
        },
      },
      'n',
      'x',
    );
    assert.match(html, /Roofline <span class="muted">unknown-bound<\/span>/);
    assert.match(html, /no FLOP count or no HBM bytes/);
    assert.doesNotMatch(html, /aria-label="roofline"/);
  });

  it("draws the measured engine timeline from the server's intervals, on the kernel's time axis", () => {
    const timeline = [
      {
        name: 'DMA',
        kind: 'dma',
        intervals: [
          [0, 250],
          [500, 750],
        ],
      },
      { name: 'Tensor', kind: 'compute', intervals: [[250, 500]] },
    ];
    const html = renderPanel(
      {
        heat: {
          stale: false,
          params: { uri: 'u', source: 'measured', lines: [heatLine(1, 10)], kernel: { latency_ns: 1000, timeline } },
        },
      },
      'n',
      'x',
    );
    assert.match(html, /<h3>Engine timeline<\/h3>/);
    const rects = [
      ...html.matchAll(/<rect x="([\d.]+)" y="\d+" width="([\d.]+)" height="\d+" class="(dma|compute)"\/>/g),
    ].map((m) => [m[3], Number(m[1]), Number(m[2])]);
    // 330 px of plot after a 90 px label column: 250 ns of 1000 is 82.5 px
    assert.deepEqual(rects, [
      ['dma', 90, 82.5],
      ['dma', 255, 82.5],
      ['compute', 172.5, 82.5],
    ]);
  });

  it("draws an estimate's per-execution fixed cost as its own track, named as estimated", () => {
    const timeline = [
      {
        name: 'kernel start/end (estimated)',
        kind: 'fixed',
        intervals: [
          [0, 100],
          [900, 1000],
        ],
      },
      { name: 'Tensor', kind: 'compute', intervals: [[100, 900]] },
    ];
    const html = renderPanel(
      {
        heat: {
          stale: false,
          params: { uri: 'u', source: 'estimate', lines: [heatLine(1, 10)], kernel: { latency_ns: 1000, timeline } },
        },
      },
      'n',
      'x',
    );
    assert.match(html, /kernel start\/end \(estimated\)/);
    const kinds = [
      ...html.matchAll(/<rect x="[\d.]+" y="\d+" width="[\d.]+" height="\d+" class="(dma|compute|fixed)"\/>/g),
    ].map((m) => m[1]);
    assert.deepEqual(kinds, ['fixed', 'fixed', 'compute']);
    assert.match(html, /svg \.fixed \{/);
  });

  it('offers "Calibrate from this profile" under a measured profile, and an estimate says its calibration', () => {
    const measured = renderPanel(
      {
        heat: {
          stale: false,
          params: { uri: 'u', source: 'measured', lines: [heatLine(1, 10)], profile: { path: '/p/prof dir' } },
        },
      },
      'n',
      'x',
    );
    const link = `command:nki-studio.calibrateFromProfile?${encodeURIComponent(JSON.stringify(['/p/prof dir']))}`;
    assert.ok(measured.includes(`<a href="${link}">Calibrate from this profile</a>`));
    const calibration = { status: 'applied', file: 'c.json', message: 'calibrated on 5 of your profiles', profiles: 5 };
    const estimated = renderPanel(
      {
        heat: {
          stale: false,
          params: { uri: 'u', source: 'estimate', lines: [heatLine(1, 10)], kernel: { latency_ns: 900, calibration } },
        },
      },
      'n',
      'x',
    );
    assert.doesNotMatch(estimated, /Calibrate from this profile/);
    assert.match(estimated, /<p>calibrated on 5 of your profiles<\/p>/);
  });

  it('draws the bounds waterfall and lists the findings with links that jump to their line', () => {
    const bounds = {
      total_ns: 1000,
      bottleneck: 'DMA',
      notes: ['no TensorInfo'],
      families: [
        {
          name: 'memory',
          bounds: [
            { name: 'memory_bound', ns: 800, gap_means: 'DMA idle time', speedup: 1.25 },
            { name: 'memory_bound_ideal', ns: 400, gap_means: 'DMA inefficiency', speedup: 2 },
            { name: 'memory_bound_ideal_no_reloads', ns: null, gap_means: 'reloads', speedup: null },
          ],
        },
      ],
    };
    const investigations = [
      { kind: 'dma-efficiency', title: 'DMA efficiency', status: 'found', summary: '100% linked' },
      { kind: 'transposes', title: 'Transposes', status: 'nothing found', summary: 'no transposes' },
    ];
    const findings = [{ line: 12, code: 'NKI701', kind: 'dma-efficiency', message: 'descriptors of 1 KiB <b>' }];
    const html = renderPanel(
      {
        heat: {
          stale: false,
          params: {
            uri: 'file:///k.py',
            source: 'estimate',
            lines: [heatLine(12, 10)],
            kernel: { latency_ns: 1000, bounds, investigations },
            findings,
          },
        },
      },
      'n',
      'x',
    );
    assert.match(html, /aria-label="bounds waterfall"/);
    assert.match(html, /bottleneck DMA · estimated/);
    // 250 px of plot for 1000 ns: memory_bound 200 px, its gap 50 px; the ideal 100 px with a 100 px gap
    const bars = [
      ...html.matchAll(/<rect x="([\d.]+)" y="\d+" width="([\d.]+)" height="\d+" class="(total|bound|gap)">/g),
    ].map((m) => [m[3], Number(m[1]), Number(m[2])]);
    assert.deepEqual(bars, [
      ['total', 200, 250],
      ['bound', 200, 200],
      ['gap', 400, 50],
      ['bound', 200, 100],
      ['gap', 300, 100],
    ]);
    assert.match(html, /memory_bound_ideal_no_reloads<\/text><text x="200" y="\d+" class="small">n\/a/);
    assert.match(html, /no TensorInfo/);
    assert.match(html, /<td class="fail">found<\/td>/);
    const link = `command:nki-studio.goToLine?${encodeURIComponent(JSON.stringify(['file:///k.py', 12]))}`;
    assert.ok(html.includes(`<a href="${link}">line 13</a> <code>NKI701</code> descriptors of 1 KiB &lt;b&gt;`));
  });

  it('shows the before/after view against a baseline: bounds side by side and the lines that moved', () => {
    const bounds = (total: number, memory: number) => ({
      total_ns: total,
      families: [{ name: 'memory', bounds: [{ name: 'memory_bound', ns: memory, gap_means: '', speedup: null }] }],
    });
    const before = {
      uri: 'u',
      source: 'measured' as const,
      profile: { label: 'before.parquet' },
      lines: [heatLine(3, 900), heatLine(4, 100)],
      kernel: { bounds: bounds(2000, 1500) },
    };
    const after = {
      uri: 'u',
      source: 'estimate' as const,
      lines: [heatLine(3, 400), heatLine(4, 100)],
      kernel: { bounds: bounds(1000, 800) },
    };
    const html = renderPanel({ heat: { stale: false, params: after }, baseline: before }, 'n', 'x');
    assert.match(html, /Before \/ after <span class="muted">measured · before\.parquet → estimated<\/span>/);
    assert.match(html, /<td>total_time<\/td><td>2\.0 µs<\/td><td>1\.0 µs<\/td><td>−1\.0 µs<\/td>/);
    assert.match(html, /<td>memory_bound<\/td><td>1\.5 µs<\/td><td>800 ns<\/td><td>−700 ns<\/td>/);
    assert.match(html, /<td>4<\/td><td>900 ns<\/td><td>400 ns<\/td><td>−500 ns<\/td>/);
    assert.doesNotMatch(html.split('Before / after')[1] ?? '', /<td>5<\/td>/); // unchanged lines are not listed
    assert.doesNotMatch(
      renderPanel({ heat: { stale: false, params: after }, baseline: after }, 'n', 'x'),
      /Before \/ after/,
    );
  });

  it('renders an empty panel with a hint', () => {
    assert.match(renderPanel({}, 'n', 'x'), /Simulate Kernel/);
  });
});

describe('profile load summary', () => {
  it('names the format, files, latency in plain words and unmapped files', () => {
    const text = profileLoadSummary({
      files: ['file:///ws/k.py'],
      format: 'parquet',
      latency_ns: 218_666,
      latency_source: 'Summary.total_exec_time',
      unattributed_instr: 3,
      unmapped_files: [{ recorded: '/home/ubuntu/other.py', local: null, how: 'not mapped' }],
    });
    assert.match(
      text,
      /profile loaded \(parquet\): heat on 1 file · kernel 218\.7 µs · 3 instructions without a source line · not found in the workspace: \/home\/ubuntu\/other\.py/,
    );
    assert.doesNotMatch(text, /total_exec_time/); // technical: the panel's detail line and the hover name it
    assert.match(profileLoadSummary(null), /heat on 0 files/);
  });
});

describe('a run without a reference', () => {
  const ran = parseSimulationResult({
    status: 'no_reference',
    kernel: 'k',
    message: 'k ran — no reference to compare (outputs finite, inputs unchanged)',
    oracle: { hasReference: false, passed: true, problems: [], inputs: [], outputs: [] },
  });

  it('is announced as a warning, never as a green pass', () => {
    assert.equal(severityOf(ran), 'warning');
    assert.equal(severityOf(parseSimulationResult({ status: 'passed' })), 'information');
    assert.equal(severityOf(parseSimulationResult({ status: 'failed' })), 'error');
    assert.match(summaryLine(ran), /^k: ran, not checked — k ran — no reference to compare/);
    assert.match(statusText('running', true, ran).detail, /k ran, not checked/);
  });

  it('is neither pass nor fail in the panel', () => {
    const html = renderPanel({ simulation: ran }, 'n', 'x');
    assert.match(html, /<h2>Simulation <span class="na">ran, not checked<\/span>/);
    assert.doesNotMatch(html, /class="pass"/);
  });
});

describe('status and errors', () => {
  it('says lint only in restricted mode', () => {
    assert.equal(statusText('running', false, undefined).text, 'NKI: lint only');
    assert.equal(statusText('running', true, undefined).text, 'NKI: lint + simulate');
    assert.match(
      statusText('running', true, parseSimulationResult({ status: 'passed', kernel: 'k', backend: 'embedded' })).detail,
      /k passed \(embedded\)/,
    );
    assert.equal(statusText('no-python', true, undefined).error, true);
  });

  it('recognises unknown commands and cancellations', () => {
    const unknown = Object.assign(new Error('Unknown command: nki-studio.simulate'), { code: -32601 });
    assert.ok(isUnknownCommand(unknown));
    assert.match(describeFailure('Simulate k', unknown), /does not support it yet/);
    assert.ok(isCancellation(Object.assign(new Error('Request cancelled'), { code: -32800 })));
    assert.ok(!isUnknownCommand(new Error('kernel raised ValueError')));
  });
});
