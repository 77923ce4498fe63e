/** When to restart: crash restarts back off exponentially and give up after repeated crashes; settings
 * changes arriving in a burst produce one restart. Time and timers are injected for tests. */

export class CrashBackoff {
  private crashes: number[] = [];

  constructor(
    private readonly baseMs = 1000,
    private readonly maxRestarts = 5,
    private readonly windowMs = 3 * 60_000,
  ) {}

  /** Record a crash at `now`; returns the delay before the next restart, or undefined to give up. */
  next(now: number): number | undefined {
    this.crashes = this.crashes.filter((t) => now - t < this.windowMs);
    this.crashes.push(now);
    if (this.crashes.length > this.maxRestarts) return undefined;
    return this.baseMs * 2 ** (this.crashes.length - 1);
  }

  /** A deliberate restart or a long healthy run starts the count afresh. */
  reset(): void {
    this.crashes = [];
  }
}

export interface Timers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

export const realTimers: Timers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Run `fn` once, `delayMs` after the last of a burst of `trigger()` calls. */
export class Coalescer {
  private handle: unknown;

  constructor(
    private readonly fn: () => void,
    private readonly delayMs: number,
    private readonly timers: Timers = realTimers,
  ) {}

  trigger(): void {
    if (this.handle !== undefined) this.timers.clear(this.handle);
    this.handle = this.timers.set(() => {
      this.handle = undefined;
      this.fn();
    }, this.delayMs);
  }

  dispose(): void {
    if (this.handle !== undefined) this.timers.clear(this.handle);
    this.handle = undefined;
  }
}
