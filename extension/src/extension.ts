/** Entry point: wires the server manager, heatmap, kernel panel, status item and commands together. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import { registerCommands } from './commands';
import { HeatController } from './heat/controller';
import { parseHeatLayer, parseHeatmap } from './heat/model';
import { InterpreterCache } from './interpreterCache';
import { registerMcpServer } from './mcpServer';
import { KernelPanel } from './panel/kernelPanel';
import { CREATE_ENV_COMMAND, createServerEnvironment, spawnRunner } from './privateEnvCommand';
import { NOTIFICATIONS } from './protocol.generated';
import { bundleFor } from './serverCommand';
import { ServerEnvironment } from './serverEnvironment';
import { ServerManager } from './serverManager';
import { renderRulePages } from './rulePages';
import { SimulationStore } from './simulationStore';
import { TuneStore } from './tune';
import { severityOf, summaryLine } from './simulationSummary';
import { LanguageStatus } from './statusItem';
import { Timings } from './timings';
import { type VsCode, realMcpApi, realVsCode } from './vscodeApi';

let server: ServerManager | undefined;

/** Set by the bundle's first line (extension/scripts/build.mjs); absent when not bundled. */
declare const __nkiBundleLoadStart: number | undefined;
const loadStart = typeof __nkiBundleLoadStart === 'number' ? __nkiBundleLoadStart : undefined;
const loaded = performance.now();

export function activate(context: vscode.ExtensionContext): void {
  const activatedAt = performance.now();
  const vs = realVsCode();
  const log = vs.window.createOutputChannel('NKI Studio', { log: true });
  const timings = new Timings((m) => log.debug(m));
  const heat = new HeatController(vs, (t) => timings.record({ event: 'paint', ...t }));
  const simulations = new SimulationStore((uri) =>
    vs.workspace.textDocuments.find((d) => d.uri.toString() === uri)?.getText(),
  );
  const tunes = new TuneStore();
  const panel = new KernelPanel(vs, simulations, heat, tunes);
  server = new ServerManager(
    vs,
    context.extensionPath,
    log,
    timings,
    activatedAt,
    new InterpreterCache(context.workspaceState, (p) => fs.existsSync(p), context.globalState),
    new ServerEnvironment(context.extensionPath, context.globalStorageUri.fsPath, {
      read: (p) => readText(p),
      exists: (p) => fs.existsSync(p),
    }),
  );
  const status = new LanguageStatus(vs, server, simulations);

  server.onNotification(NOTIFICATIONS.heatmap, (raw) => {
    const params = parseHeatmap(raw);
    if (typeof params === 'string') {
      log.warn(params);
      return;
    }
    heat.apply(params);
    panel.refresh();
  });
  server.onNotification(NOTIFICATIONS.heatLayer, (raw) => {
    const params = parseHeatLayer(raw);
    if (typeof params === 'string') {
      log.warn(params);
      return;
    }
    heat.applyLayer(params);
    panel.refresh();
  });
  server.onNotification(NOTIFICATIONS.simulationResult, (raw) => {
    const result = simulations.add(raw);
    log.info(`simulation: ${summaryLine(result)}`);
  });
  simulations.onDidAdd((r) => {
    if (severityOf(r) === 'error') log.warn(`simulation problem: ${summaryLine(r)}`);
  });

  context.subscriptions.push(
    log,
    heat,
    panel,
    status,
    server,
    // an edit, undo or reload makes the document's result stale, or current again (back to the text simulated)
    vs.workspace.onDidChangeTextDocument((e) => simulations.textChanged(e.document.uri.toString())),
    ...registerCommands({ vs, server, heat, simulations, panel, tunes }),
    renderRulePages(vs),
    vs.commands.registerCommand(CREATE_ENV_COMMAND, () => createEnvironment(vs, log, server)),
    // Agent mode (VS Code >= 1.101): `nki-studio mcp` on the server's interpreter and bundle, trusted only.
    ...registerMcpServer(
      realMcpApi(),
      vs,
      (roots) => ({
        interpreter:
          server?.executable || vs.workspace.getConfiguration('nki-studio').get<string>('interpreter') || 'python3',
        bundle: server?.bundleForExecutable() ?? bundleFor(context.extensionPath, (p) => fs.existsSync(p)),
        roots,
        config: vs.workspace.getConfiguration('nki-studio'),
      }),
      packageVersion(context.extension.packageJSON),
    ),
  );
  // Activation finishes before the server is up: the editor never waits for Python to start.
  void server.start();
  const now = performance.now();
  // loadMs: evaluating the bundle; VS Code reports activation as load + activate() too
  timings.record({
    event: 'activate',
    ms: now - activatedAt,
    loadMs: loadStart === undefined ? undefined : loaded - loadStart,
  });
}

/** "NKI: Create Server Environment" on the real processes and files. */
function createEnvironment(vs: VsCode, log: vscode.LogOutputChannel, manager: ServerManager | undefined): unknown {
  if (!manager) return undefined;
  const env = manager.environment;
  return createServerEnvironment({
    vs,
    log,
    manifest: () => env.manifest(),
    paths: env.paths,
    baseInterpreter: () => manager.baseInterpreter(),
    run: spawnRunner,
    files: {
      read: (p) => readText(p),
      write: (p, text) => {
        fs.mkdirSync(path.dirname(p), { recursive: true });
        fs.writeFileSync(p, text, 'utf8');
      },
      remove: (p) => fs.rmSync(p, { force: true }),
    },
    restart: () => manager.restartOnNewEnvironment(),
    stop: () => manager.stop(),
  });
}

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The extension's version from its package.json ('' when it has none). */
function packageVersion(packageJSON: unknown): string {
  const version = (packageJSON as { version?: unknown } | undefined)?.version;
  return typeof version === 'string' ? version : '';
}

export async function deactivate(): Promise<void> {
  await server?.stop();
}
