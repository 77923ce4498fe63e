/**
 * End-to-end while editing (issue 29 items 4, 5, 6, 8), in a real VS Code (code-server + headless Chromium) with
 * the packaged .vsix: a passing small kernel leaves the Problems panel empty; a half-typed spec line gives no
 * NKI601 and keeps the Simulate lens; a simulation error goes away when the file changes on disk; Simulate Kernel
 * on a kernel without a spec asks for its parameter, writes the spec and runs; a rule link opens the rendered
 * page. Screenshots go to test-artifacts/extension/editing-*.png.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Session, openSession } from './session';
import type { Workbench } from './workbench';

const PASSING = 'small_add.py';
const BROKEN = 'broken.py';
const NO_SPEC = 'no_spec.py';
const LINTED = 'deprecated_loop.py';

const PASSING_TEXT = `import nki
import nki.language as nl


def ref_add(a, b):
    return a + b


# nki-studio: simulate a=float32[128,512] b=float32[128,512] reference=ref_add
@nki.jit
def add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.add(nl.load(a), nl.load(b)))
    return out
`;
const SPEC_LINE = 9; // 1-based line of the spec comment above

const NO_SPEC_TEXT = `import nki
import nki.language as nl


@nki.jit
def scale(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.multiply(nl.load(a), 2.0))
    return out
`;

describe(
  'editing: quiet, never stale diagnostics and a first simulation without the docs',
  { timeout: 600_000 },
  () => {
    let session: Session;
    let wb: Workbench;
    let workspace: string;
    const sources = fs.mkdtempSync(path.join(os.tmpdir(), 'nki-e2e-editing-'));

    before(async () => {
      fs.writeFileSync(path.join(sources, PASSING), PASSING_TEXT);
      fs.writeFileSync(path.join(sources, NO_SPEC), NO_SPEC_TEXT);
      session = await openSession(
        {
          [PASSING]: path.join(sources, PASSING),
          [NO_SPEC]: path.join(sources, NO_SPEC),
          [BROKEN]: 'tests/verify/data/broken_kernel.py',
          [LINTED]: `examples/${LINTED}`,
        },
        { trusted: true, settings: { 'nki-studio.simulateOnSave': true } },
      );
      ({ wb, workspace } = session);
    });

    after(async () => {
      await session?.close('editing-final');
      fs.rmSync(sources, { recursive: true, force: true });
    });

    /** The text of the code lenses on screen. */
    async function lenses(): Promise<string[]> {
      return wb.page.locator('.monaco-editor .codelens-decoration').allInnerTexts();
    }

    async function waitForLens(pattern: RegExp, timeoutMs: number): Promise<string> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = (await lenses()).find((t) => pattern.test(t));
        if (hit) return hit;
        if (Date.now() > deadline)
          throw new Error(`no code lens matching ${pattern}; saw ${JSON.stringify(await lenses())}`);
        await wb.page.waitForTimeout(500);
      }
    }

    /** The editor's text on screen (Monaco renders spaces as no-break spaces). */
    async function editorText(): Promise<string> {
      return (await wb.page.locator('.monaco-editor .view-lines').first().innerText()).replace(/\u00a0/g, ' ');
    }

    it('a passing small kernel gets no Problems entry', async () => {
      await wb.openFile(PASSING);
      await wb.page.locator('.monaco-editor .view-lines').first().click();
      // the full server is up (a save before it has the trusted settings simulates nothing): its lens is there
      await waitForLens(/Simulate add/, 120_000);
      await wb.page.keyboard.press('Control+S'); // simulate on save
      await waitForLens(/last: passed/, 180_000); // the server asks for the lenses again after a result
      await wb.page.waitForTimeout(1500); // the diagnostics of the result follow it
      const rows = await wb.problems();
      await wb.screenshot('editing-passing-no-problems');
      assert.deepEqual(rows, [], `Problems panel: ${JSON.stringify(rows)}`);
    });

    it('a half-typed spec line gives no NKI601 and the Simulate lens stays', async () => {
      await wb.openFile(PASSING);
      await wb.goToLine(SPEC_LINE);
      await wb.page.keyboard.press('End');
      await wb.page.keyboard.type(' seed=', { delay: 40 });
      await wb.page.waitForTimeout(2500); // past the debounce: a spec check has run on this text
      const rows = await wb.problems();
      const shown = await lenses();
      await wb.screenshot('editing-half-typed-spec');
      assert.ok(!rows.some((r) => /NKI601/.test(r)), `NKI601 while typing: ${JSON.stringify(rows)}`);
      assert.ok(
        shown.some((t) => /Simulate add/.test(t)),
        `the Simulate lens is gone: ${JSON.stringify(shown)}`,
      );
      // saved as it is, the unfinished value is reported; taken back, it is gone
      await wb.page.keyboard.press('Control+S');
      await wb.waitForProblem(/NKI601/, 30_000);
      for (let i = 0; i < ' seed='.length; i += 1) await wb.page.keyboard.press('Backspace');
      await wb.page.keyboard.press('Control+S');
      await wb.waitForNoProblem(/NKI601/, 30_000);
    });

    it('a simulation error goes away when the file changes on disk', async () => {
      await wb.openFile(BROKEN);
      await wb.page.locator('.monaco-editor .view-lines').first().click();
      await wb.page.keyboard.press('Control+S');
      await wb.waitForProblem(/NKI610/, 180_000);
      await wb.screenshot('editing-simulation-error');
      // what a git checkout does: the file is rewritten underneath the (saved) editor, which reloads it
      const file = path.join(workspace, BROKEN);
      fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('return t * factor[0]', 'return t * factor'));
      await wb.waitForNoProblem(/NKI610/, 60_000);
      await wb.screenshot('editing-simulation-error-gone');
    });

    it('Simulate Kernel without a spec asks for the parameter, writes the spec and runs', async () => {
      await wb.openFile(NO_SPEC);
      await wb.goToLine(7);
      await wb.runCommand('NKI: Simulate Kernel');
      const input = wb.page.locator('.quick-input-widget input');
      await wb.page.locator('.quick-input-widget', { hasText: 'shape and dtype of a' }).waitFor({ timeout: 60_000 });
      assert.equal(await input.inputValue(), 'float32[128,512]'); // the example to edit: nothing pins a's shape
      await wb.screenshot('editing-parameter-prompt');
      await input.fill('float32[128,64]');
      await wb.page.keyboard.press('Enter');
      await wb.page
        .locator('.quick-input-widget .monaco-list-row', { hasText: 'Write the spec comment and simulate' })
        .waitFor({ timeout: 30_000 });
      await wb.page.keyboard.press('Enter');
      const note = await wb.waitForNotification(/scale: (ran, not checked|passed|failed|error)/, 180_000);
      await wb.screenshot('editing-spec-written-and-run');
      assert.match(note, /scale: ran, not checked/); // no reference yet
      assert.match(await editorText(), /# nki-studio: simulate a=float32\[128,64\]/);
      assert.match(
        fs.readFileSync(path.join(workspace, NO_SPEC), 'utf8'),
        /# nki-studio: simulate a=float32\[128,64\]/,
      );
      // one click adds the reference template the oracle will call
      await wb.page.locator('.notification-toast .monaco-button', { hasText: 'Add Reference' }).first().click();
      await wb.page.waitForTimeout(1500);
      await wb.screenshot('editing-reference-added');
      assert.match(await editorText(), /def ref_scale\(a\)/);
      assert.match(await editorText(), /reference=ref_scale/);
    });

    it('a rule link opens the rendered rule page', async () => {
      await wb.openFile(LINTED);
      const row = wb.page.locator('.markers-panel .monaco-list-row', { hasText: 'NKI201' }).first();
      await wb.waitForProblem(/NKI201/, 90_000);
      await row.locator('.monaco-link, a', { hasText: 'NKI201' }).first().click();
      const text = await wb.webviewText(/NKI201 /, 30_000);
      await wb.screenshot('editing-rule-page');
      assert.doesNotMatch(text, /generated from the code catalogue/);
      assert.ok(
        await wb.page.locator('.tab', { hasText: /Preview.*NKI201/ }).count(),
        'the rule page is not shown as a Markdown preview',
      );
    });
  },
);
