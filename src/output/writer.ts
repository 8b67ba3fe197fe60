import type { Writable } from 'node:stream';
import { outputClosed, type TapError } from '../errors.js';
import type { RecordSink } from './record-sink.js';

const BLOCK = 256 * 1024;
const EMPTY = Buffer.alloc(0);
/** Bytes queued that a message sends as a copy of their own rather than with their block (send). */
const SMALL_WRITE = 16 * 1024;
const SEALED = new Error('the run is stopping: nothing more goes to stdout');

/**
 * Collects protocol lines as bytes in large blocks and honours backpressure:
 * once the destination's buffer is full, `drain()` waits, so a slow consumer
 * slows the tap down instead of growing its memory. Records that need no
 * change are copied byte for byte from the response (no decode, no encode).
 */
export class MessageWriter implements RecordSink {
  private block: Buffer;
  /** Blocks the destination has finished with, reused so steady output allocates nothing. */
  private readonly spare: Buffer[] = [];
  /** Spare blocks kept: as many as the destination may queue, and two more. */
  private readonly spares: number;
  private at = 0;
  /** Where the last `reserve` left the caller to build its line: `commit` checks nothing was queued since. */
  private reservedAt = -1;
  private blocked = false;
  private failure: NodeJS.ErrnoException | undefined;
  /** Set by `seal`: the run is being stopped, and nothing written after its last lines may reach the target. */
  private sealed = false;
  /** Records queued (`commit`, `spliced`, `line`, and those `pass` and `countRecords` name): what stdout's error says went out before it closed. */
  private recordCount = 0;
  /** Records whose bytes stdout has taken (its write's callback came): what a stop may say went out. */
  private writtenCount = 0;
  /** Records handed to the destination (`write` called): those written, and those of a write not yet done (a full pipe may hold part of it). */
  private handedCount = 0;

  /**
   * `failed` turns a write error into the error the run reports (by default:
   * stdout closed by the consumer, after how many records); `blockSize`:
   * bytes handed to the destination at a time.
   */
  constructor(
    private readonly out: Writable,
    private readonly failed: (error: NodeJS.ErrnoException, records: number) => TapError = outputClosed,
    private readonly blockSize = BLOCK,
  ) {
    this.block = Buffer.allocUnsafe(blockSize);
    this.spares = Math.max(4, Math.ceil(out.writableHighWaterMark / blockSize) + 2);
    out.on('error', (error: Error) => {
      this.failure = error;
    });
  }

  /** Where the next line starts in the block `reserve` returns. */
  get pos(): number {
    return this.at;
  }

  /**
   * The current block, with at least `bytes` free after `pos`: a caller may
   * build a line there, and queue it with `commit`, or drop it by not doing so.
   */
  reserve(bytes: number): Buffer {
    if (this.at + bytes > this.block.length) {
      this.flush();
      if (bytes > this.block.length) this.block = Buffer.allocUnsafe(Math.max(bytes, this.blockSize));
    }
    this.reservedAt = this.at;
    return this.block;
  }

  /**
   * Queues what the caller built in the reserved block, up to `end`. Refused
   * when anything was queued or sent since `reserve` (a log line in between):
   * the line would then be built where other bytes are, or were.
   */
  commit(end: number): void {
    if (this.at !== this.reservedAt) throw new RangeError(`commit(${end}) after other output since reserve (at ${this.reservedAt}, now ${this.at})`);
    if (end < this.at || end > this.block.length) throw new RangeError(`commit(${end}) outside the reserved block [${this.at}, ${this.block.length}]`);
    this.at = end;
    this.recordCount++;
  }

  /** Records queued so far (`message` lines are not records). */
  get records(): number {
    return this.recordCount;
  }

  /** Records written to the destination so far: those queued less those still in the block or in the destination's own buffer. */
  get written(): number {
    return this.writtenCount;
  }

  /** Records handed to the destination so far: `written`, and those of writes still going on. */
  get handed(): number {
    return this.handedCount;
  }

  /** Counts records that go out another way: those of a batch file a BATCH message announces (delivered: written). */
  countRecords(records: number): void {
    this.recordCount += records;
    this.writtenCount += records;
    this.handedCount += records;
  }

  /** `written`, after which every record queued until now counts as written. */
  private counting<E>(written: ((error?: E) => void) | undefined): (error?: E) => void {
    const upTo = this.recordCount;
    this.handedCount = upTo;
    return (error) => {
      if (!error) this.writtenCount = Math.max(this.writtenCount, upTo);
      written?.(error);
    };
  }

  /**
   * The destination failed or is gone, as far as is known now: a write to a
   * pipe whose reader closed fails at once, its error event comes a tick later.
   */
  get broken(): boolean {
    return this.failure !== undefined || this.sealed || (this.out.destroyed && !this.out.writableFinished);
  }

  /** Queues one record's line (without its newline). */
  line(text: string): void {
    this.queue(text);
    this.recordCount++;
  }

  /**
   * Sends one line that is not a record (SCHEMA, STATE, LOG, a status …),
   * without its newline, at once with what is queued before it: such lines
   * are few, and the consumer should see them when they happen (Airbyte's
   * STARTED and a wait's LOG while the server is silent), not when a block
   * of records fills. `full` still says when to drain.
   */
  message(text: string): void {
    this.queue(text);
    this.send();
  }

  /**
   * Hands what is queued to the destination now (a message, a stop that
   * sends its last lines). A little of it (a message
   * and the few records before it) goes as a copy of its own size and the
   * block stays: handing the block itself would hold all of its 256 KiB
   * until the write is done, for every message (a burst of LOG lines would
   * pin a block each, unseen by backpressure).
   */
  send(): void {
    if (this.failure !== undefined) return;
    if (this.sealed || this.at > SMALL_WRITE) return this.flush();
    if (this.at === 0) return;
    const copy = Buffer.from(this.block.subarray(0, this.at));
    this.at = 0;
    this.reservedAt = -1;
    if (!this.out.write(copy, this.counting(undefined))) this.blocked = true;
  }

  private queue(text: string): void {
    const block = this.reserve(text.length * 3 + 1);
    this.at += block.write(text, this.at, 'utf8');
    block[this.at++] = 10;
    this.reservedAt = -1;
  }

  /** Queues `head`, the bytes `source[start..end)` as they are, and `tail`: a record copied from the response without decoding. */
  spliced(head: Buffer, source: Buffer, start: number, end: number, tail: Buffer): void {
    const block = this.reserve(head.length + (end - start) + tail.length);
    let p = this.at;
    // set() for the whole head and tail: Buffer#copy makes a view of its source range first, a cost per call that set() of a whole array does not have.
    block.set(head, p);
    p += head.length;
    p += source.copy(block, p, start, end);
    block.set(tail, p);
    this.at = p + tail.length;
    this.reservedAt = -1;
    this.recordCount++;
  }

  /**
   * Queues `chunk`, whole lines, as it is: it goes to the destination after
   * what is queued, without a copy. The caller may use the buffer again once
   * `written` is called (at once when the writer has failed). `records`:
   * how many records its lines are.
   */
  pass(chunk: Buffer, written?: () => void, records = 0): void {
    if (this.failure !== undefined || this.sealed) {
      written?.();
      return;
    }
    this.recordCount += records;
    this.flush();
    if (!this.out.write(chunk, this.counting(written === undefined ? undefined : () => written()))) this.blocked = true;
  }

  private recycle(block: Buffer): void {
    if (this.spare.length < this.spares) this.spare.push(block);
  }

  /** True when the caller should `await drain()` before producing more. */
  get full(): boolean {
    return this.blocked || this.failure !== undefined;
  }

  /**
   * Sends `text` (a line that is not a record) in a write of its own, once
   * the destination has taken every earlier write, and resolves whether it
   * took all of it: false when it failed or closed first. Writes waiting
   * behind one another go to a pipe as one, failed together when its reader
   * closes, lines that went in with those that did not; a write of its own
   * that failed never put its whole line, the newline last, in the pipe.
   * For a line whose fate decides something (a BATCH message: its file stays
   * only if the target may have read it).
   */
  async deliver(text: string): Promise<boolean> {
    try {
      await this.flushed();
    } catch {
      return false;
    }
    this.queue(text);
    return new Promise((resolve) => this.flush((error) => resolve(!error)));
  }

  /**
   * A stop by signal: `last` goes out after what is queued (whole lines
   * only), and nothing after it: whatever the run still writes while the
   * process waits to end (a record, a STATE) is dropped, and a line delivered
   * meanwhile is told it did not go out.
   */
  seal(last: readonly string[]): void {
    for (const line of last) this.queue(line);
    this.flush();
    this.sealed = true;
  }

  private flush(written?: (error?: Error | null) => void): void {
    if (this.sealed) {
      this.at = 0;
      this.reservedAt = -1;
      return written?.(SEALED);
    }
    if (this.at === 0) return written?.();
    const block = this.block;
    const filled = block.subarray(0, this.at);
    this.block = this.spare.pop() ?? Buffer.allocUnsafe(this.blockSize);
    this.at = 0;
    this.reservedAt = -1;
    const recycle = block.length === this.blockSize ? () => this.recycle(block) : undefined;
    const done = this.counting((error?: Error | null): void => {
      recycle?.();
      written?.(error);
    });
    if (!this.out.write(filled, done)) this.blocked = true;
  }

  private check(): void {
    // The error is set on the stream before its event comes (a tick later); one destroyed without an error (closed by its owner) would leave a wait for 'drain' unending.
    if (this.failure === undefined && this.out.destroyed && !this.out.writableFinished) this.failure = (this.out.errored as NodeJS.ErrnoException | null) ?? Object.assign(new Error('the stream was closed'), { code: 'ERR_STREAM_DESTROYED' });
    if (this.failure) throw this.failed(this.failure, this.recordCount);
  }

  /** Hands what is queued to the destination and waits until it can take more. */
  async drain(): Promise<void> {
    this.check();
    this.flush();
    if (this.blocked) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          this.out.off('drain', done);
          this.out.off('error', done);
          this.out.off('close', done);
          resolve();
        };
        this.out.on('drain', done);
        this.out.on('error', done);
        this.out.on('close', done);
      });
      this.blocked = false;
    }
    this.check();
  }

  /** Writes everything queued and waits for the destination to accept it. */
  async end(): Promise<void> {
    await this.drain();
    if (this.out.writableNeedDrain) await this.drain();
  }

  /**
   * Hands everything queued to the destination and waits until the stream
   * has passed all of it on (to the pipe, for stdout): `drain` may return
   * while a last small write still waits in the stream, which a process that
   * then ends by a signal would lose.
   */
  async flushed(): Promise<void> {
    await this.drain();
    await new Promise<void>((resolve) => {
      if (this.failure !== undefined || this.out.writableLength === 0) return resolve();
      this.out.write(EMPTY, () => resolve());
    });
    this.check();
  }

  /** Lets go of its blocks once the destination has taken them all (after `end`, when it finished): a writer done with its lines holds no memory. */
  release(): void {
    this.spare.length = 0;
    this.block = EMPTY;
  }
}
