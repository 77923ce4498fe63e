/**
 * Restricted mode and simulation: running a kernel executes the workspace's code, so an untrusted workspace is
 * offered no way to start one (the server's Simulate CodeLens is filtered out), and any attempt is refused with a
 * button to the Workspace Trust editor.
 */
import type * as vscode from 'vscode';
import { SERVER_COMMANDS } from './protocol.generated';
import type { VsCode } from './vscodeApi';

/** The server's command that runs a kernel (its CodeLens and the Simulate Kernel command send it). */
export const SERVER_SIMULATE_COMMAND = SERVER_COMMANDS.simulate;

export const TRUST_NEEDED =
  "Running a kernel executes this workspace's code, so NKI Studio only does it in a trusted workspace. Linting still works.";

export const MANAGE_TRUST = 'Manage Workspace Trust';

/** In a trusted workspace false; else shows the refusal (with its Manage Workspace Trust button) and is true. */
export function refuseUntrusted(vs: VsCode): boolean {
  if (vs.workspace.isTrusted) return false;
  void vs.window.showWarningMessage(`NKI: ${TRUST_NEEDED}`, MANAGE_TRUST).then((pick) => {
    if (pick) void vs.commands.executeCommand('workbench.trust.manage');
  });
  return true;
}

/** The CodeLenses to show: in restricted mode none that would run a kernel. */
export function lensesFor<T extends Pick<vscode.CodeLens, 'command'>>(
  lenses: readonly T[] | null | undefined,
  trusted: boolean,
): T[] | null | undefined {
  if (trusted || !lenses) return lenses as T[] | null | undefined;
  return lenses.filter((lens) => lens.command?.command !== SERVER_SIMULATE_COMMAND);
}
