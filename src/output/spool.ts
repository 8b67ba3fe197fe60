import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fs } from '../builtins.js';
import { runtimeError, type TapError } from '../errors.js';
import { MessageWriter } from './writer.js';
import { keepLeaseFresh, LEASE_RENEW_MS } from './lease.js';
import { writePrivateFileSync } from './private-files.js';
import { spoolCodec, type SpoolCodec } from './spool-codec.js';
import { HEAD_FILE, type OpenedSpool, plainHeadLimit, readSpool, SpoolFiles } from './spool-files.js';
import type { RecordSink } from './record-sink.js';
import { type OwnSpool, removeDeadSpools, spoolFolderPrefix } from './spool-leftovers.js';

/**
 * The records of a full pass, held on disk until the whole pass is known
 * good: targets delete at ACTIVATE_VERSION, so the message, and the records
 * after it, may only go out once every byte of the pass was read and checked.
 * The spool is JSONL, plain up to a bound (1 GiB, a tenth of the disk's room,
 * none on a file system in memory: spool-files.ts) and compressed beyond it
 * (zstd, about 5.5 % of the records' size, or gzip, 8 %, on a Node without
 * zstd: spool-codec.ts), in a private folder (0700, the files 0600) of
 * `spool_directory`, removed on every way out: `discard`, the run's stop handlers (signals) and, for a run that
 * died, a later run (`removeDeadSpools`), by the folder's lease file, which
 * the run renews while it lives. Its size is bounded by `maxBytes`: a pass
 * that would pass it fails, deleting nothing.
 */

/**
 * Records handed to the compressor at a time: each block is one job on the
 * thread pool, started only when the main thread, busy reading records,
 * gets back to its event loop; 1 MiB blocks (against the stdout writer's 256
 * KiB) keep the compressor busy between two visits. On a busy machine the
 * main thread then waits for it far less (100-200 ms of a 200,000-record
 * pass against 350-660 with 256 KiB blocks, the shared 2-core VM); on a quiet
 * one the two sizes are alike.
 */
const BLOCK = 1024 * 1024;
/** The lease file's text: its first byte is written again to renew it. */
const LEASE_TEXT = `${JSON.stringify({ tap: 'tap-report-dump', lease: `written every ${LEASE_RENEW_MS / 1000} s while the run that holds this spool lives` })}\n`;

export interface SpoolSettings {
  /** Where the private folder is made; the system temporary directory by default. */
  directory?: string;
  /** How the records beyond the plain head are compressed: zstd where this Node has it (spool-codec.ts). */
  codec?: SpoolCodec;
  /** Bytes kept plain before the rest is compressed; by default as plainHeadLimit says for the directory. */
  plainBytes?: number;
  maxBytes: number;
  /** The run's paths to remove if it is stopped by a signal. */
  removeOnStop: Set<string>;
}

export class Spool implements RecordSink {
  readonly records: MessageWriter;
  /** Records queued. */
  count = 0;
  /** Records handed to the writer by `replay` so far. */
  replayed = 0;
  private readonly files: SpoolFiles;
  private readonly written: Promise<void>;
  private tooLarge = false;
  /** The spool opened for reading once checked: the records sent are those checked, whatever happens to its name. */
  private checked: OpenedSpool | undefined;

  private constructor(
    private readonly folder: string,
    private readonly settings: SpoolSettings,
    private readonly stopRenewing: () => void,
    private readonly codec: SpoolCodec,
    plainBytes: number,
  ) {
    // Up to four blocks queued, so that the compressor keeps working on the thread pool while the main thread reads the next records.
    this.files = new SpoolFiles(folder, codec, plainBytes, 4 * BLOCK);
    this.written = finished(this.files);
    this.written.catch(() => undefined);
    this.records = new MessageWriter(this.files, (error) => this.failed(error), BLOCK);
  }

  /** A new spool in a private folder of the spool directory, registered for removal if the run is stopped. */
  static async open(settings: SpoolSettings): Promise<Spool> {
    const parent = settings.directory ?? tmpdir();
    const own = await makeFolder(parent);
    settings.removeOnStop.add(own.folder);
    // A pass killed mid-way (SIGKILL) left its spool: this is the run that retries that pass.
    removeDeadSpools(parent, own);
    const codec = settings.codec ?? spoolCodec();
    return new Spool(own.folder, settings, keepLeaseFresh(own.lease, LEASE_TEXT), codec, settings.plainBytes ?? plainHeadLimit(parent, settings.maxBytes));
  }

  /** Bytes on disk so far. */
  get bytes(): number {
    return this.files.bytesWritten;
  }

  /** Whether the pass outgrew the plain head: its rest is compressed. */
  get compressed(): boolean {
    return this.files.sizes.tail !== undefined;
  }

  get pos(): number {
    return this.records.pos;
  }

  reserve(bytes: number): Buffer {
    return this.records.reserve(bytes);
  }

  commit(end: number): void {
    this.records.commit(end);
    this.count++;
  }

  line(text: string): void {
    this.records.line(text);
    this.count++;
  }

  spliced(head: Buffer, source: Buffer, start: number, end: number, tail: Buffer): void {
    this.records.spliced(head, source, start, end, tail);
    this.count++;
  }

  /** Also true once the spool passed its bound: the next drain fails the pass. */
  get full(): boolean {
    if (this.files.bytesWritten > this.settings.maxBytes) this.tooLarge = true;
    return this.tooLarge || this.records.full;
  }

  async drain(): Promise<void> {
    if (this.tooLarge) {
      throw runtimeError(
        `The full pass's spool passed spool_max_mb (${Math.round(this.settings.maxBytes / 1_048_576)} MB on disk, after ${this.count} records): the pass was stopped and nothing was deleted. Raise spool_max_mb, or set spool_directory to a disk with room.`,
      );
    }
    await this.records.drain();
  }

  /** Writes what is queued and closes the file: the spool holds the whole pass. */
  async complete(): Promise<void> {
    await this.records.end();
    this.files.end();
    try {
      await this.written;
    } catch (error) {
      throw this.failed(error as NodeJS.ErrnoException);
    }
    // Its blocks, 5 MiB, would otherwise live on while the pass is sent.
    this.records.release();
  }

  /**
   * Checks the spool before anything of it goes out: it holds the records
   * the pass's reads admitted, and its files on disk are every byte written
   * to them (the writes all succeeded: `complete` failed otherwise). Reading
   * it back costs as much again as writing it; the plain head's CRC-32 and
   * the codec's checksum (gzip's CRC, zstd's content checksum) are checked
   * anyway when the records are sent, and a spool that fails then fails the
   * run, whose state does not record the pass: the next run makes it again.
   */
  async verify(records: number): Promise<void> {
    const written = this.files.sizes;
    this.checked ??= { head: written.head === undefined ? undefined : await this.opened(HEAD_FILE), tail: written.tail === undefined ? undefined : await this.opened(this.codec.file) };
    const head = (await this.checked.head?.stat())?.size;
    const tail = (await this.checked.tail?.stat())?.size;
    if (this.count !== records || head !== written.head || tail !== written.tail) {
      throw runtimeError(
        `The full pass's spool holds ${this.count} records in ${(head ?? 0) + (tail ?? 0)} bytes where ${records} records in ${this.files.bytesWritten} bytes were written: the pass was stopped and nothing was deleted. Check the disk of spool_directory.`,
      );
    }
  }

  /** A spool file for reading; gone, it was taken for a dead run's (this run paused past its lease): the pass fails. */
  private async opened(file: string): Promise<FileHandle> {
    const path = join(this.folder, file);
    try {
      return await open(path, 'r');
    } catch (error) {
      throw runtimeError(
        `The full pass's spool ${path} cannot be read back (${(error as NodeJS.ErrnoException).code ?? 'error'}): the pass was stopped and nothing was deleted. If it is gone, another run took this one for dead: its lease was not renewed for minutes (was the run paused?).`,
        error,
      );
    }
  }

  /**
   * Sends the spooled records, as `verify` checked them, to `out` (stdout's
   * writer), with its backpressure: each decompressed chunk goes out as it
   * is, without a copy; `replayed` counts the records as they go.
   */
  async replay(out: MessageWriter): Promise<void> {
    if (this.checked === undefined) throw new Error('Spool.replay before verify');
    let outFailed: unknown;
    try {
      await readSpool(this.checked, this.codec, this.files.sizes.headCrc, async (chunk, reusable) => {
        const records = lineBreaks(chunk);
        out.pass(chunk, reusable, records);
        this.replayed += records;
        try {
          if (out.full) await out.drain();
        } catch (error) {
          outFailed = error;
          throw error;
        }
      });
    } catch (error) {
      // The compressed tail's pipeline reports stdout's failure as its own abort ("The operation was aborted"): the cause is stdout's.
      throw outFailed ?? error;
    }
  }

  /** Removes the spool and its folder. */
  async discard(): Promise<void> {
    this.stopRenewing();
    this.files.destroy();
    await this.written.catch(() => undefined);
    await this.checked?.head?.close().catch(() => undefined);
    await this.checked?.tail?.close().catch(() => undefined);
    this.checked = undefined;
    await rm(this.folder, { recursive: true, force: true });
    this.settings.removeOnStop.delete(this.folder);
  }

  private failed(error: NodeJS.ErrnoException): TapError {
    const full = error.code === 'ENOSPC' || error.code === 'EDQUOT';
    return runtimeError(
      `Cannot write the full pass's spool in ${this.folder} (${error.code ?? error.message})${full ? ': the disk is full' : ''}; the pass was stopped and nothing was deleted. Set spool_directory to a disk with room${full ? '' : ' that this user can write'}.`,
      error,
    );
  }
}

/** Line breaks in a chunk: one per record. */
function lineBreaks(chunk: Buffer): number {
  let count = 0;
  for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) count++;
  return count;
}

/** The spool's private folder (mkdtemp: 0700) in `parent`, with its lease file. */
async function makeFolder(parent: string): Promise<OwnSpool> {
  let folder: string | undefined;
  try {
    folder = await mkdtemp(spoolFolderPrefix(parent));
    const lease = join(folder, 'lease');
    writePrivateFileSync(lease, LEASE_TEXT);
    return { folder, lease };
  } catch (error) {
    if (folder !== undefined) fs.rmSync(folder, { recursive: true, force: true });
    throw runtimeError(`Cannot make the full pass's spool folder in ${parent} (${(error as NodeJS.ErrnoException).code ?? 'error'}); set spool_directory to a directory this user can write. Nothing was deleted.`, error);
  }
}
