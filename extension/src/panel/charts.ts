/**
 * SVG charts for the kernel panel, drawn from server data as strings (no libraries, no network).
 * Colours are VS Code theme variables so the charts follow the theme. Text is laid out with estimated widths
 * (textWidth.ts): columns are as wide as their longest label and legends wrap, so no two labels overlap and
 * none is cut at the edge; each SVG's viewBox is its drawing area.
 */
import { formatBytes, formatNs } from '../heat/format';
import type { EngineTrack } from '../protocol.generated';
import { LABEL_PX, SMALL_PX, textWidth } from './textWidth';

export function esc(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
}

/** An `<svg>` whose viewBox is its `width` × `height` drawing area. */
function svg(label: string, width: number, height: number, body: string): string {
  const w = Math.ceil(width);
  const h = Math.ceil(height);
  return `<svg role="img" aria-label="${label}" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">${body}</svg>`;
}

/** The widest of `texts` at `fontPx` (0 for none). */
function widest(texts: readonly string[], fontPx: number): number {
  return texts.reduce((m, t) => Math.max(m, textWidth(t, fontPx)), 0);
}

/** A label column's width: its widest label (at LABEL_PX unless given) plus `pad`, at least `min`. */
function labelColumn(labels: readonly string[], min: number, pad: number, fontPx = LABEL_PX): number {
  return Math.max(min, widest(labels, fontPx) + pad);
}

export interface CapacityBar {
  name: string;
  used: number;
  capacity: number;
}

/** Horizontal bars "used / capacity" (peak SBUF/PSUM bytes per partition). */
export function capacityBars(bars: readonly CapacityBar[]): string {
  const rowH = 26;
  const barW = 200;
  const labelW = labelColumn(
    bars.map((b) => b.name),
    70,
    8,
  );
  const values = bars.map(
    (b) => `${formatBytes(b.used)} / ${formatBytes(b.capacity)} (${Math.round((b.used / (b.capacity || 1)) * 100)}%)`,
  );
  const rows = bars.map((b, i) => {
    const y = i * rowH + 4;
    const frac = b.capacity > 0 ? Math.min(1, b.used / b.capacity) : 0;
    const over = b.used > b.capacity;
    return (
      `<text x="0" y="${y + 13}" class="label">${esc(b.name)}</text>` +
      `<rect x="${labelW}" y="${y}" width="${barW}" height="16" class="track"/>` +
      `<rect x="${labelW}" y="${y}" width="${(barW * frac).toFixed(1)}" height="16" class="${over ? 'bar over' : 'bar'}"/>` +
      `<text x="${labelW + barW + 8}" y="${y + 13}" class="value">${esc(values[i])}</text>`
    );
  });
  const width = Math.max(420, labelW + barW + 8 + widest(values, LABEL_PX) + 2);
  return svg('peak on-chip memory per partition', width, bars.length * rowH + 8, rows.join(''));
}

export interface Segment {
  label: string;
  ns: number;
  cls: string;
}

/** One stacked bar of the kernel latency: DMA only | DMA under compute | compute only | idle. */
export function decompositionBar(segments: readonly Segment[], totalNs: number): string {
  const width = 420;
  let x = 0;
  const parts: string[] = [];
  for (const s of segments) {
    const w = Math.min(width - x, totalNs > 0 ? (width * s.ns) / totalNs : 0); // segments past the total stop at the edge
    if (w <= 0) continue;
    parts.push(
      `<rect x="${x.toFixed(1)}" y="0" width="${w.toFixed(1)}" height="18" class="${s.cls}"><title>${esc(s.label)}: ${esc(formatNs(s.ns))}</title></rect>`,
    );
    x += w;
  }
  // Legend entries flow left to right and wrap to a new row when the next would pass the right edge.
  const legend: string[] = [];
  let lx = 0;
  let row = 0;
  for (const s of segments) {
    const text = `${s.label} ${formatNs(s.ns)}`;
    const itemW = 14 + textWidth(text, SMALL_PX);
    if (lx > 0 && lx + itemW > width) {
      lx = 0;
      row += 1;
    }
    const y = 26 + row * 16;
    legend.push(
      `<rect x="${lx.toFixed(1)}" y="${y}" width="10" height="10" class="${s.cls}"/><text x="${(lx + 14).toFixed(1)}" y="${y + 9}" class="small">${esc(text)}</text>`,
    );
    lx += itemW + 12;
  }
  return svg('kernel time decomposition', width, 42 + row * 16, parts.join('') + legend.join(''));
}

export interface Track {
  name: string;
  /** As the server declares it; fixed: the estimate's per-execution fixed cost at kernel start and end. */
  kind: EngineTrack['kind'];
  /** [start_ns, end_ns) intervals relative to the kernel start. */
  intervals: readonly (readonly [number, number])[];
}

/**
 * Per-engine timeline: one row per track, DMA, compute and fixed-cost tracks coloured differently. When only
 * busy totals are known (no intervals), each row is one bar of the engine's busy time (labelled as such).
 */
export function timeline(tracks: readonly Track[], totalNs: number): string {
  const plotW = 330;
  const labelW = labelColumn(
    tracks.map((t) => t.name),
    90,
    6,
  );
  const width = labelW + plotW;
  const rowH = 18;
  const rows = tracks.map((t, i) => {
    const y = i * rowH;
    const rects = t.intervals
      .map(([s, e]) => {
        const x = labelW + (plotW * Math.min(totalNs, Math.max(0, s))) / (totalNs || 1);
        const w = Math.min(
          width - x,
          Math.max(0.5, (plotW * (Math.min(e, totalNs) - Math.max(0, s))) / (totalNs || 1)),
        );
        return `<rect x="${x.toFixed(1)}" y="${y + 2}" width="${w.toFixed(1)}" height="${rowH - 5}" class="${t.kind}"/>`;
      })
      .join('');
    return `<text x="0" y="${y + 13}" class="label">${esc(t.name)}</text><rect x="${labelW}" y="${y + 2}" width="${plotW}" height="${rowH - 5}" class="track"/>${rects}`;
  });
  const axisY = tracks.length * rowH + 12;
  const axis = `<text x="${labelW}" y="${axisY}" class="small">0</text><text x="${width}" y="${axisY}" class="small" text-anchor="end">${esc(formatNs(totalNs))}</text>`;
  return svg('engine timeline', width, axisY + 4, rows.join('') + axis);
}

export interface RooflinePoint {
  intensity: number; // FLOP / byte
  achievedTflops: number;
  peakTflops: number;
  ceilingGbps: number;
  bound?: string;
}

/** Log-log roofline: the memory roof (bandwidth × intensity), the compute roof, and the kernel's point. */
export function roofline(p: RooflinePoint): string {
  const width = 420;
  const height = 240;
  const m = { l: 50, r: 10, t: 10, b: 34 };
  const ridge = (p.peakTflops * 1e12) / (p.ceilingGbps * 1e9);
  const xMin = Math.min(p.intensity, ridge) / 20;
  const xMax = Math.max(p.intensity, ridge) * 20;
  const yMax = p.peakTflops * 3;
  const yMin = Math.min(p.achievedTflops > 0 ? p.achievedTflops : yMax, (p.ceilingGbps * 1e9 * xMin) / 1e12) / 3;
  const lx = (v: number): number =>
    m.l + ((Math.log10(v) - Math.log10(xMin)) / (Math.log10(xMax) - Math.log10(xMin))) * (width - m.l - m.r);
  const ly = (v: number): number =>
    height - m.b - ((Math.log10(v) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))) * (height - m.t - m.b);
  const memAt = (x: number): number => (p.ceilingGbps * 1e9 * x) / 1e12;
  const roof = `<polyline class="roof" fill="none" points="${lx(xMin).toFixed(1)},${ly(memAt(xMin)).toFixed(1)} ${lx(ridge).toFixed(1)},${ly(p.peakTflops).toFixed(1)} ${lx(xMax).toFixed(1)},${ly(p.peakTflops).toFixed(1)}"/>`;
  const pt =
    p.achievedTflops > 0
      ? `<circle class="point" cx="${lx(p.intensity).toFixed(1)}" cy="${ly(p.achievedTflops).toFixed(1)}" r="5"><title>${p.intensity.toFixed(2)} FLOP/B, ${p.achievedTflops.toFixed(3)} TFLOP/s</title></circle>`
      : '';
  const axes =
    `<line class="axis" x1="${m.l}" y1="${height - m.b}" x2="${width - m.r}" y2="${height - m.b}"/>` +
    `<line class="axis" x1="${m.l}" y1="${m.t}" x2="${m.l}" y2="${height - m.b}"/>` +
    `<text class="small" x="${(width + m.l) / 2}" y="${height - 6}" text-anchor="middle">arithmetic intensity (FLOP/byte, log)</text>` +
    `<text class="small" x="12" y="${(height - m.b) / 2}" transform="rotate(-90 12 ${(height - m.b) / 2})" text-anchor="middle">TFLOP/s (log)</text>` +
    `<text class="small" x="${lx(xMax) - 4}" y="${ly(p.peakTflops) - 4}" text-anchor="end">${p.peakTflops.toFixed(1)} TFLOP/s</text>` +
    `<text class="small" x="${lx(xMin) + 4}" y="${ly(memAt(xMin)) - 6}">${p.ceilingGbps.toFixed(0)} GB/s</text>`;
  return svg('roofline', width, height, axes + roof + pt);
}

export interface WaterfallBound {
  /** The technical name (bounds.md): the tooltip's detail. */
  name: string;
  /** The plain name shown. */
  label: string;
  /** null: the profile lacks what this bound needs. */
  ns: number | null;
  gapMeans: string;
  speedup: number | null;
}

export interface WaterfallFamily {
  name: string;
  bounds: readonly WaterfallBound[];
}

/**
 * The bounds waterfall: per family, the total time and then each bound as a bar from 0, the gap to the bar
 * above drawn as a floating segment (what that overhead is), and the bottleneck-aware speedup of reaching it.
 */
export function boundsWaterfall(families: readonly WaterfallFamily[], totalNs: number): string {
  // family names at x 0 (12 px), bound names indented at x 12 (10 px)
  const labelW = Math.max(
    labelColumn(
      families.map((f) => f.name),
      200,
      8,
    ),
    labelColumn(
      families.flatMap((f) => f.bounds.map((b) => b.label)),
      200,
      20,
      SMALL_PX,
    ),
  );
  const plotW = 250;
  let valueW = 0; // the widest text right of the bars
  const rowH = 20;
  // a bound past the total (inconsistent data) stops at the plot's edge
  const scale = (ns: number): number => Math.min(plotW, (plotW * Math.max(0, ns)) / (totalNs || 1));
  const rows: string[] = [];
  let y = 0;
  for (const fam of families) {
    rows.push(`<text x="0" y="${y + 13}" class="label">${esc(fam.name)}</text>`);
    rows.push(
      `<rect x="${labelW}" y="${y + 3}" width="${scale(totalNs).toFixed(1)}" height="${rowH - 6}" class="total"><title>total ${esc(formatNs(totalNs))}</title></rect>` +
        `<text x="${labelW + plotW + 8}" y="${y + 13}" class="small">total ${esc(formatNs(totalNs))}</text>`,
    );
    valueW = Math.max(valueW, textWidth(`total ${formatNs(totalNs)}`, SMALL_PX));
    y += rowH;
    let prev: number | null = totalNs;
    for (const b of fam.bounds) {
      rows.push(`<text x="12" y="${y + 13}" class="small">${esc(b.label)}</text>`);
      if (b.ns === null) {
        rows.push(`<text x="${labelW}" y="${y + 13}" class="small">n/a</text>`);
        prev = null;
        y += rowH;
        continue;
      }
      rows.push(
        `<rect x="${labelW}" y="${y + 3}" width="${scale(b.ns).toFixed(1)}" height="${rowH - 6}" class="bound"><title>${esc(b.label)} (${esc(b.name)}): ${esc(formatNs(b.ns))}</title></rect>`,
      );
      if (prev !== null && prev > b.ns) {
        rows.push(
          `<rect x="${(labelW + scale(b.ns)).toFixed(1)}" y="${y + 3}" width="${(scale(prev) - scale(b.ns)).toFixed(1)}" height="${rowH - 6}" class="gap"><title>gap ${esc(formatNs(prev - b.ns))}: ${esc(b.gapMeans)}</title></rect>`,
        );
      }
      const gap = prev !== null ? ` · gap ${formatNs(Math.max(0, prev - b.ns))}` : '';
      const speed = b.speedup !== null ? ` · ${b.speedup.toFixed(2)}×` : '';
      rows.push(
        `<text x="${labelW + plotW + 8}" y="${y + 13}" class="small">${esc(formatNs(b.ns) + gap + speed)}</text>`,
      );
      valueW = Math.max(valueW, textWidth(formatNs(b.ns) + gap + speed, SMALL_PX));
      prev = b.ns;
      y += rowH;
    }
    y += 6;
  }
  return svg('bounds waterfall', Math.max(560, labelW + plotW + 8 + valueW + 2), y, rows.join(''));
}
