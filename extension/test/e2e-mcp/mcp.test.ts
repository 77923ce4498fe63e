/**
 * Agent mode in a real VS Code >= 1.101 (code-server 4.103.2 = VS Code 1.103.2, on Node 22; both installed by
 * scripts/setup-extension.sh): the packaged .vsix registers nki-studio's MCP server with
 * `vscode.lm.registerMcpServerDefinitionProvider`; VS Code lists it ("MCP: List Servers"), starts it and
 * discovers its tools (its MCP output channel); an untrusted workspace is offered no server until trusted.
 * Runs after the main suite (scripts/test.sh), with its own code-server. Screenshots: test-artifacts/extension/.
 * The labels below are VS Code 1.103's own (read on screen): "Stopped"/"Running", "Start Server",
 * "Show Output", "Discovered N tools".
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ROOT, VSCODE_1_103 } from '../e2e/codeServer';
import { type Session, openSession } from '../e2e/session';
import type { Workbench } from '../e2e/workbench';

const KERNEL = 'deprecated_loop.py';
// The example workspace: a kernel with a known finding (proof the extension is active) and two more.
const FILES = {
  [KERNEL]: `examples/${KERNEL}`,
  'rmsnorm_residual.py': 'examples/rmsnorm_residual.py',
  'rmsnorm_residual_fused.py': 'examples/rmsnorm_residual_fused.py',
};
const NKI201 = /NKI201/;
const LABEL = 'NKI Studio'; // MCP_LABEL in extension/src/mcpServer.ts
// The tools the server declares (server/mcp/schemas.py), read from that one declaration; profile_remote only with
// a host configured and remote profiling enabled (neither is set here).
const TOOLS = Number(
  execFileSync(
    path.join(ROOT, '.venv', 'bin', 'python'),
    ['-c', "from nki_studio.mcp.schemas import TOOLS; print(len([t for t in TOOLS if t != 'profile_remote']))"],
    { encoding: 'utf8' },
  ).trim(),
);

/** The rows of the open quick pick. */
function pickRows(wb: Workbench): Promise<string[]> {
  return wb.page.locator('.quick-input-widget .monaco-list-row').allInnerTexts();
}

/** Choose the quick-pick row containing `text` by keyboard (a hover over the first row takes mouse clicks). */
async function pick(wb: Workbench, text: string): Promise<void> {
  await wb.page.locator('.quick-input-widget .monaco-list-row', { hasText: text }).first().waitFor({ timeout: 20_000 });
  await wb.page.locator('.quick-input-widget input').fill(text);
  await wb.page.keyboard.press('Enter');
}

/** "MCP: List Servers", then wait until some row matches `want` (or, with `want` undefined, a second). */
async function listServers(wb: Workbench, want?: RegExp, timeoutMs = 30_000): Promise<string[]> {
  await wb.runCommand('MCP: List Servers');
  await wb.page.locator('.quick-input-widget .monaco-list-row').first().waitFor({ timeout: 20_000 });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await pickRows(wb);
    if (want ? rows.some((r) => want.test(r)) : Date.now() > deadline) return rows;
    if (Date.now() > deadline)
      throw new Error(`no server row matching ${want} within ${timeoutMs} ms: ${JSON.stringify(rows)}`);
    await wb.page.waitForTimeout(500);
  }
}

/** Open our server's MCP output channel through the list (List Servers → NKI Studio → Show Output). */
async function showServerOutput(wb: Workbench): Promise<void> {
  await listServers(wb, new RegExp(LABEL));
  await pick(wb, LABEL);
  await pick(wb, 'Show Output');
  await wb.page.locator('.output-view .view-lines').first().waitFor({ timeout: 20_000 });
}

async function waitForOutput(wb: Workbench, pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // Monaco renders spaces as no-break spaces
    const text = (await wb.page.locator('.output-view .view-lines').allInnerTexts()).join('\n').replace(/\u00a0/g, ' ');
    const m = text.match(pattern);
    if (m) return m;
    if (Date.now() > deadline) throw new Error(`output never matched ${pattern} within ${timeoutMs} ms:\n${text}`);
    await wb.page.waitForTimeout(500);
  }
}

describe('MCP server in VS Code 1.103, trusted workspace', { timeout: 300_000 }, () => {
  let session: Session;
  let wb: Workbench;

  before(async () => {
    session = await openSession(FILES, {
      trusted: true,
      settings: { 'nki-studio.simulateOnSave': false },
      build: VSCODE_1_103,
    });
    ({ wb } = session);
  });
  after(async () => {
    await session?.close('mcp-trusted-final');
  });

  it('lists our server definition', async () => {
    await wb.openFile(KERNEL);
    await wb.waitForProblem(NKI201, 120_000); // the extension is active
    const rows = await listServers(wb, new RegExp(`^${LABEL}\\s*Stopped`));
    await wb.screenshot('mcp-list-servers');
    assert.equal(rows.filter((r) => r.startsWith(LABEL)).length, 1, JSON.stringify(rows));
  });

  it('starts it and VS Code discovers its tools', async () => {
    await pick(wb, LABEL);
    await pick(wb, 'Start Server');
    // VS Code 1.103 brings up the server's output channel itself when it starts one; open it if not.
    const shown = await wb.page
      .locator('.output-view .view-lines', { hasText: `Starting server ${LABEL}` })
      .first()
      .waitFor({ timeout: 15_000 })
      .then(() => true)
      .catch(() => false);
    if (!shown) await showServerOutput(wb);
    const m = await waitForOutput(wb, /Discovered (\d+) tools/, 120_000);
    await wb.screenshot('mcp-server-output');
    assert.equal(Number(m[1]), TOOLS);
    await wb.page.locator('.monaco-editor .view-lines').first().click(); // out of the output view, for F1
    const rows = await listServers(wb, new RegExp(`^${LABEL}\\s*Running`));
    await wb.screenshot('mcp-list-running');
    assert.ok(rows.some((r) => r.startsWith(LABEL)));
    await wb.page.keyboard.press('Escape');
  });
});

describe('MCP server in VS Code 1.103, untrusted workspace', { timeout: 300_000 }, () => {
  let session: Session;
  let wb: Workbench;

  before(async () => {
    session = await openSession(FILES, { trusted: false, build: VSCODE_1_103 });
    ({ wb } = session);
  });
  after(async () => {
    await session?.close('mcp-untrusted-final');
  });

  it('offers no server', async () => {
    await wb.openFile(KERNEL);
    await wb.waitForProblem(NKI201, 120_000); // the extension is active (restricted mode still lints)
    const rows = await listServers(wb, undefined, 5_000);
    await wb.screenshot('mcp-untrusted-list');
    assert.ok(!rows.some((r) => r.includes(LABEL)), JSON.stringify(rows));
    await wb.page.keyboard.press('Escape');
  });

  it('offers it once the workspace is trusted', async () => {
    await wb.runCommand('Workspaces: Manage Workspace Trust');
    const trust = wb.page.locator('.workspace-trust-editor .monaco-button', { hasText: /^Trust/ }).first();
    await trust.waitFor({ timeout: 20_000 });
    await trust.click();
    await listServers(wb, new RegExp(`^${LABEL}`), 60_000);
    await wb.screenshot('mcp-trust-granted-list');
    await wb.page.keyboard.press('Escape');
  });
});
