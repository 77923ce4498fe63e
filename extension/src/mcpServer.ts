/**
 * nki-studio's MCP server for VS Code's agent mode: `nki-studio mcp` over stdio, the workspace folders as its
 * roots and the editor's settings passed along (`--settings`), registered with
 * `vscode.lm.registerMcpServerDefinitionProvider` (VS Code >= 1.101; package.json
 * `contributes.mcpServerDefinitionProviders`; extension/test/e2e-mcp drives it in VS Code 1.103: listed, started,
 * its tools discovered). An older VS Code (code-server 1.100 in the main end-to-end suite) has no such API:
 * nothing is registered and the rest of the extension works as before. Trusted workspaces only: an
 * untrusted one gets no definition, and granting trust (or changing folders or settings) announces the change.
 */
import type * as vscode from 'vscode';
import { type Bundle, serverCommand } from './serverCommand';
import { type ConfigReader, serverSettings } from './settings';

export const MCP_PROVIDER_ID = 'nki-studio.mcp';
export const MCP_LABEL = 'NKI Studio';

export interface McpLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
}

export interface McpOptions {
  interpreter: string;
  bundle: Bundle | undefined;
  roots: string[];
  config: ConfigReader;
}

/** The command line of the MCP server for trusted `roots` (the folders the tools may read). */
export function mcpLaunch(o: McpOptions): McpLaunch {
  const base = serverCommand(o.interpreter, o.bundle, {}, 'mcp');
  const settings: Record<string, unknown> = {
    ...serverSettings(o.config, true, 'warning'),
    // Remote profiling through an agent needs its own switch on top of the host (off by default).
    'mcp.remoteProfiling': o.config.get<boolean>('mcp.remoteProfiling') === true,
  };
  const args = [...base.args, ...o.roots.flatMap((r) => ['--root', r]), '--settings', JSON.stringify(settings)];
  return { command: base.command, args, env: base.env };
}

/** The parts of the VS Code >= 1.101 API used here; the @types/vscode the build pins predates them. */
export interface McpApi {
  lm?: {
    registerMcpServerDefinitionProvider?: (id: string, provider: McpProvider) => vscode.Disposable;
  };
  McpStdioServerDefinition?: new (
    label: string,
    command: string,
    args?: string[],
    env?: Record<string, string | number | null>,
    version?: string,
  ) => object;
}

export interface McpProvider {
  onDidChangeMcpServerDefinitions: vscode.Event<void>;
  provideMcpServerDefinitions(): object[];
}

export interface McpHost {
  EventEmitter: typeof vscode.EventEmitter;
  workspace: Pick<
    typeof vscode.workspace,
    | 'isTrusted'
    | 'workspaceFolders'
    | 'onDidGrantWorkspaceTrust'
    | 'onDidChangeConfiguration'
    | 'onDidChangeWorkspaceFolders'
  >;
}

/** Register the provider when VS Code has the API; returns what to dispose (empty on an older VS Code). */
export function registerMcpServer(
  api: McpApi,
  host: McpHost,
  options: (roots: string[]) => McpOptions,
  version: string,
): vscode.Disposable[] {
  const register = api.lm?.registerMcpServerDefinitionProvider;
  const Definition = api.McpStdioServerDefinition;
  if (typeof register !== 'function' || typeof Definition !== 'function') return [];
  const changed = new host.EventEmitter<void>();
  const provider: McpProvider = {
    onDidChangeMcpServerDefinitions: changed.event,
    provideMcpServerDefinitions: () => {
      const roots = (host.workspace.workspaceFolders ?? [])
        .filter((f) => f.uri.scheme === 'file')
        .map((f) => f.uri.fsPath);
      // Untrusted: the tools would run the workspace's kernels; no folder: nothing to confine them to.
      if (!host.workspace.isTrusted || roots.length === 0) return [];
      const launch = mcpLaunch(options(roots));
      return [new Definition(MCP_LABEL, launch.command, launch.args, launch.env, version)];
    },
  };
  let registration: vscode.Disposable;
  try {
    registration = register.call(api.lm, MCP_PROVIDER_ID, provider);
  } catch {
    // A VS Code with an earlier, incompatible form of the API (1.100 throws: it wants another contribution
    // point): agent mode is simply unavailable there; the rest of the extension must still activate.
    changed.dispose();
    return [];
  }
  return [
    changed,
    registration,
    host.workspace.onDidGrantWorkspaceTrust(() => changed.fire()),
    host.workspace.onDidChangeWorkspaceFolders(() => changed.fire()),
    host.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('nki-studio')) changed.fire();
    }),
  ];
}
