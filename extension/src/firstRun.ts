/**
 * A kernel's first simulation without reading the docs: Simulate Kernel on a kernel without a usable spec asks
 * for each parameter's shape and dtype (input boxes pre-filled with the server's guesses: the spec comment, the
 * kernel's asserts, its last run, else an example) and offers to write the spec comment; "Add reference" writes
 * a reference function to fill in and names it in the spec. The server computes the guesses and the edits
 * (server/service/first_run.py); this module only asks and applies them.
 */
import type * as vscode from 'vscode';
import {
  type LineEdit,
  type ParameterGuess,
  type ReferenceTemplate,
  SERVER_COMMANDS,
  type ServerCommand,
  type ServerCommandArguments,
  type SpecGuesses,
  type SpecWrite,
} from './protocol.generated';
import type { VsCode } from './vscodeApi';

/** Runs one language server command (ServerManager.executeCommand without progress). */
export type RunServerCommand = <C extends ServerCommand>(
  command: C,
  args: ServerCommandArguments[C],
) => Promise<unknown>;

const SOURCE_WORDS: Record<ParameterGuess['source'], string> = {
  spec: 'from its spec comment',
  asserts: "from the kernel's asserts",
  'type hint': "from the parameter's type hint",
  tests: "from the kernel's calls in the project's tests",
  'last run': 'from the last run',
  example: 'an example: edit it',
};

export const WRITE_SPEC_CHOICE = 'Write the spec comment and simulate';

/** The open document of `uri`, if VS Code has it. */
export function documentOf(vs: VsCode, uri: string): vscode.TextDocument | undefined {
  return vs.workspace.textDocuments.find((d) => d.uri.toString() === uri);
}

/** Apply the server's whole-line edits to `doc` as one WorkspaceEdit (one undo step); true when VS Code applied it. */
export async function applyLineEdits(
  vs: VsCode,
  doc: vscode.TextDocument,
  edits: readonly LineEdit[],
): Promise<boolean> {
  const change = new vs.WorkspaceEdit();
  for (const edit of edits) {
    const start = new vs.Position(edit.line, 0);
    if (edit.replace) change.replace(doc.uri, new vs.Range(start, new vs.Position(edit.line + 1, 0)), edit.text);
    else change.insert(doc.uri, start, edit.text);
  }
  return vs.workspace.applyEdit(change);
}

/**
 * Make sure `kernel` of `doc` has a spec before it is simulated: when it has none the server can use, ask for each
 * parameter, offer to write the comment and write it. True: ready to simulate; false: the user stopped (or the
 * values did not parse, which is said).
 */
export async function ensureSpec(
  vs: VsCode,
  run: RunServerCommand,
  doc: vscode.TextDocument,
  kernel: string,
): Promise<boolean> {
  const uri = doc.uri.toString();
  const guesses = (await run(SERVER_COMMANDS.specGuesses, [uri, kernel])) as SpecGuesses | null;
  if (!guesses?.needed) return true;
  const values: Record<string, string> = {};
  const count = guesses.parameters.length;
  for (const [i, p] of guesses.parameters.entries()) {
    const value = await vs.window.showInputBox({
      title: `NKI: simulate ${kernel}: shape and dtype of ${p.name} (${i + 1} of ${count})`,
      prompt: `${p.name} as dtype[shape] (e.g. bfloat16[128,512]) or a number; pre-filled ${SOURCE_WORDS[p.source]}`,
      value: p.value,
      ignoreFocusOut: true,
    });
    if (value === undefined) return false;
    values[p.name] = value.trim();
  }
  const written = (await run(SERVER_COMMANDS.writeSpec, [uri, kernel, values])) as SpecWrite | null;
  if (!written?.edit) {
    const problems = written?.problems.join('; ') ?? 'the server gave no answer';
    void vs.window.showErrorMessage(`NKI: cannot write the spec of ${kernel}: ${problems}`);
    return false;
  }
  const pick = await vs.window.showQuickPick([{ label: WRITE_SPEC_CHOICE, detail: written.edit.text.trim() }], {
    title: `NKI: simulate ${kernel}: write its spec comment above the kernel?`,
    ignoreFocusOut: true,
  });
  if (!pick) return false;
  if (!(await applyLineEdits(vs, doc, [written.edit]))) return false;
  await doc.save();
  return true;
}

/** Add a reference function template for `kernel` and name it in its spec; the function's name, or undefined. */
export async function addReference(
  vs: VsCode,
  run: RunServerCommand,
  doc: vscode.TextDocument,
  kernel: string,
): Promise<string | undefined> {
  const template = (await run(SERVER_COMMANDS.referenceTemplate, [
    doc.uri.toString(),
    kernel,
  ])) as ReferenceTemplate | null;
  if (!template || !(await applyLineEdits(vs, doc, [template.edit]))) {
    void vs.window.showErrorMessage(`NKI: could not add a reference for ${kernel}.`);
    return undefined;
  }
  const at = new vs.Position(template.edit.line, 0);
  await vs.window.showTextDocument(doc, { selection: new vs.Range(at, at) });
  void vs.window.showInformationMessage(
    `NKI: ${template.function} added above ${kernel} and named in its spec: write what ${kernel} must return, then simulate.`,
  );
  return template.function;
}
