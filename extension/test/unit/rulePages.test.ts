import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GENERATED_MARK, isRulePage, renderRulePages } from '../../src/rulePages';
import { FakeEditor, FakeVsCode } from '../support/fakeVscode';

const PAGE = `${GENERATED_MARK} by nki_studio.nkilint.rule_docs; edit the rule module -->\n# NKI101 try-in-kernel\n`;

function doc(path: string, text: string): FakeEditor['document'] & { uri: { scheme: string } } {
  const d = new FakeEditor(`file://${path}`, text).document;
  return { ...d, uri: { ...d.uri, scheme: 'file' } };
}

describe('rule pages', () => {
  it('knows a generated rule page from other Markdown', () => {
    assert.equal(isRulePage(doc('/x/docs/rules/NKI101.md', PAGE) as never), true);
    assert.equal(isRulePage(doc('/x/docs/rules/README.md', PAGE) as never), false);
    assert.equal(isRulePage(doc('/x/notes/NKI101.md', '# my notes\n') as never), false);
  });

  it('swaps a rule page opened as text for its rendered preview, and leaves other files alone', async () => {
    const fake = new FakeVsCode();
    renderRulePages(fake.api());
    const other = new FakeEditor('file:///x/k.py', 'import nki\n');
    fake.activeEditorChanged.fire(other);
    const page = new FakeEditor('file:///x/docs/rules/NKI101.md', PAGE);
    (page.document.uri as { scheme?: string }).scheme = 'file';
    fake.activeEditorChanged.fire(page);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(fake.executed, [
      ['workbench.action.closeActiveEditor'],
      ['markdown.showPreview', page.document.uri],
    ]);
  });
});
