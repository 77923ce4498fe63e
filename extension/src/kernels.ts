/**
 * Find NKI kernels in a Python file's text so "Simulate Kernel" can pick the one under the cursor.
 * A kernel is a `def` with a decorator ending in jit/baremetal/benchmark/simulate_kernel (nki.jit,
 * @jit, @nki.jit(...), legacy neuronxcc.nki decorators). Text-only on purpose: it must work on
 * half-typed files and needs no server round trip.
 */

export interface KernelLocation {
  name: string;
  /** 0-based line of the first decorator. */
  startLine: number;
  /** 0-based line of the `def`. */
  defLine: number;
  /** 0-based last line of the body (last non-blank line indented deeper than the def). */
  endLine: number;
}

const DECORATOR = /^(\s*)@\s*(?:[A-Za-z_][\w]*\.)*(jit|baremetal|benchmark|simulate_kernel)\b/;
const DEF = /^(\s*)(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(/;

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

function isCode(line: string): boolean {
  const t = line.trim();
  return t.length > 0 && !t.startsWith('#');
}

/** Every decorated kernel in `text`, in file order. */
export function findKernels(text: string): KernelLocation[] {
  const lines = text.split(/\r?\n/);
  const found: KernelLocation[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    if (!DECORATOR.test(lines[i])) continue;
    const startLine = i;
    // Skip the remaining decorators (and their continuation lines) up to the def.
    let j = i;
    while (j < lines.length && !DEF.test(lines[j])) j += 1;
    if (j >= lines.length) break;
    const def = DEF.exec(lines[j]);
    if (def === null) break;
    const defIndent = def[1].length;
    let end = j;
    // The signature may span lines; the body is everything deeper-indented after it.
    for (let k = j + 1; k < lines.length; k += 1) {
      if (!isCode(lines[k])) continue;
      if (indentOf(lines[k]) <= defIndent && !/^\s*[)\]]/.test(lines[k])) break;
      end = k;
    }
    found.push({ name: def[2], startLine, defLine: j, endLine: end });
    i = j;
  }
  return found;
}

/** The kernel whose decorators or body contain `line`, innermost first; undefined if none. */
export function kernelAt(kernels: readonly KernelLocation[], line: number): KernelLocation | undefined {
  const containing = kernels.filter((k) => k.startLine <= line && line <= k.endLine);
  return containing.sort((a, b) => b.startLine - a.startLine)[0];
}
