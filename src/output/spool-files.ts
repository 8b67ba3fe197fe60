import type { StatsFs, WriteStream } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { type Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { fs } from '../builtins.js';
import { openPrivateFileSync, privateWriteStream } from './private-files.js';
import type { SpoolCodec } from './spool-codec.js';

/**
 * Where a spool's bytes go: the first `headLimit` bytes to a plain file
 * (`records.jsonl`), the rest through the codec to a compressed one. A plain
 * head costs the run a copy into the page cache and a read to send back,
 * where compressing and decompressing a 200,000-record pass took about 0.3 s
 * of CPU (half again a plain sync's time on two cores); the compressed tail
 * keeps a pass larger than the head at about 6 % of its size. The head is
 * written at once, on the main thread: a megabyte copied into the page cache
 * costs less than its trip to the thread pool on a busy machine (a 200,000-
 * record pass 1.23x a plain sync's time against 1.35x, and no more memory
 * than the plain sync), and a disk that cannot keep up stalls the pass
 * either way. It is checked by a CRC-32, as the codec's own checksum checks
 * the tail: a byte that changed on disk fails the run before its STATE.
 */
export class SpoolFiles extends Writable {
  private head: { fd: number; bytes: number; crc: number } | undefined;
  private tail: { compressor: Transform; file: WriteStream; written: Promise<void> } | undefined;

  constructor(
    private readonly folder: string,
    private readonly codec: SpoolCodec,
    /** Bytes kept plain before the rest is compressed; 0: all compressed. */
    private readonly headLimit: number,
    highWaterMark: number,
  ) {
    super({ highWaterMark });
  }

  /** Bytes on disk so far, both files. */
  get bytesWritten(): number {
    return (this.head?.bytes ?? 0) + (this.tail?.file.bytesWritten ?? 0);
  }

  /** What was written to each file (undefined: a file never made), for the check before the records are sent. */
  get sizes(): WrittenSizes {
    return { head: this.head?.bytes, tail: this.tail?.file.bytesWritten, headCrc: this.head?.crc ?? 0 };
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    if (this.tail !== undefined || (this.head?.bytes ?? 0) + chunk.length > this.headLimit) {
      (this.tail ??= this.openTail()).compressor.write(chunk, done);
      return;
    }
    try {
      const head = (this.head ??= { fd: openPrivateFileSync(join(this.folder, HEAD_FILE)), bytes: 0, crc: 0 });
      for (let at = 0; at < chunk.length; ) at += fs.writeSync(head.fd, chunk, at);
      head.bytes += chunk.length;
      head.crc = zlib.crc32(chunk, head.crc);
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  }

  override _final(done: (error?: Error | null) => void): void {
    this.closeHead();
    this.tail?.compressor.end();
    Promise.resolve(this.tail?.written).then(() => done(), done);
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    this.closeHead();
    this.tail?.compressor.destroy();
    done(error);
  }

  private closeHead(): void {
    const head = this.head;
    if (head === undefined || head.fd < 0) return;
    fs.closeSync(head.fd);
    head.fd = -1;
  }

  private openTail(): { compressor: Transform; file: WriteStream; written: Promise<void> } {
    const compressor = this.codec.compressor();
    const file = privateWriteStream(join(this.folder, this.codec.file));
    const written = pipeline(compressor, file);
    written.catch((error: Error) => this.destroy(error));
    return { compressor, file, written };
  }
}

/** The plain head's file name. */
export const HEAD_FILE = 'records.jsonl';

export interface WrittenSizes {
  /** Undefined: no record was kept plain (the head's bound is 0), and no plain file was made. */
  head: number | undefined;
  /** Undefined: the pass fit in the head, and no compressed file was made. */
  tail: number | undefined;
  headCrc: number;
}

/** The spool's files, opened for reading once checked: the records sent are those checked, whatever happens to their names. */
export interface OpenedSpool {
  head: FileHandle | undefined;
  tail: FileHandle | undefined;
}

/** Compressed bytes read from the spool's tail at a time when it is sent. */
const READ_CHUNK = 1024 * 1024;
/**
 * Plain bytes read from the head at a time, as large as the decompressor's
 * chunks (spool-codec.ts): a chunk waits whole for stdout, so a stop signal
 * that waits for the pass counts the records stdout has not taken, not a
 * megabyte of them queued at once.
 */
const HEAD_READ_CHUNK = 128 * 1024;
/** Buffers the head is read into: one read while stdout still holds the others. */
const HEAD_BUFFERS = 4;
/** Reads of the head between two turns of the event loop: 8 MiB. */
const READS_PER_TURN = 64;

/** Hands a chunk of the spool to its consumer, which calls `reusable` once it no longer needs the buffer. */
export type SendChunk = (chunk: Buffer, reusable: () => void) => Promise<void>;

/**
 * Reads the spool back in order, the head as it is and then the tail through
 * the codec, handing each chunk to `send` (which may wait for its consumer).
 * A head whose CRC-32 is not the one written fails once it is read, as the
 * codec's checksum fails the tail.
 */
export async function readSpool(opened: OpenedSpool, codec: SpoolCodec, headCrc: number, send: SendChunk): Promise<void> {
  if (opened.head !== undefined) {
    const crc = await readHead(opened.head, send);
    if (crc !== headCrc) throw new Error(`the spool's plain part changed on disk after it was written (CRC-32 ${crc >>> 0} where ${headCrc >>> 0} was written)`);
  }
  if (opened.tail === undefined) return;
  const read = opened.tail.createReadStream({ autoClose: false, start: 0, highWaterMark: READ_CHUNK });
  await pipeline(read, codec.decompressor(), async (chunks: AsyncIterable<Buffer>) => {
    for await (const chunk of chunks) await send(chunk, () => undefined);
  });
}

/**
 * The plain head, read into a few buffers used again and again as stdout
 * lets go of them: fresh buffers for 100 MB cost their page faults and the
 * garbage collections that free them. Read at once, not on the thread pool:
 * the head is in the page cache, and a trip to the pool and back per read
 * cost more than the read (sending a 200,000-record pass took 180-270 ms
 * that way, on the 2-core VM). Returns the CRC-32 of what was read.
 */
async function readHead(head: FileHandle, send: SendChunk): Promise<number> {
  const free: Buffer[] = Array.from({ length: HEAD_BUFFERS }, () => Buffer.allocUnsafeSlow(HEAD_READ_CHUNK));
  let freed: (() => void) | undefined;
  const reusable = (buffer: Buffer) => () => {
    free.push(buffer);
    freed?.();
  };
  let crc = 0;
  for (let position = 0, reads = 1; ; reads++) {
    while (free.length === 0) await new Promise<void>((resolve) => (freed = resolve));
    // A stdout that takes everything at once (a file) never makes the loop wait: a turn of the event loop now and then serves timers (the lease) and signals.
    if (reads % READS_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
    const buffer = free.pop()!;
    const bytesRead = fs.readSync(head.fd, buffer, 0, buffer.length, position);
    if (bytesRead === 0) return crc;
    position += bytesRead;
    const chunk = buffer.subarray(0, bytesRead);
    crc = zlib.crc32(chunk, crc);
    await send(chunk, reusable(buffer));
  }
}

/** statfs magic numbers of file systems held in memory: a plain head there would take RAM (a container's tmpfs /tmp). */
const MEMORY_FILE_SYSTEMS = new Set([0x01021994 /* tmpfs */, 0x858458f6 /* ramfs */]);
/** The plain head's longest: a pass larger than this is compressed beyond it. */
export const HEAD_LIMIT_BYTES = 1024 * 1024 * 1024;

/**
 * How many bytes of a pass spooled in `directory` stay plain: none on a file
 * system held in memory, or where this Node has no CRC-32 (the head could not
 * be checked); else up to 1 GiB, at most a tenth of the room the disk has and
 * a quarter of the spool's bound (spool_max_mb), so that a pass the bound
 * took compressed still fits in it.
 */
export function plainHeadLimit(directory: string, maxBytes: number, statfs: (path: string) => Pick<StatsFs, 'type' | 'bavail' | 'bsize'> = fs.statfsSync): number {
  if (typeof zlib.crc32 !== 'function') return 0;
  try {
    const disk = statfs(directory);
    if (MEMORY_FILE_SYSTEMS.has(disk.type)) return 0;
    return Math.min(HEAD_LIMIT_BYTES, Math.floor((disk.bavail * disk.bsize) / 10), Math.floor(maxBytes / 4));
  } catch {
    return 0;
  }
}
