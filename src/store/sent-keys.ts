import { rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip, type Gzip } from 'node:zlib';
import { fs } from '../builtins.js';
import { PRIVATE_FILE_MODE } from '../output/private-files.js';
import { GZIP_LEVEL, KeyEntrySplitter } from './generation-file.js';

/** Bytes handed to the compressor and not compressed yet beyond which the run waits (ChangedRows.drain): memory stays bounded whatever the disk's speed. */
const BACKLOG_BYTES = 4 * 1024 * 1024;
const CHUNK = 128 * 1024;

/**
 * The key entries a run sent, compressed as they come (gzip at the
 * generation's level, in the thread pool, beside the run) into an
 * owner-only file. When every key sent goes into the next generation as it
 * came (a first run, a run that sent only new keys), these bytes are its new
 * keys section as they are (`compressed`), so the commit compresses nothing;
 * otherwise they are read back in blocks of whole entries (`blocks`).
 */
export class SentKeysFile {
  private readonly gzip: Gzip;
  private readonly written: Promise<void>;
  private failure: unknown;

  private constructor(
    readonly path: string,
    fd: number,
  ) {
    this.gzip = createGzip({ level: GZIP_LEVEL, chunkSize: CHUNK });
    this.written = pipeline(this.gzip, fs.createWriteStream(path, { fd, autoClose: true })).catch((error: unknown) => {
      this.failure ??= error;
    });
  }

  /** A new owner-only file at `path` (it must not exist), made at once: a folder that refuses fails the run's start, not its commit. */
  static create(path: string): SentKeysFile {
    const fd = fs.openSync(path, 'wx', PRIVATE_FILE_MODE);
    try {
      fs.fchmodSync(fd, PRIVATE_FILE_MODE);
    } catch (error) {
      fs.closeSync(fd);
      throw error;
    }
    return new SentKeysFile(path, fd);
  }

  /** Hands a block of whole key entries over: the caller must not fill it again. */
  write(block: Buffer): void {
    if (this.failure === undefined && block.length > 0) this.gzip.write(block);
  }

  /** Whether the compressor holds so much the run should wait (`drained`). */
  get backlogged(): boolean {
    return this.gzip.writableLength > BACKLOG_BYTES;
  }

  /** Resolves once the compressor has room again (at once if it has). */
  async drained(): Promise<void> {
    if (!this.backlogged || this.failure !== undefined) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        this.gzip.off('drain', done);
        this.gzip.off('close', done);
        resolve();
      };
      this.gzip.on('drain', done);
      this.gzip.on('close', done);
    });
  }

  /** Every block written is in the file; throws the first failure (a full disk). */
  async finish(): Promise<void> {
    this.gzip.end();
    await this.written;
    if (this.failure !== undefined) throw this.failure;
  }

  /** The file's bytes: a gzip member of the entries, as a generation's keys section holds them. */
  compressed(): AsyncIterable<Buffer> {
    return fs.createReadStream(this.path, { highWaterMark: CHUNK });
  }

  /** The entries, in blocks of whole entries (views valid until the next block). */
  async *blocks(): AsyncGenerator<Buffer> {
    const splitter = new KeyEntrySplitter();
    const gunzip = createGunzip({ chunkSize: CHUNK });
    const source = fs.createReadStream(this.path, { highWaterMark: CHUNK });
    source.on('error', (error) => gunzip.destroy(error)).pipe(gunzip);
    try {
      for await (const chunk of gunzip as AsyncIterable<Buffer>) yield* splitter.push(chunk);
    } finally {
      gunzip.destroy();
      source.destroy();
    }
    if (splitter.pending > 0) throw new Error(`${this.path} ends with a cut key.`);
  }

  /** Stops compressing (a run that failed or is discarded) and removes the file. */
  async discard(): Promise<void> {
    this.gzip.destroy();
    await this.written;
    await rm(this.path, { force: true }).catch(() => undefined);
  }
}
