/** Driving the VS Code workbench in headless Chromium with playwright-core (no downloaded browsers). */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type Browser, type Page, chromium } from 'playwright-core';
import { ARTIFACTS } from './codeServer';

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export class Workbench {
  constructor(readonly page: Page) {}

  static async open(browser: Browser, url: string): Promise<Workbench> {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(url);
    await page.waitForSelector('.monaco-workbench', { timeout: 90_000 });
    return new Workbench(page);
  }

  async screenshot(name: string): Promise<void> {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await this.page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
  }

  /** Open a file by clicking it in the explorer (Quick Open typed early is eaten by the welcome page). */
  async openFile(name: string): Promise<void> {
    const item = this.page.getByRole('treeitem', { name, exact: true });
    await item.waitFor({ timeout: 60_000 });
    await item.click();
    await this.page.waitForSelector(`.tab[data-resource-name="${name}"], .tab[aria-label^="${name}"]`, {
      timeout: 30_000,
    });
    await this.page.locator('.monaco-editor .view-lines').first().waitFor();
  }

  /** Run a command by its palette title, e.g. "NKI: Simulate Kernel". */
  async runCommand(title: string): Promise<void> {
    await this.page.keyboard.press('Escape'); // close any menu or widget left open
    await this.page.keyboard.press('F1');
    const input = this.page.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill(`>${title}`);
    const row = this.page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first();
    await row.waitFor({ timeout: 15_000 });
    await this.page.keyboard.press('Enter');
  }

  /** Text of every row of the Problems panel (opened if needed). */
  async problems(): Promise<string[]> {
    if (!(await this.page.locator('.markers-panel').isVisible())) await this.page.keyboard.press('Control+Shift+M');
    await this.page.locator('.markers-panel').waitFor();
    return this.page.locator('.markers-panel .monaco-list-row').allInnerTexts();
  }

  async waitForProblem(pattern: RegExp, timeoutMs = 60_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const rows = await this.problems();
      const hit = rows.find((r) => pattern.test(r));
      if (hit) return hit;
      if (Date.now() > deadline)
        throw new Error(`no problem matching ${pattern} within ${timeoutMs} ms; rows: ${JSON.stringify(rows)}`);
      await this.page.waitForTimeout(500);
    }
  }

  async waitForNoProblem(pattern: RegExp, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const rows = await this.problems();
      if (!rows.some((r) => pattern.test(r))) return;
      if (Date.now() > deadline)
        throw new Error(`problem matching ${pattern} still there after ${timeoutMs} ms: ${JSON.stringify(rows)}`);
      await this.page.waitForTimeout(500);
    }
  }

  /** Wait for a notification toast whose text matches; returns its text. */
  async waitForNotification(pattern: RegExp, timeoutMs = 120_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const texts = await this.page
        .locator('.notifications-toasts .notification-toast, .notification-list-item-message')
        .allInnerTexts();
      const hit = texts.find((t) => pattern.test(t));
      if (hit) return hit;
      if (Date.now() > deadline)
        throw new Error(`no notification matching ${pattern} within ${timeoutMs} ms; saw ${JSON.stringify(texts)}`);
      await this.page.waitForTimeout(500);
    }
  }

  /** Put the cursor on a 1-based line (Ctrl+G). */
  async goToLine(line: number, column = 1): Promise<void> {
    await this.page.keyboard.press('Escape');
    await this.page.locator('.monaco-editor .view-lines').first().click();
    await this.page.keyboard.press('Control+G');
    const input = this.page.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill(`:${line}:${column}`);
    await this.page.keyboard.press('Enter');
  }

  /** Lines (1-based) on screen whose decoration draws a heat bar before the code, with the bar's text. */
  async heatBars(): Promise<Map<number, string>> {
    return new Map(await this.page.evaluate<[number, string][]>(`(${readHeatBars.toString()})()`));
  }

  /**
   * Start watching the editor for the next change of the heat bars on screen: every animation frame reads
   * them; the first frame that differs from now and the last frame that changed them (once they have been
   * still for SETTLE_MS) are recorded. Also the first frame whose status bar shows `statusText` (the heat
   * legend, sent right after the decorations: a same-run baseline for getting any change on screen), and
   * renderer main-thread tasks over 50 ms meanwhile. Read the result with heatBarsSettled.
   */
  async watchHeatBars(statusText: string): Promise<void> {
    await this.page.evaluate(
      `(${watchHeatBars.toString()})(${readHeatBars.toString()}, ${JSON.stringify(statusText)}, ${SETTLE_MS})`,
    );
  }

  /** The watch's result once the bars changed and settled and the legend showed, else undefined. */
  async heatBarsSettled(): Promise<HeatBarsWatch | undefined> {
    const w = await this.page.evaluate<HeatBarsWatch | null>('window.__nkiHeatWatch ?? null');
    return w?.done ? w : undefined;
  }

  /** Hover the text of a 1-based line and return the hover widget's text. */
  async hoverLine(line: number): Promise<string> {
    const row = await this.page.evaluateHandle((n) => {
      const gutter = Array.from(
        document.querySelectorAll<HTMLElement>('.monaco-editor .margin-view-overlays .line-numbers'),
      ).find((g) => g.textContent?.trim() === String(n));
      if (!gutter) return null;
      const y = gutter.getBoundingClientRect().top + 5;
      return (
        Array.from(document.querySelectorAll<HTMLElement>('.monaco-editor .view-line')).find(
          (l) => Math.abs(l.getBoundingClientRect().top + 5 - y) < 4,
        ) ?? null
      );
    }, line);
    const el = row.asElement();
    if (!el) throw new Error(`line ${line} is not on screen`);
    const viewport = await el.evaluate((l) => {
      const r = l.closest('.monaco-scrollable-element')?.getBoundingClientRect();
      return r ? { x: r.x, width: r.width } : null;
    });
    let box = await el.boundingBox();
    if (!box || !viewport) throw new Error(`line ${line} has no box`);
    if (box.x < viewport.x) {
      // the view is scrolled sideways (seen once in CI): the line's start, and the hover point, are off the text
      await this.page.mouse.move(viewport.x + viewport.width / 2, box.y + box.height / 2);
      await this.page.mouse.wheel(-100_000, 0);
      await this.page.waitForTimeout(200);
      box = (await el.boundingBox()) ?? box;
    }
    // hover over the code, to the right of the bar
    await this.page.mouse.move(Math.max(box.x, viewport.x) + 220, box.y + box.height / 2);
    const hover = this.page
      .locator('.monaco-hover:not(.hidden) .monaco-hover-content, .monaco-hover:not(.hidden) .hover-contents')
      .first();
    await hover.waitFor({ timeout: 15_000 });
    return hover.innerText();
  }

  /** Text of the first webview frame whose body matches `pattern` (webviews are nested iframes). */
  async webviewText(pattern: RegExp, timeoutMs = 30_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const frame of this.page.frames()) {
        const text = await frame.evaluate(() => document.body?.innerText ?? '').catch(() => '');
        if (pattern.test(text)) return text;
      }
      if (Date.now() > deadline) throw new Error(`no webview showing ${pattern} within ${timeoutMs} ms`);
      await this.page.waitForTimeout(500);
    }
  }

  /** The status bar's text (all items). */
  async statusBar(): Promise<string> {
    return this.page.locator('.statusbar').innerText();
  }
}

export interface HeatBarsWatch {
  /** Date.now() in the page at the first animation frame showing changed bars. */
  changedAt: number;
  /** Date.now() at the last frame that changed them: the new bars are complete on screen. */
  lastChangeAt: number;
  /** Date.now() at the first frame whose status bar contains the watched text (0: not yet). */
  statusAt: number;
  done: boolean;
  /** Renderer main-thread long tasks (> 50 ms) since the watch started: epoch start and duration. */
  longTasks: { start: number; ms: number }[];
}

/** How long the bars must stay unchanged before the watch calls them complete. */
const SETTLE_MS = 1500;

/**
 * Runs in the page: [line, bar text] for every line on screen with a heat bar. Decoration text lives in CSS
 * ::before content, so it is read from computed styles; the line number is the gutter's at the same height.
 */
function readHeatBars(): [number, string][] {
  const out: [number, string][] = [];
  const editor = document.querySelector('.monaco-editor .view-lines');
  if (!editor) return out;
  const lines = Array.from(editor.querySelectorAll<HTMLElement>('.view-line'));
  const lineHeight = lines[0]?.offsetHeight || 19;
  const gutter = Array.from(
    document.querySelectorAll<HTMLElement>('.monaco-editor .margin-view-overlays .line-numbers'),
  );
  for (const line of lines) {
    const top = Number.parseFloat(line.style.top || '0');
    const number = gutter.find(
      (g) => Math.abs(g.getBoundingClientRect().top - line.getBoundingClientRect().top) < lineHeight / 2,
    );
    for (const span of Array.from(line.querySelectorAll('span'))) {
      const content = getComputedStyle(span, '::before').content;
      if (content && content !== 'none' && content !== 'normal' && /[█▏▎▍▌▋▊▉]/.test(content)) {
        out.push([number ? Number(number.textContent) : Math.round(top / lineHeight) + 1, content]);
      }
    }
  }
  return out.sort((a, b) => a[0] - b[0]);
}

/** Runs in the page: reads the bars (and the status bar) on every animation frame until they settled. */
function watchHeatBars(read: () => [number, string][], statusText: string, settleMs: number): void {
  const state: HeatBarsWatch = { changedAt: 0, lastChangeAt: 0, statusAt: 0, done: false, longTasks: [] };
  (window as unknown as { __nkiHeatWatch: HeatBarsWatch }).__nkiHeatWatch = state;
  let previous = JSON.stringify(read());
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      state.longTasks.push({ start: performance.timeOrigin + e.startTime, ms: e.duration });
  });
  observer.observe({ type: 'longtask' });
  const tick = (): void => {
    const t = Date.now();
    if (!state.statusAt && (document.querySelector<HTMLElement>('.statusbar')?.innerText ?? '').includes(statusText))
      state.statusAt = t;
    const now = JSON.stringify(read());
    if (now !== previous && now !== '[]') {
      state.changedAt ||= t;
      state.lastChangeAt = t;
      previous = now;
    }
    if (state.changedAt && state.statusAt && t - state.lastChangeAt > settleMs) {
      observer.disconnect();
      state.done = true;
      return;
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}
