/**
 * The language status item on Python files: server state, mode (full / lint only), simulation state and backend,
 * and whether that simulation is of an earlier version of its file.
 */
import type * as vscode from 'vscode';
import { CLIENT_COMMANDS } from './protocol.generated';
import type { ServerState } from './serverLifecycle';
import type { ServerManager } from './serverManager';
import type { SimulationStore } from './simulationStore';
import { type SimulationResult, statusLabel } from './simulationSummary';
import type { VsCode } from './vscodeApi';

export function statusText(
  state: ServerState,
  trusted: boolean,
  sim: SimulationResult | undefined,
  stale = false,
): { text: string; detail: string; busy: boolean; error: boolean } {
  switch (state) {
    case 'starting':
      return { text: 'NKI: starting', detail: 'language server starting', busy: true, error: false };
    case 'no-python':
      return { text: 'NKI: no Python', detail: 'set nki-studio.interpreter', busy: false, error: true };
    case 'failed':
      return { text: 'NKI: server stopped', detail: 'crashed repeatedly, see logs', busy: false, error: true };
    case 'stopped':
      return { text: 'NKI: stopped', detail: '', busy: false, error: false };
    case 'running': {
      if (!trusted)
        return {
          text: 'NKI: lint only',
          detail: 'restricted mode: simulation off until the workspace is trusted',
          busy: false,
          error: false,
        };
      const simPart = sim
        ? `last simulation ${sim.kernel ?? ''} ${statusLabel(sim.status)}${sim.backend ? ` (${sim.backend})` : ''}`
        : 'no simulation yet';
      const staleNote = sim && stale ? ' · stale: from an earlier version of the file — re-run' : '';
      return { text: 'NKI: lint + simulate', detail: simPart + staleNote, busy: false, error: false };
    }
  }
}

export class LanguageStatus {
  private readonly item: vscode.LanguageStatusItem;

  constructor(
    private readonly vs: VsCode,
    private readonly server: ServerManager,
    private readonly simulations: SimulationStore,
  ) {
    this.item = vs.languages.createLanguageStatusItem('nki-studio.status', { language: 'python' });
    this.item.name = 'NKI Studio';
    this.item.command = { title: 'Show Logs', command: CLIENT_COMMANDS.showLogs };
    server.onDidChangeState(() => this.update());
    simulations.onDidAdd(() => this.update());
    simulations.onDidChangeStale(() => this.update());
    this.update();
  }

  update(): void {
    const sim = this.simulations.last;
    const s = statusText(this.server.currentState, this.server.trusted, sim, sim && this.simulations.isStale(sim));
    this.item.text = s.text;
    this.item.detail = s.detail;
    this.item.busy = s.busy;
    this.item.severity = s.error ? this.vs.LanguageStatusSeverity.Error : this.vs.LanguageStatusSeverity.Information;
    void this.vs.commands.executeCommand(
      'setContext',
      'nki-studio.serverRunning',
      this.server.currentState === 'running',
    );
  }

  dispose(): void {
    this.item.dispose();
  }
}
