import { isUtf8 } from 'node:buffer';
import { InvalidRecordError } from './invalid-record.js';
import { Utf8Validator } from './utf8.js';

/** CSV that cannot be read on (a quoted field left open at the end, a header that is not UTF-8). */
export class CsvSyntaxError extends Error {}

const QUOTE = 34;
const COMMA = 44;
const LF = 10;
const CR = 13;

/** The delimiters a CSV dump may use, in the order that wins a tie. */
export const CSV_DELIMITERS: readonly string[] = [',', ';', '\t', '|'];

/** The delimiter a header line uses: the candidate found most often outside quotes (a comma when none is). */
export function sniffDelimiter(buffer: Buffer, start: number, end: number): number {
  const counts = new Map<number, number>(CSV_DELIMITERS.map((d) => [d.charCodeAt(0), 0]));
  let quoted = false;
  for (let i = start; i < end; i++) {
    const b = buffer[i];
    if (b === QUOTE) quoted = !quoted;
    else if (!quoted && counts.has(b)) counts.set(b, counts.get(b)! + 1);
  }
  let best = COMMA;
  for (const [delimiter, count] of counts) if (count > counts.get(best)!) best = delimiter;
  return best;
}

export const FIELD_QUOTED = 1;
/** The quoted field contains doubled quotes (`""`) that decoding must turn into one. */
export const FIELD_ESCAPED = 2;

/** A field's text: its bytes decoded, doubled quotes made single. */
function fieldText(buffer: Buffer, start: number, end: number, flags: number): string {
  const value = buffer.toString('utf8', start, end);
  return flags & FIELD_ESCAPED ? value.replace(/""/g, '"') : value;
}

/**
 * A row kept past the scanner's callback (see CsvRow.keep): only where its
 * bytes are, until `own` copies them; its fields are split again when its
 * texts are asked for, which for a boundary snapshot is rare.
 */
export class KeptRow {
  constructor(
    private buffer: Buffer,
    private start: number,
    private end: number,
    private readonly delimiter: number,
  ) {}

  /** Copies the row's bytes out of the buffer it was read from, so that it outlives that buffer. */
  own(): void {
    this.buffer = Buffer.from(this.buffer.subarray(this.start, this.end));
    this.start = 0;
    this.end = this.buffer.length;
  }

  texts(): string[] {
    const row = new CsvRow();
    splitRow(row, this.buffer, this.start, this.end, this.delimiter);
    return row.texts();
  }
}

/**
 * One CSV row as byte ranges over the buffer it was read from, valid only
 * during the callback that receives it: no string is made for a field unless
 * someone asks for it.
 */
export class CsvRow {
  buffer: Buffer = Buffer.alloc(0);
  /** Byte range of the whole row, without its line break. */
  start = 0;
  end = 0;
  count = 0;
  starts = new Int32Array(64);
  ends = new Int32Array(64);
  flags = new Uint8Array(64);
  /** Set when a quoted field is followed by something other than a comma: the row is invalid. */
  malformed = false;
  /** The delimiter the row was split on. */
  delimiter = COMMA;

  text(i: number): string {
    return fieldText(this.buffer, this.starts[i], this.ends[i], this.flags[i]);
  }

  texts(): string[] {
    const out = new Array<string>(this.count);
    for (let i = 0; i < this.count; i++) out[i] = this.text(i);
    return out;
  }

  /** The row kept for later: where its bytes are (until `own` copies them), its fields split again when asked for. */
  keep(): KeptRow {
    return new KeptRow(this.buffer, this.start, this.end, this.delimiter);
  }

  add(start: number, end: number, flags: number): void {
    if (this.count === this.starts.length) {
      const grow = <T extends Int32Array | Uint8Array>(a: T, make: (n: number) => T): T => {
        const b = make(a.length * 2);
        b.set(a);
        return b;
      };
      this.starts = grow(this.starts, (n) => new Int32Array(n));
      this.ends = grow(this.ends, (n) => new Int32Array(n));
      this.flags = grow(this.flags, (n) => new Uint8Array(n));
    }
    this.starts[this.count] = start;
    this.ends[this.count] = end;
    this.flags[this.count] = flags;
    this.count++;
  }
}

/**
 * RFC 4180 CSV from a byte stream, row by row, synchronously: quoted fields
 * with delimiters, doubled quotes and line breaks; CRLF or LF; a UTF-8 BOM.
 * The delimiter is given, or sniffed from the header line. Rows are found by
 * byte search (a line break outside quotes), fields are split on bytes, and
 * rows are handed out as byte ranges.
 */
export class CsvScanner {
  private pending: Buffer | undefined;
  /** Where scanning of the pending bytes resumes; the quote state there; where the last quoted field closed. */
  private resumeAt = 0;
  private inQuotes = false;
  private closedAt = -2;
  private readonly utf8 = new Utf8Validator();
  private readonly row = new CsvRow();
  private started = false;
  private oversized = false;
  /** Line number (1-based) where the next row starts. */
  private line = 1;
  /** Set once a chunk failed UTF-8 validation: from then on each row is checked, so the bad one is named (and can be skipped). */
  private checkRows = false;
  private rows = 0;
  /** The last quote search: in which buffer, from where, and what it found (see quoteFrom). */
  private searched: Buffer | undefined;
  private searchedFrom = 0;
  private foundQuote = -1;

  /** `delimiter`: the code of one of CSV_DELIMITERS, or null to sniff it from the header line. */
  constructor(
    private readonly maxRowBytes: number,
    private readonly onRow: (row: CsvRow, lineNumber: number) => void,
    private readonly onInvalidRow: (error: InvalidRecordError, lineNumber: number) => void,
    private delimiter: number | null = COMMA,
  ) {}

  push(chunk: Buffer): void {
    if (!this.utf8.push(chunk)) this.checkRows = true;
    this.scan(chunk);
  }

  private scan(chunk: Buffer): void {
    let buffer = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = undefined;
    if (this.delimiter === null && !this.sniffed(buffer)) return;
    let pos = 0;
    if (!this.started && buffer.length >= 3) {
      this.started = true;
      if (buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf) pos = 3;
    }
    let scan = Math.max(this.resumeAt, pos);
    for (;;) {
      const lf = buffer.indexOf(LF, scan);
      if (lf === -1) break;
      this.quotes(buffer, scan, lf, pos);
      if (this.inQuotes) {
        scan = lf + 1;
        continue;
      }
      this.record(buffer, pos, lf);
      pos = lf + 1;
      scan = pos;
      this.closedAt = -2;
    }
    // Read the quotes of the unfinished tail now, so the next chunk resumes after it.
    this.quotes(buffer, scan, buffer.length, pos);
    if (pos < buffer.length) {
      if (buffer.length - pos > this.maxRowBytes) {
        // Keep only the quote state of an over-long row; report it where it ends.
        this.oversized = true;
        this.closedAt = -2;
        pos = buffer.length;
      }
      this.pending = Buffer.from(buffer.subarray(pos));
      this.closedAt -= pos;
    }
    this.resumeAt = this.pending ? this.pending.length : 0;
  }

  /**
   * Follows quoting from `from` to `to` in the row starting at `rowStart`: a
   * quote opens a quoted field only at the start of a field (or right after
   * the quote that closed one: an escaped `""`); inside an unquoted field it
   * is a literal, as `split` reads it.
   */
  private quotes(buffer: Buffer, from: number, to: number, rowStart: number): void {
    for (let q = this.quoteFrom(buffer, from); q !== -1 && q < to; q = this.quoteFrom(buffer, q + 1)) {
      if (this.inQuotes) {
        this.inQuotes = false;
        this.closedAt = q;
      } else if (q === rowStart || buffer[q - 1] === this.delimiter || q - 1 === this.closedAt) {
        this.inQuotes = true;
      }
    }
  }

  /**
   * The first quote at or after `from` in `buffer`, or -1. One search answers
   * every row before the quote it finds: in a dump with few quoted fields,
   * searching again from each row would read the rest of the chunk each time.
   */
  private quoteFrom(buffer: Buffer, from: number): number {
    const known = buffer === this.searched && from >= this.searchedFrom && (this.foundQuote === -1 || this.foundQuote >= from);
    if (!known) {
      this.searched = buffer;
      this.searchedFrom = from;
      this.foundQuote = buffer.indexOf(QUOTE, from);
    }
    return this.foundQuote;
  }

  /** Decides the delimiter once the header line is complete; until then the bytes wait. */
  private sniffed(buffer: Buffer): boolean {
    const lf = buffer.indexOf(LF);
    if (lf === -1 && buffer.length <= this.maxRowBytes) {
      this.pending = Buffer.from(buffer);
      return false;
    }
    this.delimiter = sniffDelimiter(buffer, 0, lf === -1 ? buffer.length : lf);
    return true;
  }

  /** The body ended cleanly: a last row without a line break is still a row. */
  end(): void {
    if (this.delimiter === null) {
      const rest = this.pending;
      this.pending = undefined;
      this.delimiter = rest ? sniffDelimiter(rest, 0, rest.length) : COMMA;
      if (rest) this.scan(rest);
    }
    if (!this.utf8.end()) this.checkRows = true;
    if (this.inQuotes) throw new CsvSyntaxError(`CSV body ends inside a quoted field that starts at or after line ${this.line}`);
    const rest = this.pending;
    this.pending = undefined;
    if ((rest && rest.length > 0) || this.oversized) this.record(rest ?? Buffer.alloc(0), 0, rest?.length ?? 0);
  }

  private record(buffer: Buffer, start: number, lf: number): void {
    const lineNumber = this.line;
    let newlines = 1;
    for (let n = buffer.indexOf(LF, start); n !== -1 && n < lf; n = buffer.indexOf(LF, n + 1)) newlines++;
    this.line += newlines;
    let end = lf;
    if (end > start && buffer[end - 1] === CR) end--;
    if (this.oversized || end - start > this.maxRowBytes) {
      this.oversized = false;
      if (this.rows === 0) throw new CsvSyntaxError(`the CSV header is longer than max_line_bytes (${this.maxRowBytes})`);
      this.onInvalidRow(new InvalidRecordError(`row is longer than max_line_bytes (${this.maxRowBytes})`), lineNumber);
      return;
    }
    if (end === start) return;
    // Line breaks, quotes and commas are ASCII and never part of a multi-byte
    // character, so row boundaries hold even around invalid bytes.
    if (this.checkRows && !isUtf8(buffer.subarray(start, end))) {
      if (this.rows === 0) throw new CsvSyntaxError('the CSV header is not valid UTF-8');
      this.onInvalidRow(new InvalidRecordError('row is not valid UTF-8'), lineNumber);
      return;
    }
    this.rows++;
    splitRow(this.row, buffer, start, end, this.delimiter!);
    this.onRow(this.row, lineNumber);
  }
}

/** Splits the row `buffer[start..end)` into `row`'s fields (quotes followed, doubled quotes flagged). */
export function splitRow(row: CsvRow, buffer: Buffer, start: number, end: number, delimiter: number): void {
  row.buffer = buffer;
  row.start = start;
  row.end = end;
  row.count = 0;
  row.malformed = false;
  row.delimiter = delimiter;
  let p = start;
  for (;;) {
    if (p < end && buffer[p] === QUOTE) {
      let flags = FIELD_QUOTED;
      let q = p + 1;
      let close: number;
      for (;;) {
        close = buffer.indexOf(QUOTE, q);
        if (close === -1 || close >= end) {
          // Cannot happen for a row found by quote parity; treat the rest as the field.
          close = end;
          row.malformed = true;
          break;
        }
        if (close + 1 < end && buffer[close + 1] === QUOTE) {
          flags |= FIELD_ESCAPED;
          q = close + 2;
          continue;
        }
        break;
      }
      row.add(p + 1, close, flags);
      const after = close + 1;
      if (after >= end) return;
      if (buffer[after] !== delimiter) {
        row.malformed = true;
        const comma = buffer.indexOf(delimiter, after);
        if (comma === -1 || comma >= end) return;
        p = comma + 1;
      } else {
        p = after + 1;
      }
      if (p === end) {
        row.add(end, end, 0);
        return;
      }
      continue;
    }
    // Fields are short: a loop costs less than a native search each.
    let comma = p;
    while (comma < end && buffer[comma] !== delimiter) comma++;
    if (comma >= end) {
      row.add(p, end, 0);
      return;
    }
    row.add(p, comma, 0);
    p = comma + 1;
    if (p === end) {
      row.add(end, end, 0);
      return;
    }
  }
}
