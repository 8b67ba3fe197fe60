import { isUtf8 } from 'node:buffer';
import { InvalidRecordError } from './invalid-record.js';

/**
 * Splits a byte stream into lines without decoding whole chunks to strings:
 * only each complete line is decoded. A partial last line is held until the
 * next chunk and never handed out on its own unless the body ended cleanly.
 */
export class LineSplitter {
  private pending: Buffer[] | undefined;
  private pendingBytes = 0;
  private oversized = false;
  private first = true;
  lineNumber = 0;

  constructor(
    private readonly maxLineBytes: number,
    private readonly onLine: (text: string, lineNumber: number, buffer: Buffer, start: number, end: number) => void,
    private readonly onInvalidLine: (error: InvalidRecordError, lineNumber: number) => void,
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
      this.line(joined, 0, joined.length);
      start = newline + 1;
    }
    for (;;) {
      const end = chunk.indexOf(10, start);
      if (end === -1) break;
      this.line(chunk, start, end);
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
      this.line(last, 0, last.length);
    } else if (this.oversized) {
      this.line(Buffer.alloc(0), 0, 0);
    }
  }

  private line(buffer: Buffer, start: number, end: number): void {
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
    const text = buffer.toString('utf8', start, end);
    // Decoding replaces bad bytes with U+FFFD; only then is the slower exact check worth it.
    if (text.includes('\uFFFD') && !isUtf8(buffer.subarray(start, end))) {
      this.onInvalidLine(new InvalidRecordError('line is not valid UTF-8'), this.lineNumber);
      return;
    }
    this.onLine(text, this.lineNumber, buffer, start, end);
  }
}
