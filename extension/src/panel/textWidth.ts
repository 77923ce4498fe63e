/**
 * Estimated text widths for laying out the panel's SVG charts without a browser to measure in. The webview's
 * font is the platform's UI font (Segoe UI, San Francisco, Ubuntu, …), so widths are an upper estimate over
 * those, as a fraction of the font size (em), per character (our table, inferred from the fonts' advance
 * widths, rounded up):
 *
 * | characters | em |
 * |---|---|
 * | `i j l . , : ; ' ! \| ·` | 0.32 |
 * | space, `f r t ( ) [ ] / -` | 0.40 |
 * | other lower case, digits, `µ × % ? _ + = < > ~ $` | 0.62 |
 * | `m w` | 0.90 |
 * | other upper case, `& #` | 0.74 |
 * | `M W @` | 0.98 |
 * | anything else (other scripts, symbols) | 1.00 |
 */
const NARROW = new Set("ijl.,:;'!|·");
const SEMI = new Set(' frt()[]/-');
const WIDE_LOWER = new Set('mw');
const WIDEST = new Set('MW@');
const MEDIUM_SYMBOLS = new Set('µ×%?_+=<>~$');

/** The estimated advance width of one character, in em. */
export function charEm(c: string): number {
  if (NARROW.has(c)) return 0.32;
  if (SEMI.has(c)) return 0.4;
  if (WIDE_LOWER.has(c)) return 0.9;
  if (WIDEST.has(c)) return 0.98;
  if (/[a-z0-9]/.test(c) || MEDIUM_SYMBOLS.has(c)) return 0.62;
  if (/[A-Z&#]/.test(c)) return 0.74;
  return 1;
}

/** The estimated width in px of `text` drawn at `fontPx`. */
export function textWidth(text: string, fontPx: number): number {
  let em = 0;
  for (const c of text) em += charEm(c);
  return em * fontPx;
}

/** Font sizes of the chart text classes (the panel's CSS: `svg text` 12px, `svg text.small` 10px). */
export const LABEL_PX = 12;
export const SMALL_PX = 10;
