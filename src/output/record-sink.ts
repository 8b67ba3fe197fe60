import type { JsonLine } from '../records/json-line.js';

/**
 * Where the decoders put record lines: stdout as RECORD messages (the
 * MessageWriter), or batch files (BatchFiles). Each call of `commit`, `line`
 * or `spliced` queues exactly one record's line.
 */
export interface RecordSink {
  /** Where the next line starts in the block `reserve` returns. */
  readonly pos: number;
  /** A block with at least `bytes` free after `pos`, to build a line in. */
  reserve(bytes: number): Buffer;
  /** Queues what the caller built in the reserved block, up to `end`. */
  commit(end: number): void;
  /** Queues one line (without its newline). */
  line(text: string): void;
  /** Queues `head`, `source[start..end)` as it is, and `tail`. */
  spliced(head: Buffer, source: Buffer, start: number, end: number, tail: Buffer): void;
  /**
   * The record the next `spliced` queues is this line as the JSONL scanner
   * read it (its members' places), copied as it came: a sink that reads
   * records (the change store's) need not scan it again. Its member names
   * are distinct (JsonLineEncoder.prepare refuses a line with a name given
   * twice). Optional.
   */
  scannedLine?(line: JsonLine): void;
  /** True when the caller should `await drain()` before producing more. */
  readonly full: boolean;
  /** Hands what is queued on and waits until more can be taken. */
  drain(): Promise<void>;
}
