/**
 * The latest simulation result per document (for the kernel panel and the status item), and whether it is stale:
 * computed on another text than the document's now (the server sends the SHA-256 of the text a run was of).
 */
import { createHash } from 'node:crypto';
import { type SimulationResult, parseSimulationResult } from './simulationSummary';

/** The SHA-256 (hex) of `text`'s UTF-8: the server's `textSha256` of the text a run was of. */
export function textDigest(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export class SimulationStore {
  private readonly byUri = new Map<string, SimulationResult>();
  private latest: SimulationResult | undefined;
  private readonly listeners: ((r: SimulationResult) => void)[] = [];
  /** Documents whose result is of another text than theirs now. */
  private readonly stale = new Set<string>();
  private readonly staleListeners: ((uri: string) => void)[] = [];

  /** `textOf`: an open document's current text (undefined when it is not open: its results are not judged). */
  constructor(private readonly textOf: (uri: string) => string | undefined) {}

  /** Record a raw `nki/simulationResult` payload; returns the parsed result. */
  add(raw: unknown, fallbackUri?: string): SimulationResult {
    const result = parseSimulationResult(raw);
    const uri = result.uri ?? fallbackUri;
    if (uri) {
      this.byUri.set(uri, result);
      // the text may have changed while the run was under way: stale from the start then
      this.judge(uri);
    }
    this.latest = result;
    for (const l of this.listeners) l(result);
    return result;
  }

  forUri(uri: string): SimulationResult | undefined {
    return this.byUri.get(uri);
  }

  get last(): SimulationResult | undefined {
    return this.latest;
  }

  /** Whether `result` (a document's latest) was computed on another text than the document's now. */
  isStale(result: SimulationResult): boolean {
    const uri = result.uri;
    return uri !== undefined && this.byUri.get(uri) === result && this.stale.has(uri);
  }

  /** The document's text changed (edit, undo, reload): re-judge its result; listeners hear when that flips. */
  textChanged(uri: string): void {
    if (this.byUri.has(uri) && this.judge(uri)) for (const l of this.staleListeners) l(uri);
  }

  onDidAdd(listener: (r: SimulationResult) => void): void {
    this.listeners.push(listener);
  }

  /** A document's result became stale, or current again (its text is back to the one simulated). */
  onDidChangeStale(listener: (uri: string) => void): void {
    this.staleListeners.push(listener);
  }

  /** Mark the document's result stale or not; true when that changed. Unknown (no digest, not open): not stale. */
  private judge(uri: string): boolean {
    const digest = this.byUri.get(uri)?.textSha256;
    const text = digest === undefined ? undefined : this.textOf(uri);
    const stale = text !== undefined && textDigest(text) !== digest;
    if (stale === this.stale.has(uri)) return false;
    if (stale) this.stale.add(uri);
    else this.stale.delete(uri);
    return true;
  }
}
