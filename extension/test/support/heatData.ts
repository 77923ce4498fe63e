import type { HeatLine } from '../../src/heat/model';

/** A heat line with `busy` ns on the Vector engine (other figures derived). */
export function heatLine(line: number, busy: number, extra: Partial<HeatLine> = {}): HeatLine {
  return {
    line,
    busy_ns: busy,
    share: busy / 10_000,
    instr: busy / 100,
    wait_ns: 0,
    engines: { Vector: busy },
    dma_bytes: 0,
    ...extra,
  };
}
