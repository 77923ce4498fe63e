/**
 * Performance events (activation, server start, first diagnostics, heatmap paint). Always logged at
 * debug level; also appended as JSON lines to $NKI_STUDIO_TIMINGS_FILE when set, which is how the
 * benchmark reads them from a real VS Code.
 */
import * as fs from 'node:fs';

export type TimingEvent =
  /** ms: the activate() call; loadMs: evaluating the bundle before it (undefined when not bundled). */
  | { event: 'activate'; ms: number; loadMs: number | undefined }
  /** How long interpreter discovery took; remembered: the server start did not wait for it. */
  | { event: 'interpreter'; ms: number; remembered: boolean }
  | { event: 'serverReady'; ms: number }
  | { event: 'firstDiagnostics'; uri: string; ms: number; sinceActivateMs: number }
  | { event: 'paint'; uri: string; lines: number; ms: number; planMs: number };

export class Timings {
  constructor(
    private readonly log: (message: string) => void,
    private readonly file: string | undefined = process.env.NKI_STUDIO_TIMINGS_FILE,
  ) {}

  record(event: TimingEvent): void {
    const line = JSON.stringify({ ...event, at: Date.now() });
    this.log(`timing ${line}`);
    if (this.file) {
      try {
        fs.appendFileSync(this.file, `${line}\n`);
      } catch {
        // a benchmark aid only: never let it disturb the editor
      }
    }
  }
}
