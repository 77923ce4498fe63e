/** Turning server request failures into messages a user can act on. */

/** True when the server answered that it does not know the command (a feature that has not landed). */
export function isUnknownCommand(err: unknown): boolean {
  const text = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown } | null)?.code;
  return code === -32601 || /unknown command|command .*not (found|registered|supported)|method not found/i.test(text);
}

export function isCancellation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  const text = err instanceof Error ? err.message : String(err);
  return code === -32800 || /cancel/i.test(text);
}

export function describeFailure(what: string, err: unknown): string {
  if (isUnknownCommand(err)) return `${what}: this version of the NKI language server does not support it yet.`;
  const text = err instanceof Error ? err.message : String(err);
  return `${what} failed: ${text}`;
}
