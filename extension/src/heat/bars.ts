/** The fixed-width text bar drawn before a hot line: eighth-block cells, then the value. */
const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
const NBSP = '\u00a0'; // decoration text collapses ordinary spaces; non-breaking ones keep the width

export const BAR_CELLS = 6;
export const VALUE_WIDTH = 9;
/** CSS width of the whole attachment, in editor-font characters, so every line's bar lines up. */
export const BAR_WIDTH_CH = BAR_CELLS + VALUE_WIDTH + 2;

/** A bar `ratio` (0..1) long, padded to BAR_CELLS cells, followed by `value` right-aligned. */
export function barText(ratio: number, value: string): string {
  const eighths = Math.round(Math.max(0, Math.min(1, ratio)) * BAR_CELLS * 8);
  const full = Math.floor(eighths / 8);
  let bar = '█'.repeat(full) + EIGHTHS[eighths % 8];
  bar += NBSP.repeat(BAR_CELLS - [...bar].length);
  const clipped = value.length > VALUE_WIDTH ? value.slice(0, VALUE_WIDTH) : value;
  const shown = clipped.replace(/ /g, NBSP);
  return bar + NBSP + NBSP.repeat(VALUE_WIDTH - shown.length) + shown + NBSP;
}

/** The same width with nothing in it: cold lines get it so code stays aligned under the bars. */
export function blankBar(): string {
  return NBSP.repeat(BAR_CELLS + 1 + VALUE_WIDTH + 1);
}
