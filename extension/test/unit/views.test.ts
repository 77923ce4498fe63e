import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hoverMarkdown, legendText } from '../../src/heat/hover';
import { peakBars, renderPanel } from '../../src/panel/render';
import { profileLoadSummary } from '../../src/profileSummary';
import { describeFailure, isCancellation, isUnknownCommand } from '../../src/serverErrors';
import { parseSimulationResult, summaryLine } from '../../src/simulationSummary';
import { statusText } from '../../src/statusItem';
import { heatLine } from '../support/heatData';

describe('hover breakdown', () => {
  const line = heatLine(9, 12_345, {
    share: 0.12,
    wait_ns: 2_000,
    dma_bytes: 65_536,
    engines: { Vector: 12_000, Scalar: 3_000 },
    top_opcodes: [{ opcode: 'TensorTensor', count: 12, sum_ns: 9_000 }],
    iterations: [{ label: 'i=0', busy_ns: 6_000 }, { label: 'i=1', busy_ns: 6_345 }],
    dma_overlap_ns: 1_500,
    file: '/remote/k.py',
  });

  it('shows time, share, instructions, waits, DMA, engines, opcodes and iterations', () => {
    const md = hoverMarkdown(line, 'measured', 'run_1', false);
    assert.match(md, /line 10/);
    assert.match(md, /measured · run\\_1/);
    assert.match(md, /12\.3 µs \(12%/);
    assert.match(md, /\| wait \| 2\.0 µs \|/);
    assert.match(md, /64\.0 KiB/);
    assert.match(md, /\| Vector \| 12\.0 µs \|[\s\S]*\| Scalar \| 3\.0 µs \|/);
    assert.match(md, /TensorTensor ×12 \(9\.0 µs\)/);
    assert.match(md, /iterations\*\* \(2\): i=0 6\.0 µs, i=1 6\.3 µs/);
    assert.match(md, /dma overlap ns: 1\.5 µs/);
    assert.doesNotMatch(md, /remote/);
  });

  it('labels estimates and stale data', () => {
    const md = hoverMarkdown(line, 'estimate', null, true);
    assert.match(md, /\*\*estimated\*\*/);
    assert.match(md, /Stale/);
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
      outputs: [{ name: 'out', shape: [128, 512], dtype: 'float32', nan_count: 0, inf_count: 0, metrics: [{ name: 'allclose', value: 0.3, threshold: 'atol 1e-5', passed: false }], notes: [] }],
    },
    peak: { sbuf: { bytesPerPartition: 150 * 1024, capacityPerPartition: 192 * 1024 }, psum: { bytes: 4096, capacity: 16384 } },
    warnings: ['w1'],
  };

  it('parses tolerantly and summarises in one line', () => {
    const r = parseSimulationResult(raw);
    assert.equal(summaryLine(r), 'add: failed — add: oracle failed: out allclose · embedded backend · 1.15 s · 1 warning');
    assert.equal(parseSimulationResult('garbage').status, 'unknown');
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
              latency_ns: 1000, dma_union_ns: 600, compute_union_ns: 700, intersection_ns: 400, engines: { Vector: 500, Tensor: 300 },
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
    assert.match(html, /aria-label="kernel time decomposition"/);
    assert.match(html, /aria-label="engine timeline"/);
    assert.match(html, /aria-label="roofline"/);
    assert.match(html, /<strong>estimated<\/strong>/);
    assert.match(html, /✘ fail/);
    assert.match(html, /var\(--vscode-/);
  });

  it('renders an empty panel with a hint', () => {
    assert.match(renderPanel({}, 'n', 'x'), /Simulate Kernel/);
  });
});

describe('profile load summary', () => {
  it('names the format, files, latency source and unmapped files', () => {
    const text = profileLoadSummary({
      files: ['file:///ws/k.py'], format: 'parquet', latency_ns: 218_666, latency_source: 'Summary.total_exec_time',
      unattributed_instr: 3, unmapped_files: [{ recorded: '/home/ubuntu/other.py', local: null, how: 'not mapped' }],
    });
    assert.match(text, /profile loaded \(parquet\): heat on 1 file · kernel 218\.7 µs \(Summary\.total_exec_time\) · 3 instructions without a source line · not found in the workspace: \/home\/ubuntu\/other\.py/);
    assert.match(profileLoadSummary(null), /heat on 0 files/);
  });
});

describe('status and errors', () => {
  it('says lint only in restricted mode', () => {
    assert.equal(statusText('running', false, undefined).text, 'NKI: lint only');
    assert.equal(statusText('running', true, undefined).text, 'NKI: lint + simulate');
    assert.match(statusText('running', true, parseSimulationResult({ status: 'passed', kernel: 'k', backend: 'embedded' })).detail, /k passed \(embedded\)/);
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
