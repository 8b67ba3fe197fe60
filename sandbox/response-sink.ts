import type { ServerResponse } from 'node:http';
import { Writable, pipeline } from 'node:stream';
import { createGzip } from 'node:zlib';
import { waitDrain } from './dump-writer.js';

export interface SinkOptions {
  readonly gzip: boolean;
  /** Destroy the socket once this many body bytes (after compression) are out; null: never. */
  readonly dropAfterBytes: number | null;
  readonly bytesPerSecond: number | null;
  readonly onDrop: () => void;
}

/** Where a response body is written: `head` takes the uncompressed body. */
export interface ResponseSink {
  readonly head: Writable;
  /** Settles when the body has been handed to the socket, or the response failed. */
  readonly done: Promise<void>;
  /** True once writing is pointless: client gone, connection cut. */
  stopped(): boolean;
}

class DroppedByFault extends Error {
  constructor() {
    super('connection dropped by fault injection');
  }
}

/** Writes to the HTTP response, applying the body faults (cut connection, throttling). */
class ResponseWriter extends Writable {
  private sent = 0;

  constructor(
    private readonly res: ServerResponse,
    private readonly options: SinkOptions,
  ) {
    super({ highWaterMark: 64 * 1024 });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.send(chunk).then(() => callback(), (error: Error) => callback(error));
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.res.end(() => callback());
  }

  private async send(chunk: Buffer): Promise<void> {
    const { dropAfterBytes, bytesPerSecond } = this.options;
    if (dropAfterBytes !== null && this.sent + chunk.length > dropAfterBytes) {
      const part = chunk.subarray(0, dropAfterBytes - this.sent);
      await new Promise<void>((resolve) => {
        if (part.length === 0) return resolve();
        this.res.write(part, () => resolve());
      });
      this.sent += part.length;
      this.options.onDrop();
      this.res.socket?.destroy();
      throw new DroppedByFault();
    }
    if (bytesPerSecond === null) {
      await this.push(chunk);
      return;
    }
    // Small slices with pauses between them approximate a steady rate.
    const slice = Math.max(1, Math.floor(bytesPerSecond / 20));
    for (let at = 0; at < chunk.length; at += slice) {
      const piece = chunk.subarray(at, at + slice);
      await this.push(piece);
      await new Promise((resolve) => setTimeout(resolve, (piece.length / bytesPerSecond) * 1000));
      if (this.res.destroyed) return;
    }
  }

  private async push(chunk: Buffer): Promise<void> {
    this.sent += chunk.length;
    if (!this.res.write(chunk)) await waitDrain(this.res);
  }
}

export function createResponseSink(res: ServerResponse, options: SinkOptions): ResponseSink {
  const writer = new ResponseWriter(res, options);
  let failed = false;
  let head: Writable = writer;
  let done: Promise<void>;
  if (options.gzip) {
    // Level 1: the sandbox should not be the bottleneck of a benchmark; the ratio is still good on this text.
    const gzip = createGzip({ level: 1 });
    head = gzip;
    done = new Promise((resolve) => {
      pipeline(gzip, writer, (error) => {
        if (error) failed = true;
        resolve();
      });
    });
  } else {
    done = new Promise((resolve) => {
      writer.on('finish', () => resolve());
      writer.on('error', () => {
        failed = true;
        resolve();
      });
    });
  }
  return {
    head,
    done,
    stopped: () => failed || res.destroyed || writer.destroyed,
  };
}
