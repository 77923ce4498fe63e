/** The "NKI Kernel" webview: shows the active document's last simulation and heat data; no scripts. */
import { randomBytes } from 'node:crypto';
import type * as vscode from 'vscode';
import type { HeatController } from '../heat/controller';
import type { HeatLine, HeatmapParams } from '../heat/model';
import type { SimulationStore } from '../simulationStore';
import { type TuneStore, applicable } from '../tune';
import type { VsCode } from '../vscodeApi';
import { CALIBRATE_FROM_PROFILE, GO_TO_LINE, renderPanel } from './render';
import { APPLY_TUNE_WINNER } from './tune';

export class KernelPanel {
  private panel: vscode.WebviewPanel | undefined;
  private lastUri: string | undefined;
  private readonly subscription: vscode.Disposable;
  /** Per document: the heat data later data is compared against (NKI: Set Profile Baseline). */
  private readonly baselines = new Map<string, { params: HeatmapParams; text?: string; lines: readonly HeatLine[] }>();

  constructor(
    private readonly vs: VsCode,
    private readonly simulations: SimulationStore,
    private readonly heat: HeatController,
    private readonly tunes: TuneStore,
  ) {
    simulations.onDidAdd(() => this.refresh());
    simulations.onDidChangeStale(() => this.refresh());
    tunes.onDidChange(() => this.refresh());
    this.subscription = vs.window.onDidChangeActiveTextEditor((e) => {
      if (e && e.document.languageId === 'python') {
        this.lastUri = e.document.uri.toString();
        this.refresh();
      }
    });
  }

  show(): void {
    if (this.panel) {
      this.panel.reveal(undefined, true);
    } else {
      this.panel = this.vs.window.createWebviewPanel(
        'nki-studio.kernel',
        'NKI Kernel',
        { viewColumn: this.vs.ViewColumn.Beside, preserveFocus: true },
        {
          enableScripts: false,
          // the findings list jumps to its line, the measured profile's button calibrates, the search's button
          // applies its winner: nothing else
          enableCommandUris: [GO_TO_LINE, CALIBRATE_FROM_PROFILE, APPLY_TUNE_WINNER],
          localResourceRoots: [],
        },
      );
      this.panel.onDidDispose(() => (this.panel = undefined));
    }
    this.lastUri = this.vs.window.activeTextEditor?.document.uri.toString() ?? this.lastUri;
    this.refresh();
  }

  /** Keep the active document's current heat data as the "before" of the panel's before/after view. */
  setBaseline(): boolean {
    const uri = this.vs.window.activeTextEditor?.document.uri.toString() ?? this.lastUri;
    const heat = uri ? this.heat.heatOf(uri) : undefined;
    if (!uri || !heat) return false;
    // the text the heat's lines refer to now (they were shifted with edits), so later data can be compared
    // line for line even after the kernel was edited
    this.baselines.set(uri, { params: heat.params, text: this.textOf(uri), lines: heat.lines });
    this.show();
    return true;
  }

  /** Re-render (called when a simulation result or heat data arrives). */
  refresh(): void {
    if (!this.panel) return;
    const uri = this.lastUri;
    const simulation = (uri && this.simulations.forUri(uri)) || this.simulations.last;
    const heat = uri ? this.heat.heatOf(uri) : undefined;
    const baseline = uri ? this.baselines.get(uri) : undefined;
    const tune = uri ? this.tunes.forUri(uri) : undefined;
    const nonce = randomBytes(16).toString('base64');
    this.panel.webview.html = renderPanel(
      {
        simulation,
        simulationStale: simulation !== undefined && this.simulations.isStale(simulation),
        tune: uri && tune ? { result: tune.result, applicable: applicable(this.vs, uri, tune) } : undefined,
        heat: heat && {
          params: heat.params,
          stale: heat.stale,
          lines: heat.lines,
          text: uri && this.textOf(uri),
          label: heat.label,
        },
        baseline: baseline?.params,
        baselineSource: baseline?.text !== undefined ? { text: baseline.text, lines: baseline.lines } : undefined,
      },
      nonce,
      this.panel.webview.cspSource,
    );
  }

  /** The open document's current text; undefined when it is not open. */
  private textOf(uri: string): string | undefined {
    return this.vs.workspace.textDocuments.find((d) => d.uri.toString() === uri)?.getText();
  }

  dispose(): void {
    this.subscription.dispose();
    this.panel?.dispose();
  }
}
