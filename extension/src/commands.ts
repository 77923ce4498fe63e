/** The NKI: … commands, wired to the language server and the heatmap. */
import type * as vscode from 'vscode';
import { type RunServerCommand, addReference, documentOf, ensureSpec } from './firstRun';
import type { HeatController } from './heat/controller';
import { findKernels, kernelAt } from './kernels';
import type { KernelPanel } from './panel/kernelPanel';
import { CALIBRATE_FROM_PROFILE, GO_TO_LINE } from './panel/render';
import { pickProfile } from './profileDialog';
import { profileLoadSummary } from './profileSummary';
import { LAYER_NAMES } from './heat/controller';
import { HEATLAYER_VALUES, type HeatLayer, type HeatLayerParams } from './heat/layers';
import {
  CLIENT_COMMANDS,
  type ClientCommand,
  type Refusal,
  SERVER_COMMANDS,
  type TuneResult,
} from './protocol.generated';
import { describeFailure, isCancellation, isUnknownCommand } from './serverErrors';
import type { ServerManager } from './serverManager';
import type { SimulationStore } from './simulationStore';
import { type SimulationResult, parseSimulationResult, severityOf, summaryLine } from './simulationSummary';
import { refuseUntrusted } from './trust';
import { type TuneStore, applyTuneWinner, askTuneSpec } from './tune';
import { APPLY_TUNE_WINNER } from './panel/tune';
import type { VsCode } from './vscodeApi';

export interface CommandDeps {
  vs: VsCode;
  server: ServerManager;
  heat: HeatController;
  simulations: SimulationStore;
  panel: KernelPanel;
  tunes: TuneStore;
}

export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
  const { vs, server, heat } = deps;
  const reg = (id: ClientCommand, fn: (...args: unknown[]) => unknown): vscode.Disposable =>
    vs.commands.registerCommand(id, fn);
  return [
    reg(CLIENT_COMMANDS.simulateKernel, (...args) => simulateKernel(deps, args)),
    reg(CLIENT_COMMANDS.toggleSimulateOnSave, () => toggleSimulateOnSave(vs)),
    reg(CLIENT_COMMANDS.openProfile, (arg) => openProfile(deps, arg)),
    reg(CLIENT_COMMANDS.profileOnRemote, () => profileOnRemote(deps)),
    reg(CLIENT_COMMANDS.clearHeatmap, () => clearHeatmap(deps)),
    reg(CLIENT_COMMANDS.nextHottestLine, () => heat.nextHottestLine()),
    reg(CLIENT_COMMANDS.pickHeatmapMetric, () => heat.pickMetric()),
    reg(CLIENT_COMMANDS.switchHeatLayer, (...args) => switchHeatLayer(deps, args)),
    reg(CLIENT_COMMANDS.showKernelPanel, () => deps.panel.show()),
    reg(CLIENT_COMMANDS.addReference, (...args) => addReferenceCommand(deps, args)),
    reg(CLIENT_COMMANDS.tuneKernel, (...args) => tuneKernel(deps, args)),
    reg(APPLY_TUNE_WINNER, (uri) => applyTuneWinner(deps.vs, deps.tunes, uri)),
    reg(GO_TO_LINE, (uri, line) => goToLine(vs, uri, line)),
    reg(CALIBRATE_FROM_PROFILE, (path) => calibrateFromProfile(deps, path)),
    reg(CLIENT_COMMANDS.setProfileBaseline, () => {
      if (!deps.panel.setBaseline())
        void vs.window.showInformationMessage(
          'NKI: no profile or estimate in this editor to compare against. Load a profile or simulate first.',
        );
    }),
    reg(CLIENT_COMMANDS.restartServer, () => server.restart('restart requested')),
    reg(CLIENT_COMMANDS.showLogs, () => server.log.show()),
  ];
}

/** The kernel to `verb`: explicit arguments (uri, name), else the one at the cursor, else a quick pick. */
async function chooseKernel(
  vs: VsCode,
  args: unknown[],
  verb = 'simulate',
): Promise<{ uri: string; kernel: string; doc?: vscode.TextDocument } | undefined> {
  if (typeof args[0] === 'string' && typeof args[1] === 'string') return { uri: args[0], kernel: args[1] };
  const editor = vs.window.activeTextEditor;
  if (!editor || editor.document.languageId !== 'python') {
    void vs.window.showInformationMessage(`NKI: open a Python file with an @nki.jit kernel to ${verb} it.`);
    return undefined;
  }
  const doc = editor.document;
  const kernels = findKernels(doc.getText());
  if (kernels.length === 0) {
    void vs.window.showInformationMessage('NKI: no @nki.jit kernel in this file.');
    return undefined;
  }
  const here = kernelAt(kernels, editor.selection.active.line);
  if (here) return { uri: doc.uri.toString(), kernel: here.name, doc };
  if (kernels.length === 1) return { uri: doc.uri.toString(), kernel: kernels[0].name, doc };
  const pick = await vs.window.showQuickPick(
    kernels.map((k) => ({ label: k.name, description: `line ${k.defLine + 1}` })),
    { title: `NKI: ${verb} which kernel?` },
  );
  return pick ? { uri: doc.uri.toString(), kernel: pick.label, doc } : undefined;
}

async function simulateKernel(deps: CommandDeps, args: unknown[]): Promise<SimulationResult | undefined> {
  const { vs, server, simulations } = deps;
  if (refuseUntrusted(vs)) return undefined;
  const target = await chooseKernel(vs, args);
  if (!target) return undefined;
  const doc = target.doc ?? documentOf(vs, target.uri);
  if (doc) {
    try {
      if (!(await ensureSpec(vs, serverCommand(server), doc, target.kernel))) return undefined;
    } catch (err) {
      // An older server cannot guess: simulate, its answer says what the spec lacks.
      if (!isUnknownCommand(err)) throw err;
    }
  }
  // The worker runs the file from disk.
  if (target.doc?.isDirty) await target.doc.save();
  const before = simulations.last;
  let response: unknown;
  try {
    response = await vs.window.withProgress(
      { location: vs.ProgressLocation.Notification, title: `NKI: simulating ${target.kernel}`, cancellable: true },
      (progress, token) =>
        server.executeCommand(SERVER_COMMANDS.simulate, [target.uri, target.kernel], token, (p) => {
          if (p.kind !== 'end' && p.message) progress.report({ message: p.message });
        }),
    );
  } catch (err) {
    if (isCancellation(err)) {
      void vs.window.showInformationMessage(`NKI: simulation of ${target.kernel} cancelled.`);
    } else {
      void vs.window.showErrorMessage(`NKI: ${describeFailure(`Simulate ${target.kernel}`, err)}`);
    }
    return undefined;
  }
  // The result comes back as the response, or (older servers) only as nki/simulationResult.
  const parsed = parseSimulationResult(response);
  const result =
    parsed.status !== 'unknown'
      ? simulations.add({ uri: target.uri, kernel: target.kernel, ...(response as object) }, target.uri)
      : simulations.last !== before
        ? simulations.last
        : undefined;
  if (!result) {
    void vs.window.showWarningMessage(
      `NKI: simulation of ${target.kernel} finished without a result (see "NKI: Show Logs").`,
    );
    return undefined;
  }
  const line = `NKI: ${summaryLine(result)}`;
  const show = {
    information: vs.window.showInformationMessage,
    warning: vs.window.showWarningMessage,
    error: vs.window.showErrorMessage,
  }[severityOf(result)];
  const addRef = 'Add Reference';
  const buttons = result.status === 'no_reference' ? [addRef, 'Show Kernel Panel'] : ['Show Kernel Panel'];
  void show(line, ...buttons).then((pick) => {
    if (pick === addRef) void addReferenceCommand(deps, [target.uri, target.kernel]);
    else if (pick) deps.panel.show();
  });
  return result;
}

/**
 * Tune kernel…: ask for the space and budget, run the server's search (its own progress, which can cancel it),
 * keep the answer for the kernel panel and show it there.
 */
async function tuneKernel(deps: CommandDeps, args: unknown[]): Promise<void> {
  const { vs, server } = deps;
  if (refuseUntrusted(vs)) return;
  const target = await chooseKernel(vs, args, 'tune');
  const doc = target && (target.doc ?? documentOf(vs, target.uri));
  if (!target || !doc) return;
  const spec = await askTuneSpec(vs, serverCommand(server), target.uri, target.kernel);
  if (!spec) return;
  // The search reads the document's text; saved first, so the cache and the spec are of the file on disk.
  if (doc.isDirty) await doc.save();
  const version = doc.version;
  let response: unknown;
  try {
    response = await vs.window.withProgress(
      { location: vs.ProgressLocation.Notification, title: `NKI: tuning ${target.kernel}`, cancellable: true },
      (progress, token) =>
        server.executeCommand(SERVER_COMMANDS.tune, [spec], token, (p) => {
          if (p.kind !== 'end' && p.message) progress.report({ message: p.message });
        }),
    );
  } catch (err) {
    if (!isCancellation(err)) void vs.window.showErrorMessage(`NKI: ${describeFailure(`Tune ${target.kernel}`, err)}`);
    return;
  }
  // A refusal (untrusted on the server's side) and the winner are said by the server itself.
  const result = response as TuneResult | Refusal | null;
  if (result?.status !== 'ok') return;
  deps.tunes.set(target.uri, { result, version });
  deps.panel.show();
}

function serverCommand(server: ServerManager): RunServerCommand {
  return (command, args) => server.executeCommand(command, args);
}

/** Add a reference template to the kernel named (uri, name), else the one at the cursor, else one picked. */
async function addReferenceCommand(deps: CommandDeps, args: unknown[]): Promise<void> {
  const { vs, server } = deps;
  const target = await chooseKernel(vs, args);
  const doc = target && (target.doc ?? documentOf(vs, target.uri));
  if (!target || !doc) return;
  await addReference(vs, serverCommand(server), doc, target.kernel);
}

async function toggleSimulateOnSave(vs: VsCode): Promise<void> {
  const config = vs.workspace.getConfiguration('nki-studio');
  const next = !(config.get<boolean>('simulateOnSave') ?? true);
  const target = vs.workspace.workspaceFolders ? vs.ConfigurationTarget.Workspace : vs.ConfigurationTarget.Global;
  await config.update('simulateOnSave', next, target);
  const note = next && !vs.workspace.isTrusted ? ' (takes effect once the workspace is trusted)' : '';
  void vs.window.showInformationMessage(`NKI: simulate on save ${next ? 'on' : 'off'}${note}.`);
}

async function openProfile(deps: CommandDeps, arg: unknown): Promise<void> {
  const { vs, server } = deps;
  let uri: string | undefined = typeof arg === 'string' ? arg : (arg as vscode.Uri | undefined)?.toString();
  if (!uri) {
    const picked = await pickProfile(vs);
    if (!picked) return;
    uri = picked.toString();
  }
  try {
    const response = await vs.window.withProgress(
      { location: vs.ProgressLocation.Notification, title: 'NKI: loading profile', cancellable: true },
      (progress, token) =>
        server.executeCommand(SERVER_COMMANDS.loadProfile, [uri], token, (p) => {
          if (p.kind !== 'end' && p.message) progress.report({ message: p.message });
        }),
    );
    void vs.window.showInformationMessage(`NKI: ${profileLoadSummary(response)}`);
  } catch (err) {
    if (!isCancellation(err)) void vs.window.showErrorMessage(`NKI: ${describeFailure('Load profile', err)}`);
  }
}

/** The panel's "Calibrate from this profile": the server fits, stores and reports (its own message). */
async function calibrateFromProfile(deps: CommandDeps, path: unknown): Promise<void> {
  const { vs, server } = deps;
  if (typeof path !== 'string' || refuseUntrusted(vs)) return;
  try {
    await vs.window.withProgress(
      { location: vs.ProgressLocation.Notification, title: 'NKI: calibrating the estimate', cancellable: true },
      (_progress, token) => server.executeCommand(SERVER_COMMANDS.calibrate, [path], token),
    );
  } catch (err) {
    if (!isCancellation(err)) void vs.window.showErrorMessage(`NKI: ${describeFailure('Calibrate', err)}`);
  }
}

async function profileOnRemote(deps: CommandDeps): Promise<void> {
  const { vs, server } = deps;
  if (refuseUntrusted(vs)) return;
  const host = vs.workspace.getConfiguration('nki-studio').get<string>('remote.host');
  if (!host) {
    const pick = await vs.window.showWarningMessage(
      'NKI: set "nki-studio.remote.host" (an ssh config alias or user@host) first.',
      'Open Settings',
    );
    if (pick) void vs.commands.executeCommand('workbench.action.openSettings', 'nki-studio.remote');
    return;
  }
  const target = await chooseKernel(vs, []);
  if (!target) return;
  try {
    const response = await vs.window.withProgress(
      {
        location: vs.ProgressLocation.Notification,
        title: `NKI: profiling ${target.kernel} on ${host}`,
        cancellable: true,
      },
      (progress, token) =>
        server.executeCommand(SERVER_COMMANDS.profileRemote, [target.uri, target.kernel], token, (p) => {
          if (p.kind !== 'end' && p.message) progress.report({ message: p.message });
        }),
    );
    // A refusal (untrusted on the server's side) is shown by the server itself.
    if ((response as { status?: unknown } | null)?.status !== 'refused') {
      void vs.window.showInformationMessage(`NKI: ${host}: ${profileLoadSummary(response)}`);
    }
  } catch (err) {
    if (!isCancellation(err)) void vs.window.showErrorMessage(`NKI: ${describeFailure(`Profile on ${host}`, err)}`);
  }
}

async function clearHeatmap(deps: CommandDeps): Promise<void> {
  deps.heat.clear();
  try {
    await deps.server.executeCommand(SERVER_COMMANDS.clearProfile, []);
  } catch (err) {
    // The painted heat is gone either way; an older server without the command has nothing to clear.
    if (!isUnknownCommand(err)) deps.server.log.warn(`clearProfile: ${String(err)}`);
  }
}

/** The layer switch: `[uri, layer]`, else a pick among the active document's layers; the server decides
 * and every view follows its answer. */
async function switchHeatLayer(deps: CommandDeps, args: unknown[]): Promise<void> {
  const { vs, server, heat } = deps;
  const uri = typeof args[0] === 'string' ? args[0] : vs.window.activeTextEditor?.document.uri.toString();
  if (!uri) return;
  let layer = HEATLAYER_VALUES.find((l) => l === args[1]);
  if (!layer) {
    const { shown, available } = heat.layerOf(uri);
    if (available.length === 0) {
      void vs.window.showInformationMessage('NKI: no heat in this editor. Load a profile or simulate the kernel.');
      return;
    }
    const why: Record<HeatLayer, string> = {
      measured: 'the loaded profile',
      estimate: "the last simulation's estimate (not measured)",
      compare: 'measured − estimated per line, and the kernel’s estimated / measured',
    };
    const pick = await vs.window.showQuickPick(
      available.map((l) => ({
        label: LAYER_NAMES[l],
        description: l === shown?.layer ? 'shown' : undefined,
        detail: why[l],
        layer: l,
      })),
      { title: 'NKI: heat layer' },
    );
    if (!pick) return;
    layer = pick.layer;
  }
  try {
    const answer = await server.executeCommand(SERVER_COMMANDS.selectHeatLayer, [uri, layer]);
    heat.applyLayer(answer as HeatLayerParams);
    deps.panel.refresh();
  } catch (err) {
    void vs.window.showErrorMessage(`NKI: ${describeFailure('Switch heat layer', err)}`);
  }
}

/** Open `uri` (a string, as the panel's command links pass it) with the cursor on 0-based `line`. */
async function goToLine(vs: VsCode, uri: unknown, line: unknown): Promise<void> {
  if (typeof uri !== 'string' || typeof line !== 'number' || !Number.isInteger(line) || line < 0) return;
  const pos = new vs.Position(line, 0);
  await vs.window.showTextDocument(vs.Uri.parse(uri), {
    selection: new vs.Range(pos, pos),
    preserveFocus: false,
  });
}
