/**
 * A JSONL line read as a flat object without JSON.parse: the byte ranges of
 * its members' names and values, over the buffer it was read from (valid only
 * while the line's callback runs), so no object or string is made for a
 * member nobody asks about.
 *
 * Only the shape dump lines have is accepted: one object whose names have no
 * escapes and whose values are strings, numbers, true, false or null, with
 * JSON whitespace anywhere between tokens. For anything else (nesting, an
 * escaped name, text that is not JSON) `scan` returns false and the caller
 * parses the line instead, so the scanner never decides that a line is
 * invalid; it only has to be right about the lines it accepts.
 */

import { isLongNumber, longNumberValue, parseKeepingDigits } from './long-numbers.js';

export const JSON_STRING = 1;
export const JSON_NUMBER = 2;
export const JSON_TRUE = 3;
export const JSON_FALSE = 4;
export const JSON_NULL = 5;
export type JsonToken = typeof JSON_STRING | typeof JSON_NUMBER | typeof JSON_TRUE | typeof JSON_FALSE | typeof JSON_NULL;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const MINUS = 0x2d;
const DOT = 0x2e;
const NEWLINE = 0x0a;

function isDigit(b: number): boolean {
  return b >= 0x30 && b <= 0x39;
}

/**
 * JSON whitespace but the line feed: a line never holds one, and a scan over
 * a chunk's lines not yet split (`scanLine`) must stop at its line's end.
 */
function isWhitespace(b: number): boolean {
  return b === 0x20 || b === 0x09 || b === 0x0d;
}

function isHex(b: number): boolean {
  return isDigit(b) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
}

/** What a backslash may introduce in a JSON string: `"` `\` `/` b f n r t (and u with four hex digits). */
const SIMPLE_ESCAPES = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);

function skipSpace(buffer: Buffer, i: number, end: number): number {
  while (i < end && isWhitespace(buffer[i])) i++;
  return i;
}

/**
 * Where the string whose text starts at `i` ends (its closing quote), or -1
 * when it does not end on the line, or -(k + 1) when an escape or a control
 * character comes at k first: the common case in one tight loop.
 */
export function plainStringEnd(buffer: Buffer, i: number, end: number): number {
  while (i < end && STRING_STOP[buffer[i]] === 0) i++;
  if (i >= end) return -1;
  return buffer[i] === QUOTE ? i : -i - 1;
}

/** Bytes that end a string's plain run: the quote, a backslash, a control character. One load per byte instead of three tests. */
const STRING_STOP = new Uint8Array(256);
STRING_STOP.fill(1, 0, 0x20);
STRING_STOP[QUOTE] = 1;
STRING_STOP[BACKSLASH] = 1;

/** plainStringEnd from an escape or control character on: -1 for what JSON forbids (a raw control character, an unknown escape). */
export function escapedStringEnd(buffer: Buffer, i: number, end: number): number {
  while (i < end) {
    const b = buffer[i];
    if (b === QUOTE) return i;
    if (b < 0x20) return -1;
    if (b !== BACKSLASH) {
      i++;
      continue;
    }
    const next = buffer[i + 1];
    if (next === 0x75) {
      if (i + 5 >= end || !isHex(buffer[i + 2]) || !isHex(buffer[i + 3]) || !isHex(buffer[i + 4]) || !isHex(buffer[i + 5])) return -1;
      i += 6;
    } else {
      if (i + 1 >= end || !SIMPLE_ESCAPES.has(next)) return -1;
      i += 2;
    }
  }
  return -1;
}

/** JSON's number grammar, -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?: where it ends, or -1. */
export function numberEnd(buffer: Buffer, i: number, end: number): number {
  if (buffer[i] === MINUS) i++;
  if (i >= end || !isDigit(buffer[i])) return -1;
  if (buffer[i] === 0x30) i++;
  else while (i < end && isDigit(buffer[i])) i++;
  if (i < end && buffer[i] === DOT) {
    i++;
    if (i >= end || !isDigit(buffer[i])) return -1;
    while (i < end && isDigit(buffer[i])) i++;
  }
  if (i < end && (buffer[i] === 0x65 || buffer[i] === 0x45)) {
    i++;
    if (i < end && (buffer[i] === 0x2b || buffer[i] === MINUS)) i++;
    if (i >= end || !isDigit(buffer[i])) return -1;
    while (i < end && isDigit(buffer[i])) i++;
  }
  return i;
}

/** Where the name whose text starts at `i` ends (its closing quote) when it is `want`, or -1. */
function expectedNameEnd(buffer: Buffer, i: number, end: number, want: Uint8Array): number {
  const quote = i + want.length;
  if (quote >= end || buffer[quote] !== QUOTE) return -1;
  for (let k = 0; k < want.length; k++) if (buffer[i + k] !== want[k]) return -1;
  return quote;
}

/** The literal at `i` (true, false, null), or 0. */
export function literalToken(buffer: Buffer, i: number, end: number): JsonToken | 0 {
  const b = buffer[i];
  if (b === 0x74 && i + 4 <= end && buffer[i + 1] === 0x72 && buffer[i + 2] === 0x75 && buffer[i + 3] === 0x65) return JSON_TRUE;
  if (b === 0x6e && i + 4 <= end && buffer[i + 1] === 0x75 && buffer[i + 2] === 0x6c && buffer[i + 3] === 0x6c) return JSON_NULL;
  if (b === 0x66 && i + 5 <= end && buffer[i + 1] === 0x61 && buffer[i + 2] === 0x6c && buffer[i + 3] === 0x73 && buffer[i + 4] === 0x65) return JSON_FALSE;
  return 0;
}

export class JsonLine {
  buffer: Buffer = Buffer.alloc(0);
  start = 0;
  end = 0;
  /** Members of the object, in the order written. */
  count = 0;
  nameStarts: Int32Array = new Int32Array(32);
  nameEnds: Int32Array = new Int32Array(32);
  /** A value's token, quotes included for a string. */
  valueStarts: Int32Array = new Int32Array(32);
  valueEnds: Int32Array = new Int32Array(32);
  tokens: Uint8Array = new Uint8Array(32);
  /** Set for a string value that holds escapes: its text differs from its bytes. */
  escaped: Uint8Array = new Uint8Array(32);
  /**
   * The names the reader expects at each position (dump lines repeat their
   * layout; the encoder keeps the last line's here). Each must be a name this
   * scanner read as plain (no quote, backslash or control byte): a name equal
   * to its expected one is then found by comparing bytes, and `asExpected[i]`
   * says so, sparing the reader a second comparison.
   */
  expected: ReadonlyArray<Uint8Array | undefined> = [];
  /** The `expected` list the last scan compared names with. */
  comparedWith: ReadonlyArray<Uint8Array | undefined> = this.expected;
  asExpected: Uint8Array = new Uint8Array(32);
  /** How many names the last scan found equal to their expected ones: all of them when it equals `count`. */
  asExpectedCount = 0;

  /** What the last `scanLine` made of its line (`lineScanned` says which line): read, refused, or nothing since a `scan`. */
  private lineOutcome: boolean | undefined;

  /** Reads `buffer[start..end)`; false when the line is not of the accepted shape. */
  scan(buffer: Buffer, start: number, end: number): boolean {
    const after = this.object(buffer, start, end);
    return after >= 0 && skipSpace(buffer, after, end) === end;
  }

  /**
   * Reads the line that starts at `start` of a chunk not yet split into lines
   * (`limit`: the end of its last whole line), sparing the caller a search for
   * its line break: when the line is of the accepted shape, returns where its
   * line break is, the line read as `scan` reads it; else -1, and the caller
   * splits the line itself. A line refused here is one `scan` refuses too: no
   * line feed is whitespace here, so the scan fails at the line's end whatever
   * bound it was given.
   */
  scanLine(buffer: Buffer, start: number, limit: number): number {
    const after = this.object(buffer, start, limit);
    const lineFeed = after < 0 ? -1 : skipSpace(buffer, after, limit);
    this.lineOutcome = lineFeed >= 0 && lineFeed < limit && buffer[lineFeed] === NEWLINE;
    if (!this.lineOutcome) return -1;
    // The line as the splitter hands it out: without its line break and one carriage return before it.
    this.end = buffer[lineFeed - 1] === 0x0d ? lineFeed - 1 : lineFeed;
    return lineFeed;
  }

  /**
   * What the last `scanLine` found of the line `buffer[start..end)` as the
   * splitter hands it out: true when it read it (as `scan` would), false when
   * it refused it (as `scan` would), undefined when it is not that line.
   */
  lineScanned(buffer: Buffer, start: number, end: number): boolean | undefined {
    if (this.lineOutcome === undefined || this.buffer !== buffer || this.start !== start) return undefined;
    return this.lineOutcome ? (this.end === end ? true : undefined) : false;
  }

  /**
   * Reads an object from `start` (whitespace first allowed) and returns where
   * it ends (after its `}`), or -1 when it is not of the accepted shape or
   * does not end before `end`. One loop over the members, each token read
   * where it starts: the per-record path, so longer than a function here usually is.
   */
  private object(buffer: Buffer, start: number, end: number): number {
    this.buffer = buffer;
    this.start = start;
    this.end = end;
    this.count = 0;
    this.asExpectedCount = 0;
    this.lineOutcome = undefined;
    const expected = this.expected;
    this.comparedWith = expected;
    let i = skipSpace(buffer, start, end);
    if (i >= end || buffer[i] !== OPEN) return -1;
    i = skipSpace(buffer, i + 1, end);
    if (i < end && buffer[i] === CLOSE) return i + 1;
    for (;;) {
      if (i >= end || buffer[i] !== QUOTE) return -1;
      const nameStart = i + 1;
      const want = this.count < expected.length ? expected[this.count] : undefined;
      let nameEnd = want === undefined ? -1 : expectedNameEnd(buffer, nameStart, end, want);
      const asExpected = nameEnd < 0 ? 0 : 1;
      // An escaped name (negative end) is left to JSON.parse.
      if (nameEnd < 0) nameEnd = plainStringEnd(buffer, nameStart, end);
      if (nameEnd < 0) return -1;
      // Dump lines are usually compact: whitespace is looked for only where a token is not found.
      i = nameEnd + 1;
      if (buffer[i] !== COLON) i = skipSpace(buffer, i, end);
      if (i >= end || buffer[i] !== COLON) return -1;
      const valueStart = isWhitespace(buffer[i + 1]) ? skipSpace(buffer, i + 1, end) : i + 1;
      if (valueStart >= end) return -1;
      const first = buffer[valueStart];
      let valueEnd: number;
      let token: JsonToken | 0;
      let escaped = 0;
      if (first === QUOTE) {
        token = JSON_STRING;
        valueEnd = plainStringEnd(buffer, valueStart + 1, end);
        if (valueEnd < 0) {
          escaped = 1;
          valueEnd = escapedStringEnd(buffer, -valueEnd - 1, end);
          if (valueEnd < 0) return -1;
        }
        valueEnd++;
      } else if (first === MINUS || isDigit(first)) {
        token = JSON_NUMBER;
        valueEnd = numberEnd(buffer, valueStart, end);
      } else {
        token = literalToken(buffer, valueStart, end);
        valueEnd = valueStart + (token === JSON_FALSE ? 5 : 4);
      }
      if (valueEnd < 0 || token === 0) return -1;
      this.add(nameStart, nameEnd, valueStart, valueEnd, token, escaped, asExpected);
      i = valueEnd < end && buffer[valueEnd] === COMMA ? valueEnd : skipSpace(buffer, valueEnd, end);
      if (i >= end) return -1;
      if (buffer[i] === CLOSE) return i + 1;
      if (buffer[i] !== COMMA) return -1;
      i = buffer[i + 1] === QUOTE ? i + 1 : skipSpace(buffer, i + 1, end);
    }
  }

  /** A member's name (no escapes: its bytes are its text). */
  name(i: number): string {
    return this.buffer.toString('utf8', this.nameStarts[i], this.nameEnds[i]);
  }

  /** A string member's text, escapes resolved. */
  text(i: number): string {
    if (this.escaped[i]) return JSON.parse(this.buffer.toString('utf8', this.valueStarts[i], this.valueEnds[i])) as string;
    return this.buffer.toString('utf8', this.valueStarts[i] + 1, this.valueEnds[i] - 1);
  }

  /** A member's value as JSON.parse gives it. */
  value(i: number): unknown {
    switch (this.tokens[i]) {
      case JSON_STRING:
        return this.text(i);
      case JSON_NUMBER:
        // A JSON number's text is one Number() reads the same way (1e400 and -0 included); a long one keeps its digits.
        return isLongNumber(this.buffer, this.valueStarts[i], this.valueEnds[i])
          ? longNumberValue(this.buffer.toString('latin1', this.valueStarts[i], this.valueEnds[i]))
          : Number(this.buffer.toString('latin1', this.valueStarts[i], this.valueEnds[i]));
      case JSON_TRUE:
        return true;
      case JSON_FALSE:
        return false;
      case JSON_NULL:
        return null;
      default:
        return parseKeepingDigits(this.buffer.toString('utf8', this.valueStarts[i], this.valueEnds[i]));
    }
  }

  private add(nameStart: number, nameEnd: number, valueStart: number, valueEnd: number, token: JsonToken, escaped: number, asExpected: number): void {
    if (this.count === this.nameStarts.length) this.grow();
    const n = this.count++;
    this.nameStarts[n] = nameStart;
    this.nameEnds[n] = nameEnd;
    this.valueStarts[n] = valueStart;
    this.valueEnds[n] = valueEnd;
    this.tokens[n] = token;
    this.escaped[n] = escaped;
    this.asExpected[n] = asExpected;
    this.asExpectedCount += asExpected;
  }

  private grow(): void {
    const size = this.nameStarts.length * 2;
    const int32 = (a: Int32Array): Int32Array => {
      const b = new Int32Array(size);
      b.set(a);
      return b;
    };
    const bytes = (a: Uint8Array): Uint8Array => {
      const b = new Uint8Array(size);
      b.set(a);
      return b;
    };
    this.nameStarts = int32(this.nameStarts);
    this.nameEnds = int32(this.nameEnds);
    this.valueStarts = int32(this.valueStarts);
    this.valueEnds = int32(this.valueEnds);
    this.tokens = bytes(this.tokens);
    this.escaped = bytes(this.escaped);
    this.asExpected = bytes(this.asExpected);
  }
}
