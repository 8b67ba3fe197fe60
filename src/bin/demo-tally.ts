import { Writable } from 'node:stream';

/** What the demo keeps of one stream's messages: its RECORD count and its first RECORD line. */
export interface StreamTally {
  readonly stream: string;
  readonly records: number;
  /** The stream's first RECORD message, byte for byte as the tap wrote it (one line, no newline). */
  readonly sample: string | undefined;
}

const NEWLINE = 0x0a;

/**
 * Where the demo's messages go on a terminal: each line is looked at as it
 * passes and then forgotten, so memory holds one line at a time and a
 * stream's first RECORD, never the dump.
 */
export class MessageTally extends Writable {
  private readonly tallies = new Map<string, { records: number; sample: string | undefined }>();
  /** The start of a line whose newline has not come yet (writes need not end at a line's end). */
  private partial: Buffer[] = [];
  private messageCount = 0;
  private byteCount = 0;

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.byteCount += chunk.length;
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      this.partial.push(chunk.subarray(start, end));
      this.takeLine();
      start = end + 1;
    }
    // A copy: the writer reuses its blocks once a write is done.
    if (start < chunk.length) this.partial.push(Buffer.from(chunk.subarray(start)));
    done();
  }

  override _final(done: (error?: Error | null) => void): void {
    if (this.partial.length > 0) this.takeLine();
    done();
  }

  /** Messages seen so far (every line). */
  get messages(): number {
    return this.messageCount;
  }

  /** Bytes seen so far, newlines included. */
  get bytes(): number {
    return this.byteCount;
  }

  /** Each stream that sent a RECORD, in the order of its first. */
  streams(): StreamTally[] {
    return [...this.tallies].map(([stream, tally]) => ({ stream, ...tally }));
  }

  private takeLine(): void {
    const line = Buffer.concat(this.partial).toString('utf8');
    this.partial = [];
    this.messageCount++;
    const stream = recordStream(line);
    if (stream === undefined) return;
    const tally = this.tallies.get(stream);
    if (tally === undefined) this.tallies.set(stream, { records: 1, sample: line });
    else tally.records++;
  }
}

/** The stream of a RECORD message, or undefined for any other line. */
function recordStream(line: string): string | undefined {
  let message: unknown;
  try {
    message = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof message !== 'object' || message === null) return undefined;
  const { type, stream } = message as { type?: unknown; stream?: unknown };
  return type === 'RECORD' && typeof stream === 'string' ? stream : undefined;
}
