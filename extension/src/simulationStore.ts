/** The latest simulation result per document (for the kernel panel and the status item). */
import { type SimulationResult, parseSimulationResult } from './simulationSummary';

export class SimulationStore {
  private readonly byUri = new Map<string, SimulationResult>();
  private latest: SimulationResult | undefined;
  private readonly listeners: ((r: SimulationResult) => void)[] = [];

  /** Record a raw `nki/simulationResult` payload; returns the parsed result. */
  add(raw: unknown, fallbackUri?: string): SimulationResult {
    const result = parseSimulationResult(raw);
    const uri = result.uri ?? fallbackUri;
    if (uri) this.byUri.set(uri, result);
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

  onDidAdd(listener: (r: SimulationResult) => void): void {
    this.listeners.push(listener);
  }
}
