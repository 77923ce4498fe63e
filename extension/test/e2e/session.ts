/** One end-to-end session: a workspace, a code-server with the .vsix, a browser and the workbench page. */
import * as fs from 'node:fs';
import type { Browser } from 'playwright-core';
import { CodeServer, type CodeServerOptions, checkPrerequisites, makeWorkspace } from './codeServer';
import { Workbench, launchBrowser } from './workbench';

export interface Session {
  server: CodeServer;
  browser: Browser;
  wb: Workbench;
  workspace: string;
  /** Screenshot (when named), then stop everything this session started and delete its folders. */
  close(finalScreenshot?: string): Promise<void>;
}

/** `files`: workspace file name → path to copy (relative to the repository, or absolute). */
export async function openSession(
  files: Record<string, string>,
  options: Omit<CodeServerOptions, 'workspace'>,
): Promise<Session> {
  checkPrerequisites(options.build);
  const workspace = makeWorkspace(files);
  let server: CodeServer | undefined;
  let browser: Browser | undefined;
  const close = async (finalScreenshot?: string, wb?: Workbench): Promise<void> => {
    if (wb && finalScreenshot) await wb.screenshot(finalScreenshot).catch(() => undefined);
    await browser?.close();
    await server?.stop();
    fs.rmSync(workspace, { recursive: true, force: true });
  };
  try {
    server = await CodeServer.start({ ...options, workspace });
    browser = await launchBrowser();
    const wb = await Workbench.open(browser, server.url);
    return { server, browser, wb, workspace, close: (shot) => close(shot, wb) };
  } catch (err) {
    await close();
    throw err;
  }
}
