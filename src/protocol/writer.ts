import type { Writable } from 'node:stream';
import { runtimeError } from '../errors.js';

/**
 * Batches protocol lines into large writes and honours backpressure: once the
 * destination's buffer is full, `drain()` waits, so a slow consumer slows the
 * tap down instead of growing its memory.
 */
export class MessageWriter {
  private pending = '';
  private blocked = false;
  private failure: Error | undefined;

  constructor(
    private readonly out: Writable,
    private readonly batchChars = 64 * 1024,
  ) {
    out.on('error', (error: Error) => {
      this.failure = error;
    });
  }

  /** Queues one line (without its newline). */
  line(text: string): void {
    this.pending += text;
    this.pending += '\n';
    if (this.pending.length >= this.batchChars) this.flush();
  }

  /** True when the caller should `await drain()` before producing more. */
  get full(): boolean {
    return this.blocked || this.failure !== undefined;
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    const text = this.pending;
    this.pending = '';
    if (!this.out.write(text)) this.blocked = true;
  }

  private check(): void {
    if (this.failure) {
      const code = (this.failure as NodeJS.ErrnoException).code;
      throw runtimeError(`Cannot write to stdout (${code ?? this.failure.message}): the consumer closed the pipe. Check the target's log.`, this.failure);
    }
  }

  /** Writes what is queued and waits until the destination can take more. */
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

  /** Writes everything and waits until it has left the process's buffers. */
  async end(): Promise<void> {
    await this.drain();
    this.check();
    if (this.out.writableNeedDrain) await this.drain();
  }
}
