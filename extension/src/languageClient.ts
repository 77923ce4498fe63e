/**
 * The vscode-languageclient side of a server start: client options and middleware for a launch plan. The
 * middleware adds what only the client knows to the settings the server pulls, times the first diagnostics of
 * each opened file, and tells the lifecycle when start-up is over and when the process exited.
 */
import type * as vscode from 'vscode';
import type { LanguageClient, LanguageClientOptions, ResponseError, ServerOptions } from 'vscode-languageclient/node';
import { clientChannel } from './clientLog';
import type { LaunchPlan } from './launchPlan';
import type { ClientEvents, ClientFactory } from './serverLifecycle';
import type { Timings } from './timings';
import { SERVER_SIMULATE_COMMAND, lensesFor } from './trust';

type LanguageClientModule = typeof import('vscode-languageclient/node');

/**
 * vscode-languageclient is most of the extension's load time (about 50 ms of the bundle's require):
 * loaded when the server starts (while the interpreter probe runs), not when the extension activates.
 */
export function languageClientModule(): LanguageClientModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- deliberately lazy; esbuild bundles it all the same
  return require('vscode-languageclient/node') as LanguageClientModule;
}

export interface ClientContext {
  log: vscode.LogOutputChannel;
  timings: Pick<Timings, 'record'>;
  /** performance.now() at activation (first diagnostics are timed from it too). */
  activatedAt: number;
  /** The `nki-studio` section as the server reads it (read at each start and each configuration request). */
  settings(): Record<string, unknown>;
  /** Whether the workspace is trusted now (restricted mode: no kernel runs). */
  trusted(): boolean;
  /** Refuse a kernel run in restricted mode, with the way to trust the workspace. */
  refuseUntrusted(): void;
}

/** Creates the language clients of one extension session. */
export function languageClients(ctx: ClientContext): ClientFactory<LanguageClient> {
  // Open times outlive a client: a file opened just before a restart is timed to its first diagnostics after it.
  const opened = new Map<string, number>();
  return {
    prepare: () => {
      languageClientModule(); // the require is cached: create() finds it loaded
    },
    create: (plan: LaunchPlan, events: ClientEvents): LanguageClient => {
      const { CloseAction, ErrorAction, LanguageClient } = languageClientModule();
      const { command, args, env } = plan.command;
      const serverOptions: ServerOptions = { command, args, options: { env } };
      const clientOptions: LanguageClientOptions = {
        documentSelector: [
          { scheme: 'file', language: 'python' },
          { scheme: 'untitled', language: 'python' },
        ],
        outputChannel: clientChannel(ctx.log),
        initializationOptions: ctx.settings(),
        errorHandler: {
          error: () => ({ action: ErrorAction.Continue }),
          closed: () => {
            events.closed();
            return { action: CloseAction.DoNotRestart, handled: true };
          },
        },
        middleware: {
          workspace: {
            // The server pulls its section; add what only the client knows (trust, log level).
            configuration: async (params, token, next): Promise<unknown[] | ResponseError> => {
              const result: unknown[] | ResponseError = (await next(params, token)) as unknown[] | ResponseError;
              if (!Array.isArray(result)) return result;
              return params.items.map((item, i): unknown =>
                item.section === 'nki-studio' ? ctx.settings() : result[i],
              );
            },
          },
          // Restricted mode: no Simulate CodeLens, and a run started anyway (a lens shown before trust was
          // revoked) gets the extension's refusal with its Manage Workspace Trust button, not the server's.
          provideCodeLenses: async (document, token, next) => lensesFor(await next(document, token), ctx.trusted()),
          executeCommand: (command, args, next): unknown => {
            if (command !== SERVER_SIMULATE_COMMAND || ctx.trusted()) return next(command, args) as unknown;
            ctx.refuseUntrusted();
            return undefined;
          },
          didOpen: (document, next) => {
            opened.set(document.uri.toString(), performance.now());
            return next(document);
          },
          handleDiagnostics: (uri, diagnostics, next) => {
            events.diagnostics();
            const key = uri.toString();
            const openedAt = opened.get(key);
            if (openedAt !== undefined) {
              opened.delete(key);
              const now = performance.now();
              ctx.timings.record({
                event: 'firstDiagnostics',
                uri: key,
                ms: now - openedAt,
                sinceActivateMs: now - ctx.activatedAt,
              });
            }
            next(uri, diagnostics);
          },
        },
      };
      return new LanguageClient('nki-studio', 'NKI Studio', serverOptions, clientOptions);
    },
  };
}
