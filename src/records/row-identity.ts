import { DataViewCache } from './data-view-cache.js';
import { Hash64 } from './hash64.js';
import { escapedStringEnd, JSON_FALSE, literalToken, numberEnd, type JsonLine } from './json-line.js';
import { BACKSLASH, CLOSE, CLOSE_ARRAY, COLON, COMMA, firstFlagged, isSpace, JsonValueEnd, MINUS, OPEN, OPEN_ARRAY, QUOTE, skipSpace, stops, stringEnd, stringTailEnd } from './json-value-end.js';
import { MemberLayout } from './member-layout.js';

/**
 * A row's identity as emitted, read from the record's bytes without
 * JSON.parse: a 64-bit hash of its key values and one of its content, and
 * the key as the change store keeps it (a JSON array of the key values).
 *
 * The key hash is the hash of that array's text, `["usr-0000250","prog-02"]`:
 * each key value's bytes as the record has them (a string with its quotes),
 * so a stored key hashes again to the same value. The content hash covers
 * the object's bytes from `{` to `}` but each top-level member with the
 * excluded name: its name, colon, value and one comma, the one before it, or
 * the one after it when no member is kept before it. So `{"a":1,"x":2}` and
 * `{"x":2,"a":1}` (x excluded) both hash as `{"a":1}`.
 *
 * Any JSON object is read (whitespace, members in any order, escaped names,
 * nested values); whatever JSON.parse refuses, `read` refuses. A name given
 * twice keeps its last value, as JSON.parse does. The first record, and any
 * record laid out otherwise than the one before, is read in full: each name
 * scanned and looked up. The names are then kept as the layout, and the next
 * records, which repeat it, have their names compared with it a word at a
 * time; string values are scanned four bytes a step (a DataView load and a
 * few bit operations find a quote, backslash or control byte). The hash then
 * reads the record again, 16 bytes a step, around the excluded member: the
 * bytes are still in the processor's cache. Nothing is allocated per record.
 */

/** Roles of members besides a key's index. */
const OTHER = -1;
const EXCLUDED = -2;

export class RowIdentity {
  keyHi = 0;
  keyLo = 0;
  contentHi = 0;
  contentLo = 0;

  /** The key names then the excluded name, as their JSON text (without quotes) in UTF-8, and as text. */
  private readonly names: readonly Buffer[];
  private readonly texts: readonly string[];
  /** Which name lengths some name has: a quick no for most members. */
  private readonly nameLengths: Uint8Array;
  private readonly keyCount: number;
  private readonly keyStarts: Int32Array;
  private readonly keyEnds: Int32Array;
  private readonly layout = new MemberLayout();
  /** Byte ranges the content hash leaves out, as [start, end) pairs. */
  private gaps = new Int32Array(8);
  private gapCount = 0;
  /** The key array's text of the last record read; keyLength is -1 after a read that failed. */
  private keyText = Buffer.alloc(256);
  private keyLength = -1;
  private readonly values = new JsonValueEnd();
  private readonly views = new DataViewCache();
  private view = this.views.of(new Uint8Array(0));
  private readonly keyHash = new Hash64();
  /** Where each key member was in the last scanned line (readScanned's first guess). */
  private readonly scannedAt: Int32Array;
  private readonly contentHash = new Hash64();

  /**
   * keyNames: the key properties as emitted (e.g. ['userId','programId','moduleId']); excluded: a
   * top-level member left out of the content hash (e.g. '_ab_extracted_at'), or undefined.
   */
  constructor(keyNames: readonly string[], excluded?: string) {
    const all = excluded === undefined ? [...keyNames] : [...keyNames, excluded];
    const twice = all.find((name, i) => all.indexOf(name) !== i);
    if (twice !== undefined) throw new Error(`RowIdentity: the name ${JSON.stringify(twice)} is given twice (key properties and the excluded member must all differ)`);
    this.texts = all;
    this.names = all.map((name) => Buffer.from(JSON.stringify(name).slice(1, -1)));
    this.nameLengths = new Uint8Array(Math.max(0, ...this.names.map((name) => name.length)) + 1);
    for (const name of this.names) this.nameLengths[name.length] = 1;
    this.keyCount = keyNames.length;
    this.keyStarts = new Int32Array(this.keyCount);
    this.keyEnds = new Int32Array(this.keyCount);
    this.scannedAt = new Int32Array(this.keyCount);
  }

  /**
   * Reads one record, the JSON object in bytes[start, end), and sets
   * keyHi/keyLo/contentHi/contentLo. Returns false when a key member is
   * missing or the bytes are not one JSON object (the caller then treats the
   * row as changed and unkeyed).
   */
  read(bytes: Buffer, start: number, end: number): boolean {
    this.keyLength = -1;
    this.view = this.views.of(bytes);
    const objectStart = skipSpace(bytes, start, end);
    if (objectStart >= end || bytes[objectStart] !== OPEN) return false;
    let objectEnd = this.layout.count > 0 ? this.laidOut(bytes, objectStart + 1, end) : -1;
    if (objectEnd < 0) objectEnd = this.members(bytes, objectStart + 1, end);
    if (objectEnd < 0 || skipSpace(bytes, objectEnd, end) !== end) return false;
    this.hashKey(bytes);
    this.hashContent(bytes, objectStart, objectEnd);
    return true;
  }

  /**
   * The same as `read`, for a record the tap's JSONL scanner has just read
   * and that goes out as it came (its bytes are the line's): its members'
   * places are known, so nothing is scanned again: the key values are found
   * by name among the members (at the place they had in the last record
   * first) and the object's bytes hashed whole. For a reader without an
   * excluded member; false when it has one, or a key member is missing
   * (`read` then decides). The line's member names must be distinct (a name
   * given twice takes the object path, which `read` follows: the decoders
   * hand over only lines JsonLineEncoder.prepare took, and it refuses those).
   */
  readScanned(line: JsonLine): boolean {
    this.keyLength = -1;
    if (this.names.length !== this.keyCount) return false;
    const bytes = line.buffer;
    for (let k = 0; k < this.keyCount; k++) {
      const member = this.memberNamed(line, k);
      if (member < 0) return false;
      this.keyStarts[k] = line.valueStarts[member];
      this.keyEnds[k] = line.valueEnds[member];
    }
    const objectStart = skipSpace(bytes, line.start, line.end);
    let objectEnd = line.end;
    while (objectEnd > objectStart && isSpace(bytes[objectEnd - 1])) objectEnd--;
    if (bytes[objectStart] !== OPEN || bytes[objectEnd - 1] !== CLOSE) return false;
    this.gapCount = 0;
    this.hashKey(bytes);
    this.hashContent(bytes, objectStart, objectEnd);
    return true;
  }

  /** The member of the scanned line named as key `k`, or -1: where it was in the last line first (the line's names are distinct: readScanned). */
  private memberNamed(line: JsonLine, k: number): number {
    const name = this.names[k];
    const guess = this.scannedAt[k];
    if (guess >= 0 && guess < line.count && sameName(line, guess, name)) return guess;
    for (let m = 0; m < line.count; m++) {
      if (sameName(line, m, name)) {
        this.scannedAt[k] = m;
        return m;
      }
    }
    return -1;
  }

  /** The key of the last record read, as stored (JSON array text, UTF-8 bytes), a copy of its own: for a row kept beyond the next read. */
  keyJson(): Buffer {
    return Buffer.copyBytesFrom(this.keyBytes, 0, this.keyLength);
  }

  /** The buffer whose first `keyBytesLength` bytes are the key of the last record read (keyJson's bytes): reused by the next read, so the per-row path copies them without allocating. */
  get keyBytes(): Buffer {
    if (this.keyLength < 0) throw new Error('RowIdentity: the key asked for after a read that returned false');
    return this.keyText;
  }

  get keyBytesLength(): number {
    return this.keyLength;
  }

  /**
   * Reads the members after the object's `{` at i when they are those of the
   * layout, in its order, compact: each name compared word by word, not
   * scanned. Returns where the object ends, or -1 when the record is written
   * otherwise (the full reader then reads it from its start) or is not JSON.
   * The per-record loop, string values scanned in place: longer than a
   * function here usually is.
   */
  private laidOut(bytes: Buffer, i: number, end: number): number {
    const view = this.view;
    const base = bytes.byteOffset;
    const { words, masks, offsets, lengths, roles } = this.layout;
    const { keyStarts, keyEnds } = this;
    const last = this.layout.count - 1;
    this.gapCount = 0;
    for (let m = 0; ; m++) {
      const from = offsets[m];
      const to = offsets[m + 1];
      if (i + (to - from) * 4 > end) return -1;
      for (let k = from, p = base + i; k < to; k++, p += 4) {
        if ((view.getInt32(p, true) & masks[k]) !== words[k]) return -1;
      }
      const nameStart = i;
      i += lengths[m];
      if (i >= end) return -1;
      const valueStart = i;
      const first = bytes[i];
      if (first === QUOTE) {
        for (i++; ; ) {
          if (i + 4 > end) {
            i = stringTailEnd(bytes, i, end);
            break;
          }
          const mask = stops(view.getInt32(base + i, true));
          if (mask === 0) {
            i += 4;
            continue;
          }
          i += firstFlagged(mask);
          const b = bytes[i];
          if (b === QUOTE) break;
          if (b === BACKSLASH || b < 0x20) {
            i = escapedStringEnd(bytes, i, end);
            break;
          }
          i++;
        }
        if (i < 0) return -1;
        i++;
      } else if (first === MINUS || (first >= 0x30 && first <= 0x39)) {
        i = numberEnd(bytes, i, end);
      } else {
        const literal = literalToken(bytes, i, end);
        i = literal !== 0 ? i + (literal === JSON_FALSE ? 5 : 4) : this.values.valueEnd(bytes, view, i, end);
      }
      if (i < 0 || i >= end) return -1;
      const role = roles[m];
      if (role >= 0) {
        keyStarts[role] = valueStart;
        keyEnds[role] = i;
      } else if (role === EXCLUDED) {
        // Compact: the comma before the member is just before its name.
        this.leaveOutMember(this.layout.keptBefore(m, EXCLUDED), nameStart - 1, nameStart, i, bytes[i] === COMMA ? i : -1);
      }
      if (bytes[i] === CLOSE) return m === last ? i + 1 : -1;
      if (bytes[i] !== COMMA || m === last) return -1;
      i++;
    }
  }

  /**
   * Reads the members after the object's `{` at i, finding each name's end
   * and which name it is: where the object ends (after its `}`), or -1.
   * Keeps the record's names as the layout when it has every key.
   */
  private members(bytes: Buffer, i: number, end: number): number {
    const layout = this.layout;
    layout.clear();
    this.gapCount = 0;
    for (let k = 0; k < this.keyCount; k++) this.keyStarts[k] = -1;
    let kept = 0;
    let comma = -1;
    i = skipSpace(bytes, i, end);
    if (i < end && bytes[i] === CLOSE) return this.keyCount === 0 ? i + 1 : -1;
    for (let m = 0; ; m++) {
      if (i >= end || bytes[i] !== QUOTE) return -1;
      const nameStart = i;
      const nameEnd = stringEnd(bytes, this.view, i + 1, end);
      if (nameEnd < 0) return -1;
      const role = this.memberOf(bytes, i + 1, nameEnd);
      i = skipSpace(bytes, nameEnd + 1, end);
      if (i >= end || bytes[i] !== COLON) return -1;
      layout.note(m, nameStart, i, role);
      const valueStart = skipSpace(bytes, i + 1, end);
      if (valueStart >= end) return -1;
      const valueEnd = this.values.valueEnd(bytes, this.view, valueStart, end);
      if (valueEnd < 0) return -1;
      i = skipSpace(bytes, valueEnd, end);
      if (i >= end) return -1;
      if (role >= 0) {
        this.keyStarts[role] = valueStart;
        this.keyEnds[role] = valueEnd;
      }
      if (role === EXCLUDED) this.leaveOutMember(kept > 0, comma, nameStart, valueEnd, bytes[i] === COMMA ? i : -1);
      else kept++;
      if (bytes[i] === CLOSE) return this.hasKeys() ? (layout.learn(bytes, m + 1), i + 1) : -1;
      if (bytes[i] !== COMMA) return -1;
      comma = i;
      i = skipSpace(bytes, i + 1, end);
    }
  }

  private hasKeys(): boolean {
    for (let k = 0; k < this.keyCount; k++) if (this.keyStarts[k] < 0) return false;
    return true;
  }

  /** Which name the member named bytes[start, end) has: its index in `names`, or OTHER. */
  private memberOf(bytes: Buffer, start: number, end: number): number {
    const length = end - start;
    if (length < this.nameLengths.length && this.nameLengths[length] !== 0) {
      for (let n = 0; n < this.names.length; n++) {
        const name = this.names[n];
        if (name.length === length && sameBytes(bytes, start, name)) return this.role(n);
      }
    }
    // Another spelling of a name (`user\u0049d`): compared by its text, rarely.
    if (!holdsByte(bytes, start, end, BACKSLASH)) return OTHER;
    return this.role(this.texts.indexOf(JSON.parse(bytes.toString('utf8', start - 1, end + 1)) as string));
  }

  /** The role of the name at index n of `names` (-1: none). */
  private role(n: number): number {
    return n < 0 ? OTHER : n < this.keyCount ? n : EXCLUDED;
  }

  /**
   * Leaves the excluded member out of the content hash: its name, colon,
   * value and the comma before it, or the one after it (at `commaAfter`, -1
   * when it is the last member) when no member is kept before it.
   */
  private leaveOutMember(keptBefore: boolean, commaBefore: number, nameStart: number, valueEnd: number, commaAfter: number): void {
    if (keptBefore) this.leaveOut(commaBefore, valueEnd);
    else this.leaveOut(nameStart, commaAfter < 0 ? valueEnd : commaAfter + 1);
  }

  private leaveOut(start: number, end: number): void {
    if (this.gapCount * 2 === this.gaps.length) {
      const grown = new Int32Array(this.gaps.length * 2);
      grown.set(this.gaps);
      this.gaps = grown;
    }
    this.gaps[this.gapCount * 2] = start;
    this.gaps[this.gapCount * 2 + 1] = end;
    this.gapCount++;
  }

  /** Writes the key array's text (`[` values `,` `]`) and hashes it. */
  private hashKey(bytes: Buffer): void {
    let length = this.keyCount + 1;
    for (let k = 0; k < this.keyCount; k++) length += this.keyEnds[k] - this.keyStarts[k];
    if (length > this.keyText.length) this.keyText = Buffer.alloc(Math.max(length, this.keyText.length * 2));
    const text = this.keyText;
    let n = 0;
    text[n++] = OPEN_ARRAY;
    for (let k = 0; k < this.keyCount; k++) {
      if (k > 0) text[n++] = COMMA;
      for (let p = this.keyStarts[k]; p < this.keyEnds[k]; p++) text[n++] = bytes[p];
    }
    text[n++] = CLOSE_ARRAY;
    this.keyLength = n;
    this.keyHash.of(text, 0, n);
    this.keyHi = this.keyHash.hi;
    this.keyLo = this.keyHash.lo;
  }

  private hashContent(bytes: Buffer, start: number, end: number): void {
    const hash = this.contentHash;
    if (this.gapCount === 0) hash.of(bytes, start, end);
    else {
      hash.begin();
      let from = start;
      for (let g = 0; g < this.gapCount; g++) {
        hash.add(bytes, from, this.gaps[g * 2]);
        from = this.gaps[g * 2 + 1];
      }
      hash.add(bytes, from, end);
      hash.end();
    }
    this.contentHi = hash.hi;
    this.contentLo = hash.lo;
  }
}

function sameBytes(bytes: Uint8Array, start: number, name: Uint8Array): boolean {
  for (let k = 0; k < name.length; k++) if (bytes[start + k] !== name[k]) return false;
  return true;
}

function holdsByte(bytes: Uint8Array, start: number, end: number, byte: number): boolean {
  for (let k = start; k < end; k++) if (bytes[k] === byte) return true;
  return false;
}

/** Whether the scanned line's member `m` has the name `name` (its bytes: the scanner reads names without escapes). */
function sameName(line: JsonLine, m: number, name: Uint8Array): boolean {
  const start = line.nameStarts[m];
  return line.nameEnds[m] - start === name.length && sameBytes(line.buffer, start, name);
}
