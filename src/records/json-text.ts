/**
 * Bytes that already are the JSON text JSON.stringify would write for their
 * value, so an encoder may copy them instead of converting: shared by the CSV
 * and the JSONL byte paths.
 */

/** Whether text bytes need JSON escaping (a control character, a quote or a backslash). */
export function needsEscape(buffer: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const b = buffer[i];
    if (b < 0x20 || b === 0x22 || b === 0x5c) return true;
  }
  return false;
}

/** Written by JSON.stringify exactly so, and safe: -?(0|[1-9][0-9]{0,14}), but not -0. */
export function isJsonInteger(buffer: Buffer, start: number, end: number): boolean {
  let i = start;
  if (buffer[i] === 45) {
    i++;
    if (buffer[i] === 48) return false;
  }
  const digits = end - i;
  if (digits < 1 || digits > 15) return false;
  if (buffer[i] === 48 && digits > 1) return false;
  for (; i < end; i++) if (buffer[i] < 48 || buffer[i] > 57) return false;
  return true;
}

/**
 * Written by JSON.stringify exactly so: -?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?
 * with at most 15 significant digits (so the text is the number's shortest
 * form), fewer than six zeros after `0.` (JSON.stringify writes 1e-7 for
 * 0.0000001), and not -0 (nor, conservatively, -0.x).
 */
export function isJsonDecimal(buffer: Buffer, start: number, end: number): boolean {
  let i = start;
  if (buffer[i] === 45) i++;
  if (i >= end || buffer[i] < 48 || buffer[i] > 57) return false;
  const zeroInteger = buffer[i] === 48;
  if (zeroInteger && i > start) return false;
  let digits = 0;
  if (zeroInteger) i++;
  else for (; i < end && buffer[i] >= 48 && buffer[i] <= 57; i++) digits++;
  if (i === end) return digits <= 15;
  if (buffer[i] !== 46 || i + 1 === end || buffer[end - 1] === 48) return false;
  i++;
  let leadingZeros = 0;
  if (zeroInteger) while (i < end && buffer[i] === 48) {
    i++;
    leadingZeros++;
  }
  if (leadingZeros >= 6) return false;
  for (; i < end; i++) {
    if (buffer[i] < 48 || buffer[i] > 57) return false;
    digits++;
  }
  return digits <= 15;
}

/** The value of bytes that passed isJsonInteger. */
export function integerBytes(buffer: Buffer, start: number, end: number): number {
  const negative = buffer[start] === 45;
  let n = 0;
  for (let i = negative ? start + 1 : start; i < end; i++) n = n * 10 + (buffer[i] - 48);
  return negative ? -n : n;
}


/** Hex digits JSON.stringify writes in `\u00XX`: lower case. */
function lowerHexValue(b: number): number {
  if (b >= 48 && b <= 57) return b - 48;
  if (b >= 97 && b <= 102) return b - 87;
  return -1;
}

/**
 * Whether a JSON string (quotes included) that JSON.parse accepts is written
 * with exactly the escapes JSON.stringify writes for its value: `\"` `\\`
 * `\b` `\f` `\n` `\r` `\t`, and `\u00xx` (lower case) for the other control
 * characters; nothing else escaped (`\/`, `\u0041`, escaped surrogates are
 * not, since JSON.stringify writes those characters as they are; a lone
 * surrogate, which it does escape, is left to it too).
 */
export function isStringifyEscaped(buffer: Buffer, start: number, end: number): boolean {
  for (let i = start + 1; i < end - 1; i++) {
    if (buffer[i] !== 0x5c) continue;
    const escape = buffer[++i];
    if (escape === 0x22 || escape === 0x5c || escape === 0x62 || escape === 0x66 || escape === 0x6e || escape === 0x72 || escape === 0x74) continue;
    if (escape !== 0x75 || buffer[i + 1] !== 48 || buffer[i + 2] !== 48) return false;
    const high = lowerHexValue(buffer[i + 3]);
    const low = lowerHexValue(buffer[i + 4]);
    const code = high * 16 + low;
    if (high < 0 || high > 1 || low < 0 || code === 8 || code === 9 || code === 10 || code === 12 || code === 13) return false;
    i += 4;
  }
  return true;
}
