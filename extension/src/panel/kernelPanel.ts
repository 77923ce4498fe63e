/** The "NKI Kernel" webview: shows the active document's last simulation and heat data; no scripts. */
import { randomBytes } from 'node:crypto';
import type * as vscode from 'vscode';
import type { HeatController } from '../heat/controller';
import type { SimulationStore } from '../simulationStore';
import type { VsCode } from '../vscodeApi';
import { GO_TO_LINE, renderPanel } from './render';

export class KernelPanel {
  private panel: vscode.WebviewPanel | undefined;
  private lastUri: string | undefined;
  private readonly subscription: vscode.Disposable;

  constructor(
    private readonly vs: VsCode,
    private readonly simulations: SimulationStore,
    private readonly heat: HeatController,
  ) {
    simulations.onDidAdd(() => this.refresh());
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
          // the findings list jumps to its line through this one command, nothing else
          enableCommandUris: [GO_TO_LINE],
          localResourceRoots: [],
        },
      );
      this.panel.onDidDispose(() => (this.panel = undefined));
    }
    this.lastUri = this.vs.window.activeTextEditor?.document.uri.toString() ?? this.lastUri;
    this.refresh();
  }

  /** Re-render (called when a simulation result or heat data arrives). */
  refresh(): void {
    if (!this.panel) return;
    const uri = this.lastUri;
    const simulation = (uri && this.simulations.forUri(uri)) || this.simulations.last;
    const heat = uri ? this.heat.heatOf(uri) : undefined;
    const nonce = randomBytes(16).toString('base64');
    this.panel.webview.html = renderPanel(
      { simulation, heat: heat && { params: heat.params, stale: heat.stale } },
      nonce,
      this.panel.webview.cspSource,
    );
  }

  dispose(): void {
    this.subscription.dispose();
    this.panel?.dispose();
  }
}
