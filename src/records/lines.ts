import { isUtf8 } from 'node:buffer';
import { InvalidRecordError } from './invalid-record.js';

/**
 * Splits a byte stream into lines without decoding them: each complete line
 * is handed out as a byte range, checked to be UTF-8 (a chunk's whole lines at
 * once, in native code), for the consumer to decode only what it needs. A
 * partial last line is held until the next chunk and never handed out on its
 * own unless the body ended cleanly.
 */
export class LineSplitter {
  private pending: Buffer[] | undefined;
  private pendingBytes = 0;
  private oversized = false;
  private first = true;
  lineNumber = 0;

  constructor(
    private readonly maxLineBytes: number,
    /** A line's bytes, valid UTF-8 without its line break, valid only during the call. */
    private readonly onLine: (buffer: Buffer, start: number, end: number, lineNumber: number) => void,
    private readonly onInvalidLine: (error: InvalidRecordError, lineNumber: number) => void,
    /**
     * Reads the line at `start` (of a chunk whose whole lines end by `limit`)
     * while finding its end: its line break's index, or -1 to have the
     * splitter search for it. A reader that reads every line anyway spares
     * a search per line this way.
     */
    private readonly readLine?: (buffer: Buffer, start: number, limit: number) => number,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    if (this.pending) {
      // Only the line that straddles chunks is joined, once, when it ends; the chunk itself is read in place.
      const newline = chunk.indexOf(10);
      if (newline === -1) {
        this.hold(chunk, 0);
        return;
      }
      const joined = Buffer.concat([...this.pending, chunk.subarray(0, newline)]);
      this.pending = undefined;
      this.pendingBytes = 0;
      this.line(joined, 0, joined.length, isUtf8(joined));
      start = newline + 1;
    }
    const last = chunk.lastIndexOf(10);
    // One check for all the chunk's whole lines; only if it fails, line by line.
    const utf8 = last > start && isUtf8(chunk.subarray(start, last));
    const { readLine } = this;
    for (;;) {
      let end = readLine !== undefined && start < last ? readLine(chunk, start, last + 1) : -1;
      if (end === -1) end = chunk.indexOf(10, start);
      if (end === -1) break;
      this.line(chunk, start, end, utf8 || isUtf8(chunk.subarray(start, end)));
      start = end + 1;
    }
    if (start < chunk.length) this.hold(chunk, start);
  }

  /** Keeps the start of an unfinished line for the next chunk, or only the fact that it is too long. */
  private hold(chunk: Buffer, start: number): void {
    this.pendingBytes += chunk.length - start;
    if (this.oversized || this.pendingBytes > this.maxLineBytes) {
      this.oversized = true;
      this.pending = undefined;
      this.pendingBytes = 0;
      return;
    }
    (this.pending ??= []).push(Buffer.from(chunk.subarray(start)));
  }

  /** The body ended cleanly: a last line without a newline is still a line. */
  end(): void {
    if (this.pending && this.pending.length > 0) {
      const last = Buffer.concat(this.pending);
      this.pending = undefined;
      this.pendingBytes = 0;
      this.line(last, 0, last.length, isUtf8(last));
    } else if (this.oversized) {
      this.line(Buffer.alloc(0), 0, 0, true);
    }
  }

  private line(buffer: Buffer, start: number, end: number, utf8: boolean): void {
    this.lineNumber++;
    if (this.first) {
      this.first = false;
      // A UTF-8 byte order mark before the first line is not part of the record.
      if (end - start >= 3 && buffer[start] === 0xef && buffer[start + 1] === 0xbb && buffer[start + 2] === 0xbf) start += 3;
    }
    if (this.oversized || end - start > this.maxLineBytes) {
      this.oversized = false;
      this.onInvalidLine(new InvalidRecordError(`line is longer than max_line_bytes (${this.maxLineBytes})`), this.lineNumber);
      return;
    }
    if (end > start && buffer[end - 1] === 13) end--;
    if (end === start) return;
    if (!utf8) {
      this.onInvalidLine(new InvalidRecordError('line is not valid UTF-8'), this.lineNumber);
      return;
    }
    this.onLine(buffer, start, end, this.lineNumber);
  }
}
