/**
 * Text a server chose (an error body, a header value) before it may reach a
 * log line, an error message or a protocol message: one line, no terminal
 * control (escape sequences that retitle the terminal, move the cursor over
 * earlier lines or hide a link), no characters that reorder what is shown,
 * and not longer than `max` characters.
 */

// ESC-introduced sequences first (CSI ... final byte; OSC/DCS/APC/PM ... BEL or ST), so their parameters go with them.
const ESCAPE_SEQUENCE = /\u001b(?:\[[0-?]*[ -/]*[@-~]|[\]PX^_][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[@-Z\\-_])?/g;
/**
 * DEL, the C1 controls and the formatting characters that reorder or hide
 * text (zero-width, bidirectional controls, word joiners, the BOM), as the
 * body of a character class: with the C0 controls, what no text the tap
 * shows or writes as a name keeps as it is (also field-names.ts, escaped-name.ts).
 */
export const HIDDEN_BEYOND_C0 = '\\u007f-\\u009f\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u2069\\ufeff';

// Other C0 controls (tab and newline become spaces below), and the characters above.
const CONTROL = new RegExp(`[\\u0000-\\u0008\\u000b-\\u001f${HIDDEN_BEYOND_C0}]`, 'g');

export function sanitizeServerText(text: string, max = 300): string {
  const clean = text.replace(ESCAPE_SEQUENCE, '').replace(CONTROL, '').replace(/\s+/g, ' ').trim();
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}
