/**
 * Load Profile's file dialog. A Neuron Explorer Parquet output is a folder and the other formats are files, and
 * one dialog cannot do both well (a folder double-clicked is entered, not picked; native dialogs pick either
 * files or folders): the user says which first, then gets a dialog that picks only that, with source files
 * (`.py`) filtered out.
 */
import type * as vscode from 'vscode';
import type { VsCode } from './vscodeApi';

export type ProfileKind = 'folder' | 'file';

/**
 * File profiles by extension (server/profile/readers/detect.py: JSON, Perfetto, a Parquet table; it also
 * detects by content, hence "All files" as the second filter).
 */
export const PROFILE_FILE_EXTENSIONS = ['json', 'pftrace', 'perfetto-trace', 'pb', 'gz', 'parquet'];

export const PROFILE_KINDS: readonly (vscode.QuickPickItem & { profile: ProfileKind })[] = [
  {
    profile: 'folder',
    label: 'Parquet output folder…',
    detail: 'the folder neuron-explorer wrote (or its CSV export)',
  },
  { profile: 'file', label: 'Profile file…', detail: '.json, summary .json or .pftrace' },
];

/** The open dialog for one kind of profile. */
export function profileDialogOptions(kind: ProfileKind): vscode.OpenDialogOptions {
  const common = { canSelectMany: false, openLabel: 'Load Profile' };
  if (kind === 'folder')
    return {
      ...common,
      title: 'NKI: load a Neuron Explorer Parquet output folder',
      canSelectFiles: false,
      canSelectFolders: true,
    };
  return {
    ...common,
    title: 'NKI: load a Neuron Explorer profile file (.json, summary .json, .pftrace)',
    canSelectFiles: true,
    canSelectFolders: false,
    filters: { 'Neuron profiles': PROFILE_FILE_EXTENSIONS, 'All files': ['*'] },
  };
}

/** Ask for the kind, then the profile; undefined when the user cancels either. */
export async function pickProfile(vs: VsCode): Promise<vscode.Uri | undefined> {
  const kind = await vs.window.showQuickPick(PROFILE_KINDS, { title: 'NKI: load a profile' });
  if (!kind) return undefined;
  const picked = await vs.window.showOpenDialog(profileDialogOptions(kind.profile));
  return picked?.[0];
}
