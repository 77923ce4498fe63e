/**
 * Rule pages read, not edited: a diagnostic's code link opens the installed rule page (docs/rules/NKI###.md,
 * generated from the code catalogue by the server's `nki_studio.nkilint.rule_docs`) as a text editor; such an
 * editor is swapped at once for VS Code's Markdown preview of the same file, which is rendered and read-only
 * (and shows nothing of the page's "generated from the code catalogue" comment, an HTML comment).
 */
import type * as vscode from 'vscode';
import type { VsCode } from './vscodeApi';

/** The first line every generated rule page starts with (server/nkilint/rule_docs.py). */
export const GENERATED_MARK = '<!-- generated from the code catalogue';
const RULE_FILE = /(?:^|[\\/])NKI\d{3}\.md$/;

/** Whether `doc` is a generated rule page on disk. */
export function isRulePage(doc: Pick<vscode.TextDocument, 'uri' | 'lineAt' | 'lineCount'>): boolean {
  return (
    doc.uri.scheme === 'file' &&
    RULE_FILE.test(doc.uri.fsPath) &&
    doc.lineCount > 0 &&
    doc.lineAt(0).text.startsWith(GENERATED_MARK)
  );
}

/** Swap every rule page opened in a text editor for its rendered preview. */
export function renderRulePages(vs: VsCode): vscode.Disposable {
  return vs.window.onDidChangeActiveTextEditor((editor) => {
    if (!editor || !isRulePage(editor.document)) return;
    const uri = editor.document.uri;
    void (async () => {
      await vs.commands.executeCommand('workbench.action.closeActiveEditor');
      await vs.commands.executeCommand('markdown.showPreview', uri);
    })();
  });
}
