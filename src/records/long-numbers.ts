/**
 * Numbers written with more digits than a double keeps (more than 15
 * significant digits: an id of 20 digits, a decimal of 18): their text is
 * their value. Wherever the tap carries or compares a value (records, keys,
 * hashes, delete records) such a number keeps the digits the service sent:
 * the byte paths copy its text; the object path (JSON.parse, for lines the
 * byte path leaves to it) parses it as raw JSON (`JSON.rawJSON`: JSON.stringify
 * writes it back as it was). A runtime without raw JSON (Node 20, which the tap
 * does not support) reads such numbers as doubles on every path, as before:
 * the byte and object paths give the same records on every runtime.
 */

const DOT = 0x2e;
const MINUS = 0x2d;
const PLUS = 0x2b;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const ZERO = 0x30;
const NINE = 0x39;

/** The most significant digits a double holds exactly in every case. */
const DOUBLE_DIGITS = 15;

/** The parts of the JSON object this module uses, where the runtime has them (Node 21 and later). */
interface RawJson {
  rawJSON(text: string): object;
  isRawJSON(value: unknown): boolean;
}

const raw: Partial<RawJson> = JSON as unknown as Partial<RawJson>;

/** Whether this runtime keeps long numbers' digits (it has raw JSON). */
export const KEEPS_LONG_NUMBERS = typeof raw.rawJSON === 'function' && typeof raw.isRawJSON === 'function';

const isDigit = (b: number): boolean => b >= ZERO && b <= NINE;

/** The end of the digits from i. */
function digitsEnd(bytes: Uint8Array, i: number, end: number): number {
  while (i < end && isDigit(bytes[i])) i++;
  return i;
}

/**
 * The significant digits of the JSON number text in bytes[start, end) (sign,
 * leading zeros, dot and exponent not counted), or -1 when the text is not a
 * JSON number.
 */
export function significantDigits(bytes: Uint8Array, start: number, end: number): number {
  let i = start;
  if (bytes[i] === MINUS) i++;
  if (i >= end || !isDigit(bytes[i]) || (bytes[i] === ZERO && i + 1 < end && isDigit(bytes[i + 1]))) return -1;
  const integerEnd = digitsEnd(bytes, i, end);
  let fractionEnd = integerEnd;
  if (fractionEnd < end && bytes[fractionEnd] === DOT) {
    fractionEnd = digitsEnd(bytes, fractionEnd + 1, end);
    if (fractionEnd === integerEnd + 1) return -1;
  }
  let exponentEnd = fractionEnd;
  if (exponentEnd < end && (bytes[exponentEnd] === LOWER_E || bytes[exponentEnd] === UPPER_E)) {
    let e = exponentEnd + 1;
    if (e < end && (bytes[e] === MINUS || bytes[e] === PLUS)) e++;
    exponentEnd = digitsEnd(bytes, e, end);
    if (exponentEnd === e) return -1;
  }
  if (exponentEnd !== end) return -1;
  let digits = 0;
  let leading = true;
  for (let k = i; k < fractionEnd; k++) {
    if (bytes[k] === DOT) continue;
    if (leading && bytes[k] === ZERO) continue;
    leading = false;
    digits++;
  }
  return digits;
}

/** A JSON number whose text holds more digits than a double keeps: copied as it is (on a runtime that keeps them). */
export function isLongNumber(bytes: Uint8Array, start: number, end: number): boolean {
  return KEEPS_LONG_NUMBERS && end - start > DOUBLE_DIGITS && significantDigits(bytes, start, end) > DOUBLE_DIGITS;
}

/** A long number written as an integer (no dot, no exponent). */
export function isLongInteger(bytes: Uint8Array, start: number, end: number): boolean {
  if (!isLongNumber(bytes, start, end)) return false;
  for (let k = start; k < end; k++) if (bytes[k] === DOT || bytes[k] === LOWER_E || bytes[k] === UPPER_E) return false;
  return true;
}

/** JSON.parse's reviver's context (Node 22 and later): the source text of a primitive value. */
type Reviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown;

const keepLongNumbers: Reviver = (_key, value, context) => {
  if (typeof value !== 'number' || context?.source === undefined) return value;
  const source = Buffer.from(context.source, 'latin1');
  return isLongNumber(source, 0, source.length) ? raw.rawJSON!(context.source) : value;
};

/** JSON.parse, long numbers kept as raw JSON (their digits as written) where the runtime can. */
export function parseKeepingDigits(text: string): unknown {
  return KEEPS_LONG_NUMBERS ? JSON.parse(text, keepLongNumbers as (key: string, value: unknown) => unknown) : JSON.parse(text);
}

/** A long number (isLongNumber) as parseKeepingDigits gives it. */
export function longNumberValue(text: string): unknown {
  return raw.rawJSON!(text);
}

/** Whether a parsed value is a long number kept as raw JSON. */
export function isRawNumber(value: unknown): value is object {
  return typeof value === 'object' && value !== null && raw.isRawJSON?.(value) === true;
}

/** The text of a long number kept as raw JSON. */
export function rawNumberText(value: object): string {
  return JSON.stringify(value);
}
