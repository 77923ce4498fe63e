import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MCP_PROVIDER_ID,
  type McpApi,
  type McpHost,
  type McpProvider,
  mcpLaunch,
  registerMcpServer,
} from '../../src/mcpServer';

function config(values: Record<string, unknown>) {
  return { get: <T>(key: string) => values[key] as T | undefined };
}

class Emitter<T> {
  private listeners: ((e: T) => void)[] = [];
  readonly event = (l: (e: T) => void) => {
    this.listeners.push(l);
    return { dispose: () => undefined };
  };
  fire(e: T): void {
    for (const l of this.listeners) l(e);
  }
  dispose(): void {
    this.listeners = [];
  }
}

class Definition {
  constructor(
    readonly label: string,
    readonly command: string,
    readonly args: string[] = [],
    readonly env: Record<string, string | number | null> = {},
    readonly version = '',
  ) {}
}

function host(trusted: boolean, folders: string[]) {
  const trust = new Emitter<void>();
  const settings = new Emitter<{ affectsConfiguration: (s: string) => boolean }>();
  const h = {
    EventEmitter: Emitter,
    workspace: {
      isTrusted: trusted,
      workspaceFolders: folders.map((f) => ({ uri: { scheme: 'file', fsPath: f } })),
      onDidGrantWorkspaceTrust: trust.event,
      onDidChangeConfiguration: settings.event,
      onDidChangeWorkspaceFolders: new Emitter<void>().event,
    },
  };
  return { h: h as unknown as McpHost, trust, settings, set: (t: boolean) => (h.workspace.isTrusted = t) };
}

describe('MCP server for agent mode', () => {
  it('runs `nki-studio mcp` with the folders as roots and the settings, remote only when switched on', () => {
    const plain = mcpLaunch({
      interpreter: '/py',
      bundle: undefined,
      roots: ['/w/a', '/w/b'],
      config: config({ 'remote.host': 'trn2', simulationTimeout: 30 }),
    });
    assert.equal(plain.command, '/py');
    assert.deepEqual(plain.args.slice(0, 7), ['-m', 'nki_studio', 'mcp', '--root', '/w/a', '--root', '/w/b']);
    const settings = JSON.parse(plain.args[plain.args.indexOf('--settings') + 1]) as Record<string, unknown>;
    assert.equal(settings.simulationTimeout, 30);
    assert.deepEqual(settings.remote, { host: 'trn2' });
    assert.equal(settings.trustedWorkspace, true);
    assert.equal(settings['mcp.remoteProfiling'], false);
    const on = mcpLaunch({
      interpreter: '/py',
      bundle: { libs: '/x/libs' },
      roots: ['/w'],
      config: config({ 'mcp.remoteProfiling': true }),
    });
    assert.deepEqual(on.args.slice(0, 3), ['-m', 'nki_studio.boot', 'mcp']);
    const onSettings = JSON.parse(on.args[on.args.indexOf('--settings') + 1]) as Record<string, unknown>;
    assert.equal(onSettings['mcp.remoteProfiling'], true);
    assert.equal(on.env.PYTHONPATH, '/x/libs');
  });

  it('registers nothing on a VS Code without the MCP API (1.100)', () => {
    const { h } = host(true, ['/w']);
    assert.deepEqual(
      registerMcpServer({}, h, () => assert.fail('no options wanted'), '0.1.0'),
      [],
    );
    assert.deepEqual(
      registerMcpServer({ lm: {} }, h, () => assert.fail('no options wanted'), '0.1.0'),
      [],
    );
  });

  it('registers nothing when the API throws (VS Code 1.100 wants another contribution point)', () => {
    const { h } = host(true, ['/w']);
    const api: McpApi = {
      lm: {
        registerMcpServerDefinitionProvider: () => {
          throw new Error(
            'MCP configuration providers must be registered in contributes.modelContextServerCollections',
          );
        },
      },
      McpStdioServerDefinition: Definition,
    };
    assert.deepEqual(
      registerMcpServer(api, h, () => assert.fail('no options wanted'), '0.1.0'),
      [],
    );
  });

  it('offers the server in trusted workspaces only and announces trust and settings changes', () => {
    let provider: McpProvider | undefined;
    let id = '';
    const api: McpApi = {
      lm: {
        registerMcpServerDefinitionProvider: (i, p) => {
          id = i;
          provider = p;
          return { dispose: () => undefined };
        },
      },
      McpStdioServerDefinition: Definition,
    };
    const { h, trust, settings, set } = host(false, ['/w']);
    const disposables = registerMcpServer(
      api,
      h,
      (roots) => ({ interpreter: '/py', bundle: undefined, roots, config: config({}) }),
      '0.1.0',
    );
    assert.equal(id, MCP_PROVIDER_ID);
    assert.ok(disposables.length > 0 && provider);
    assert.deepEqual(provider.provideMcpServerDefinitions(), []);
    let changes = 0;
    provider.onDidChangeMcpServerDefinitions(() => changes++);
    set(true);
    trust.fire();
    settings.fire({ affectsConfiguration: (s) => s === 'python' });
    settings.fire({ affectsConfiguration: (s) => s === 'nki-studio' });
    assert.equal(changes, 2);
    const [def] = provider.provideMcpServerDefinitions() as Definition[];
    assert.equal(def.label, 'NKI Studio');
    assert.equal(def.version, '0.1.0');
    assert.deepEqual(def.args.slice(0, 5), ['-m', 'nki_studio', 'mcp', '--root', '/w']);
  });
});
