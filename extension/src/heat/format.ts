/** Human-readable figures for bars, hovers and the panel. */
import type { EstimateRange } from '../protocol.generated';
import type { Metric } from './model';

export function formatNs(ns: number): string {
  if (ns >= 1e9) return `${(ns / 1e9).toFixed(2)} s`;
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(2)} ms`;
  if (ns >= 1e3) return `${(ns / 1e3).toFixed(1)} µs`;
  return `${Math.round(ns)} ns`;
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${Math.round(value)} B` : `${value.toFixed(1)} ${units[unit]}`;
}

export function formatCount(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  return String(Math.round(n));
}

export function formatPercent(fraction: number): string {
  return `${(fraction * 100).toFixed(fraction < 0.1 ? 1 : 0)}%`;
}

export function formatMetric(metric: Metric, value: number): string {
  switch (metric) {
    case 'time':
    case 'busy':
    case 'wait':
    case 'dma_time':
      return formatNs(value);
    case 'dma':
      return formatBytes(value);
    case 'instr':
      return formatCount(value);
  }
}

/**
 * "likely 140 µs–210 µs (estimate's likely range: 10th–90th percentile of measured/estimated over 5 public
 * measurements, trn2, all kernel classes)"; or that the generation has no calibration (`null`).
 */
export function formatLikelyRange(range: EstimateRange | null): string {
  if (range === null) return 'no calibration for this generation: the estimate’s error is unknown';
  const kind = range.kernelClass === 'all' ? 'all kernel classes' : `${range.kernelClass}-bound kernels`;
  return (
    `likely ${formatNs(range.lowNs)}–${formatNs(range.highNs)} (estimate’s likely range: 10th–90th percentile ` +
    `of measured/estimated over ${range.points} public measurements, ${range.generation}, ${kind}; ${range.source})`
  );
}
