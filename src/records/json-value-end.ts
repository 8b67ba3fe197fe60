import { escapedStringEnd, JSON_FALSE, literalToken, numberEnd, plainStringEnd } from './json-line.js';

/**
 * Where a JSON value written in bytes ends, for readers that only need its
 * extent: strings four bytes a step, nested objects and arrays with a stack
 * of the open containers (depth bounded by the bytes, not the call stack).
 * Everything JSON.parse refuses is refused (-1); text is not decoded. Whitespace
 * is JSON's, the line feed included (JsonLine stops at it: it reads lines).
 */

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN = 0x7b;
export const CLOSE = 0x7d;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;
export const MINUS = 0x2d;

export function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

export function skipSpace(bytes: Uint8Array, i: number, end: number): number {
  while (i < end && isSpace(bytes[i])) i++;
  return i;
}

/**
 * The bytes of a little-endian word of string text where a plain run may
 * end, each flagged by its top bit: below 0x23 (a control byte, which JSON
 * forbids there, the quote, and space and `!`, which the caller passes over)
 * and the backslash. Exact per byte: no carry crosses from one byte to the next.
 */
export function stops(word: number): number {
  const below23 = ((word & 0x7f7f7f7f) + 0x5d5d5d5d) | word;
  const x = word ^ 0x5c5c5c5c;
  const notBackslash = ((x & 0x7f7f7f7f) + 0x7f7f7f7f) | x;
  return ~(below23 & notBackslash) & 0x80808080;
}

/** Which byte (0 to 3) of a little-endian word is the first flagged in `mask` (not 0). */
export function firstFlagged(mask: number): number {
  return (31 - Math.clz32(mask & (~mask + 1))) >> 3;
}

/** The end of a string's last bytes (fewer than four left before `end`), read one by one: its closing quote, or -1. */
export function stringTailEnd(bytes: Buffer, i: number, end: number): number {
  const plain = plainStringEnd(bytes, i, end);
  return plain >= -1 ? plain : escapedStringEnd(bytes, -plain - 1, end);
}

/**
 * Where the string whose text starts at i ends (its closing quote), or -1
 * when it does not end before `end` or is not JSON. `view` is a DataView of
 * bytes' ArrayBuffer: four bytes a step while none may end the run; an
 * escape sends the rest of the string to the byte-by-byte reader.
 */
export function stringEnd(bytes: Buffer, view: DataView<ArrayBufferLike>, i: number, end: number): number {
  const base = bytes.byteOffset;
  while (i + 4 <= end) {
    const mask = stops(view.getInt32(base + i, true));
    if (mask === 0) {
      i += 4;
      continue;
    }
    i += firstFlagged(mask);
    const b = bytes[i];
    if (b === QUOTE) return i;
    if (b === BACKSLASH || b < 0x20) return escapedStringEnd(bytes, i, end);
    i++;
  }
  return stringTailEnd(bytes, i, end);
}

/** Reads values of any kind; holds the stack of open containers, so one per reader, reused. */
export class JsonValueEnd {
  private nesting = new Uint8Array(16);

  /** Where the value at i (i < end) ends, or -1. */
  valueEnd(bytes: Buffer, view: DataView<ArrayBufferLike>, i: number, end: number): number {
    const b = bytes[i];
    if (b === QUOTE) {
      const quote = stringEnd(bytes, view, i + 1, end);
      return quote < 0 ? -1 : quote + 1;
    }
    if (b === OPEN || b === OPEN_ARRAY) return this.nestedEnd(bytes, view, i, end);
    if (b === MINUS || (b >= 0x30 && b <= 0x39)) return numberEnd(bytes, i, end);
    const literal = literalToken(bytes, i, end);
    return literal === 0 ? -1 : i + (literal === JSON_FALSE ? 5 : 4);
  }

  /** Where the object or array at i ends (after its closing bracket), or -1. */
  private nestedEnd(bytes: Buffer, view: DataView<ArrayBufferLike>, i: number, end: number): number {
    let depth = 0;
    for (;;) {
      const b = bytes[i];
      if (b === OPEN || b === OPEN_ARRAY) {
        this.open(depth++, b);
        i = skipSpace(bytes, i + 1, end);
        if (i >= end) return -1;
        if (bytes[i] !== (b === OPEN ? CLOSE : CLOSE_ARRAY)) {
          if (b === OPEN && (i = this.nameAndColon(bytes, view, i, end)) < 0) return -1;
          continue;
        }
        depth--;
        i++;
      } else if ((i = this.valueEnd(bytes, view, i, end)) < 0) return -1;
      // After a value: close what ends here, or go on to the next value.
      for (;;) {
        if (depth === 0) return i;
        i = skipSpace(bytes, i, end);
        if (i >= end) return -1;
        const container = this.nesting[depth - 1];
        if (bytes[i] === COMMA) {
          i = skipSpace(bytes, i + 1, end);
          if (container === OPEN && (i = this.nameAndColon(bytes, view, i, end)) < 0) return -1;
          if (i >= end) return -1;
          break;
        }
        if (bytes[i] !== (container === OPEN ? CLOSE : CLOSE_ARRAY)) return -1;
        depth--;
        i++;
      }
    }
  }

  /** Reads a nested member's name and colon from i: where its value starts, or -1. */
  private nameAndColon(bytes: Buffer, view: DataView<ArrayBufferLike>, i: number, end: number): number {
    if (i >= end || bytes[i] !== QUOTE) return -1;
    const nameEnd = stringEnd(bytes, view, i + 1, end);
    if (nameEnd < 0) return -1;
    i = skipSpace(bytes, nameEnd + 1, end);
    if (i >= end || bytes[i] !== COLON) return -1;
    i = skipSpace(bytes, i + 1, end);
    return i < end ? i : -1;
  }

  private open(depth: number, container: number): void {
    if (depth === this.nesting.length) {
      const grown = new Uint8Array(depth * 2);
      grown.set(this.nesting);
      this.nesting = grown;
    }
    this.nesting[depth] = container;
  }
}
