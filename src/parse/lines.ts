import { isUtf8 } from 'node:buffer';
import { InvalidRecordError } from '../conform.js';

/**
 * Splits a byte stream into lines without decoding whole chunks to strings:
 * only each complete line is decoded. A partial last line is held until the
 * next chunk and never handed out on its own unless the body ended cleanly.
 */
export class LineSplitter {
  private pending: Buffer | undefined;
  private oversized = false;
  lineNumber = 0;

  constructor(
    private readonly maxLineBytes: number,
    private readonly onLine: (text: string, lineNumber: number, buffer: Buffer, start: number, end: number) => void,
    private readonly onInvalidLine: (error: InvalidRecordError, lineNumber: number) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    let buffer = chunk;
    if (this.pending) {
      buffer = Buffer.concat([this.pending, chunk]);
      start = 0;
      this.pending = undefined;
    }
    for (;;) {
      const end = buffer.indexOf(10, start);
      if (end === -1) break;
      this.line(buffer, start, end);
      start = end + 1;
    }
    if (start < buffer.length) {
      const rest = buffer.length - start;
      if (rest > this.maxLineBytes) {
        // Drop the bytes of an over-long line but remember to report it when it ends.
        this.oversized = true;
        this.pending = undefined;
      } else {
        this.pending = buffer.subarray(start);
        if (buffer !== chunk || start > 0) this.pending = Buffer.from(this.pending);
      }
    }
  }

  /** The body ended cleanly: a last line without a newline is still a line. */
  end(): void {
    if (this.pending && this.pending.length > 0) {
      const last = this.pending;
      this.pending = undefined;
      this.line(last, 0, last.length);
    } else if (this.oversized) {
      this.line(Buffer.alloc(0), 0, 0);
    }
  }

  private line(buffer: Buffer, start: number, end: number): void {
    this.lineNumber++;
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
