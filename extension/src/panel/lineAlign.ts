/**
 * Following a source line across an edit for the panel's before/after view: the baseline's text and the
 * current text are aligned line by line (longest common subsequence of equal lines, after the common head and
 * tail), so line 40 before is compared with the line it became, not with whatever is line 40 now. The same
 * rule as the language server's `profile/line_align.py` (difflib): an edited line is a removed line plus an
 * added one; trailing whitespace does not count.
 */

/** Above this many cells (lines before × lines after, once head and tail are trimmed) no alignment is tried. */
const MAX_CELLS = 4_000_000;

/** Line of `before` → line of `after` (0-based) for the lines that are the same; undefined: too large to align. */
export function alignLines(before: readonly string[], after: readonly string[]): Map<number, number> | undefined {
  const a = before.map((s) => s.trimEnd());
  const b = after.map((s) => s.trimEnd());
  const out = new Map<number, number>();
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) {
    out.set(head, head);
    head += 1;
  }
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail])
    tail += 1;
  const n = a.length - head - tail;
  const m = b.length - head - tail;
  if (n * m > MAX_CELLS) return undefined;
  // lcs[i][j]: length of the longest common subsequence of a[head+i..] and b[head+j..] (middle part only)
  const width = m + 1;
  const lcs = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i -= 1)
    for (let j = m - 1; j >= 0; j -= 1)
      lcs[i * width + j] =
        a[head + i] === b[head + j]
          ? lcs[(i + 1) * width + j + 1] + 1
          : Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1]);
  for (let i = 0, j = 0; i < n && j < m;) {
    if (a[head + i] === b[head + j]) {
      out.set(head + i, head + j);
      i += 1;
      j += 1;
    } else if (lcs[(i + 1) * width + j] >= lcs[i * width + j + 1]) i += 1;
    else j += 1;
  }
  for (let k = 0; k < tail; k += 1) out.set(a.length - tail + k, b.length - tail + k);
  return out;
}

/** Text split into lines as an editor numbers them. */
export function splitLines(text: string): string[] {
  return text.split(/\r?\n/);
}
