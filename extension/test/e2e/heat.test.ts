/**
 * End-to-end: layers of heat and heat that follows the bottleneck (issue 29 items 1, 2), in a real VS Code with
 * the packaged .vsix. A synthetic measured profile (tests/profile/fixturegen.py, Parquet) is loaded on a
 * DMA-bound example; a save simulates it (simulate-on-save) and must keep the measured layer; switching layers
 * moves bars, legend and hover together, each naming its layer; the estimate of the DMA-bound kernel puts its
 * heat on the dma_copy lines. Screenshots per scenario in test-artifacts/extension/.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { makeProfile } from './fixtures';
import { type Session, openSession } from './session';
import type { Workbench } from './workbench';

const KERNEL = 'rmsnorm_residual_fused.py'; // DMA-bound in the estimate (its bounds' bottleneck is DMA)
const LOAD_PROFILE_KEY = 'ctrl+alt+shift+l';

describe('layers of heat', { timeout: 600_000 }, () => {
  let session: Session;
  let wb: Workbench;
  let workspace: string;
  const profileDir = path.join(os.tmpdir(), `nki-e2e-heat-${process.pid}`);
  const parquet = path.join(profileDir, `${path.parse(KERNEL).name}_synthetic_parquet`);

  before(async () => {
    session = await openSession(
      { [KERNEL]: `examples/${KERNEL}` },
      {
        trusted: true, // simulate-on-save stays on (the default)
        settings: { 'nki-studio.heatmap.style': 'bars' },
        keybindings: [
          { key: LOAD_PROFILE_KEY, command: 'nki-studio.openProfile', args: pathToFileURL(parquet).toString() },
        ],
      },
    );
    ({ wb, workspace } = session);
    fs.mkdirSync(profileDir, { recursive: true });
    assert.equal(makeProfile(path.join(workspace, KERNEL), profileDir).parquet, parquet);
  });

  after(async () => {
    await session?.close('heat-final');
    fs.rmSync(profileDir, { recursive: true, force: true });
  });

  /** The 1-based lines of the workspace copy of the kernel whose text matches `pattern`. */
  function linesMatching(pattern: RegExp): number[] {
    const text = fs.readFileSync(path.join(workspace, KERNEL), 'utf8').split('\n');
    return text.flatMap((l, i) => (pattern.test(l) ? [i + 1] : []));
  }

  /** Bars on screen once some are painted (the heat arrives asynchronously). */
  async function waitForBars(): Promise<Map<number, string>> {
    for (let i = 0; i < 60; i += 1) {
      const bars = await wb.heatBars();
      if (bars.size > 0) return bars;
      await wb.page.waitForTimeout(500);
    }
    return wb.heatBars();
  }

  /** The layer status item (`$(layers) Measured`, with a chevron once the document has several layers). */
  const layerItem = (name: string) =>
    wb.page.locator('.statusbar-item', { hasText: new RegExp(`^\\s*${name}\\s*$`) }).first();

  /** The hover of the painted line nearest the cursor's line 48, once its contents arrived (the widget first says
   * "Loading..."): a line near the top of the view may sit under the sticky-scroll header, where no hover opens. */
  async function hoverBarNearCursor(): Promise<string> {
    await wb.goToLine(48);
    const lines = [...(await waitForBars()).keys()];
    return hoverOnce(lines.reduce((a, b) => (Math.abs(b - 48) < Math.abs(a - 48) ? b : a)));
  }

  async function hoverOnce(line: number): Promise<string> {
    let text = await wb.hoverLine(line);
    for (let i = 0; i < 20 && /^\s*Loading/.test(text); i += 1) {
      await wb.page.waitForTimeout(500);
      text = await wb.page
        .locator('.monaco-hover:not(.hidden) .monaco-hover-content, .monaco-hover:not(.hidden) .hover-contents')
        .first()
        .innerText()
        .catch(() => text);
    }
    return text;
  }

  async function switchLayer(label: string): Promise<void> {
    await wb.runCommand('NKI: Switch Heat Layer');
    const input = wb.page.locator('.quick-input-widget input');
    await input.fill(label);
    await wb.page.locator('.quick-input-widget .monaco-list-row', { hasText: label }).first().waitFor();
    await wb.page.keyboard.press('Enter');
  }

  it('keeps the measured layer when a save simulates the kernel', async () => {
    await wb.openFile(KERNEL);
    await wb.goToLine(1);
    await wb.page.keyboard.press('Control+Alt+Shift+L');
    await wb.waitForNotification(/profile loaded \(parquet\)/, 90_000);
    await wb.goToLine(48);
    assert.ok((await waitForBars()).size >= 3, 'the measured profile painted no bars');
    assert.match(await wb.statusBar(), /measured · /);
    await wb.screenshot('heat-measured-loaded');

    // an edit that only adds a comment, and a save: simulate-on-save runs the kernel and sends its estimate
    await wb.goToLine(linesMatching(/^\s+for i in range/)[0]);
    await wb.page.keyboard.press('End');
    await wb.page.keyboard.type('  # saved');
    await wb.page.keyboard.press('Control+S');
    // the estimate arrives as a second layer: the layer item gets its chevron, the shown layer stays measured
    await layerItem('Measured').locator('.codicon-chevron-down').waitFor({ timeout: 240_000 });
    const status = await wb.statusBar();
    assert.match(status, /measured · /);
    assert.doesNotMatch(status, /· estimated/);
    const hover = await hoverBarNearCursor();
    await wb.screenshot('heat-measured-after-save');
    assert.match(hover, /Measured, from/);
    assert.doesNotMatch(hover, /Estimated/);
  });

  it('switches to the estimated layer: bars, legend and hover agree and name it; DMA-bound heat on dma_copy', async () => {
    await switchLayer('Estimated');
    await layerItem('Estimated').waitFor({ timeout: 30_000 });
    assert.match(await wb.statusBar(), /· estimated/);
    await wb.goToLine(48);
    await wb.page.waitForTimeout(500);
    const bars = await waitForBars();
    await wb.screenshot('heat-estimated-dma-bound');
    // auto metric: the estimate is DMA-bound, so only the lines that issue DMA are hot, and all four of them
    const dma = linesMatching(/nisa\.dma_copy/);
    assert.deepEqual(
      [...bars.keys()].sort((a, b) => a - b),
      dma,
      `bars on ${JSON.stringify([...bars.keys()])}, dma_copy lines ${JSON.stringify(dma)}`,
    );
    assert.match(await wb.statusBar(), /DMA time issued/);
    const hover = await hoverOnce(dma[0]);
    await wb.screenshot('heat-estimated-hover');
    assert.match(hover, /Estimated \(simulator trace, not measured\)/);
    assert.doesNotMatch(hover, /Measured, from/);
  });

  it('switches back to the measured layer, every view with it', async () => {
    await switchLayer('Measured');
    await wb.page.waitForTimeout(500);
    assert.match(await wb.statusBar(), /measured · /);
    const hover = await hoverBarNearCursor();
    await wb.screenshot('heat-measured-again');
    assert.match(hover, /Measured, from/);
    assert.doesNotMatch(hover, /Estimated/);
  });
});
