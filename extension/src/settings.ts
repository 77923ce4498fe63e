/**
 * Editor settings → the `nki-studio` section the language server reads (server/service/settings.py: keys are
 * camelCase and match VS Code's `nki-studio.<key>`). The client adds what only it knows: workspace trust
 * and the log level chosen with "Set Log Level" on the output channel. The key lists are generated from the one
 * declaration of every setting (server/settings/declaration.py).
 */

import { LOG_LEVELS, REMOTE_KEYS, RESTART_KEYS, SERVER_KEYS } from './settingsKeys.generated';

export type ServerLogLevel = (typeof LOG_LEVELS)[number];

/** vscode.LogLevel numbers: Off 0, Trace 1, Debug 2, Info 3, Warning 4, Error 5. */
export function serverLogLevel(vscodeLevel: number): ServerLogLevel {
  if (vscodeLevel === 1 || vscodeLevel === 2) return 'debug';
  if (vscodeLevel === 3) return 'info';
  if (vscodeLevel === 4) return 'warning';
  return 'error';
}

export interface ConfigReader {
  get<T>(key: string): T | undefined;
}

/** The section sent as initializationOptions and with every configuration change. */
export function serverSettings(
  config: ConfigReader,
  trusted: boolean,
  logLevel: ServerLogLevel,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of SERVER_KEYS) {
    const value = config.get<unknown>(key);
    // Empty strings mean "not set": the server then uses pyproject.toml or its defaults.
    if (value !== undefined && value !== null && value !== '') out[key] = value;
  }
  const remote: Record<string, unknown> = {};
  for (const key of REMOTE_KEYS) {
    const value = config.get<unknown>(`remote.${key}`);
    if (value !== undefined && value !== null && value !== '') remote[key] = value;
  }
  out.remote = remote;
  out.trustedWorkspace = trusted;
  out.logLevel = logLevel;
  // Untrusted: running user code is off whatever the settings say (the server checks trust too).
  if (!trusted) out.simulateOnSave = false;
  return out;
}

/** Which of the changed sections require a restart, given `affects(section)` from the change event. */
export function needsRestart(affects: (section: string) => boolean): boolean {
  return RESTART_KEYS.some((key) => affects(`nki-studio.${key}`));
}
