import { HIDDEN_BEYOND_C0 } from '../observe/sanitize.js';

/**
 * A served field name as a message shows it: in double quotes, every
 * character that is not printable (controls, invisible formatting
 * characters, quotes and backslashes) written as a JSON escape, and cut to 60
 * characters, so a name can neither break a log line nor hide what it is.
 */
const NOT_SHOWN_AS_IS = new RegExp(`[\\u0000-\\u001f"\\\\${HIDDEN_BEYOND_C0}]`, 'gu');

export function escapedName(name: string, max = 60): string {
  const cut = name.length > max ? `${name.slice(0, max - 1)}…` : name;
  return `"${cut.replace(NOT_SHOWN_AS_IS, (c) => (c === '"' || c === '\\' ? `\\${c}` : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`))}"`;
}
