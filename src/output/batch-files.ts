import { rename, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pipeline } from 'node:stream/promises';
import { finished, type Writable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { fs } from '../builtins.js';
import { runtimeError, type TapError } from '../errors.js';
import { MessageWriter } from './writer.js';
import type { RecordSink } from './record-sink.js';
import type { BatchSettings } from '../config/batch.js';
import { openPrivateFileSync } from './private-files.js';

/**
 * zlib compresses on libuv's thread pool, off the main thread; a queue of a
 * few 256 KiB blocks lets the tap decode the next records meanwhile. Level 3
 * measured faster than levels 1 and 6 on dump records (7.7 % of the size
 * against 6.2 % at level 6): batch files are a short-lived hand-over.
 */
const GZIP_OPTIONS = { level: 3, highWaterMark: 1024 * 1024 };

/** One batch file: written under a temporary name, renamed once complete. */
class BatchFile {
  readonly records: MessageWriter;
  count = 0;
  private readonly partial: string;
  private readonly head: Writable;
  private readonly written: Promise<void>;
  private readonly closed: Promise<void>;

  constructor(
    readonly path: string,
    compression: BatchSettings['compression'],
    private readonly unannounced: Set<string>,
  ) {
    this.partial = `${path}.partial`;
    let fd: number;
    try {
      // Never overwrites a name that exists, not even a partial file of another run. Opened here, not on the
      // thread pool: a stop (SIGTERM) removes the unannounced files at once, and one opened after it would stay.
      fd = openPrivateFileSync(this.partial);
    } catch (error) {
      throw this.failed(error as NodeJS.ErrnoException);
    }
    unannounced.add(this.partial);
    const file = fs.createWriteStream(this.partial, { fd });
    this.closed = new Promise<void>((resolve) => file.once('close', () => resolve()));
    if (compression === 'gzip') {
      const gzip = createGzip(GZIP_OPTIONS);
      this.head = gzip;
      this.written = pipeline(gzip, file);
    } else {
      this.head = file;
      this.written = new Promise((resolve, reject) => finished(file, (error) => (error ? reject(error) : resolve())));
    }
    // Awaited in complete(); a failure also reaches the writer as an error event.
    this.written.catch(() => undefined);
    this.records = new MessageWriter(this.head, (error) => this.failed(error));
  }

  /** Writes what is queued, closes the file and gives it its final name. */
  async complete(): Promise<void> {
    await this.records.end();
    this.head.end();
    await this.records.drain();
    // The final name is unannounced before the rename starts: a stop while the rename is under way finds the file under one name or the other.
    this.unannounced.add(this.path);
    try {
      await this.written;
      await rename(this.partial, this.path);
      this.unannounced.delete(this.partial);
    } catch (error) {
      this.unannounced.delete(this.path);
      throw this.failed(error as NodeJS.ErrnoException);
    }
  }

  private failed(error: NodeJS.ErrnoException): TapError {
    return runtimeError(`Cannot write batch file ${this.partial} (${error.code ?? error.message}); check the space and permissions of batch_config.storage.root.`, error);
  }

  /** Stops writing and removes the partial file. */
  async discard(): Promise<void> {
    this.head.destroy();
    await this.written.catch(() => undefined);
    await this.closed;
    await rm(this.partial, { force: true });
    this.unannounced.delete(this.partial);
  }
}

/**
 * Records into batch files of at most `batchSize` records each. A full file is
 * completed in the background while the next one fills; `announce` gets each
 * completed file's URL, in order, once it has its final name. Files are named
 * `<prefix><stream>-<run>-<n>.jsonl[.gz]`, the run part unique to the run.
 */
export class BatchFiles implements RecordSink {
  private current: BatchFile | undefined;
  private sequence = 0;
  /** Completions in file order. */
  private completions: Promise<void> = Promise.resolve();
  /** Full files not yet completed: one may complete while the next fills; with more, the run waits. */
  private readonly pending = new Set<BatchFile>();
  private aborted = false;
  /** Completed files not announced yet, with `hold`: a full pass announces its files once all of it is known good. */
  private readonly held: Array<{ path: string; records: number }> = [];
  /** Files whose BATCH message stdout did not take (its reader closed): no target knows them, `abort` removes them. */
  private readonly unsent: string[] = [];
  files = 0;

  /**
   * `announce` gets each completed file's URL, name and record count (with
   * `hold`, only when `release` is called), one file at a time: the next
   * once it has settled; it returns (or resolves) false when its message did
   * not go out; `unannounced`: the run's files not announced (under their
   * temporary names, or held back), for removal if the run is stopped.
   */
  constructor(
    private readonly settings: BatchSettings,
    private readonly stream: string,
    private readonly runId: string,
    private readonly announce: (url: string, name: string, records: number) => unknown,
    private readonly unannounced = new Set<string>(),
    private readonly hold = false,
  ) {}

  /** Records the files hold. */
  records = 0;

  get pos(): number {
    return this.file().records.pos;
  }

  reserve(bytes: number): Buffer {
    return this.file().records.reserve(bytes);
  }

  commit(end: number): void {
    this.file().records.commit(end);
    this.counted();
  }

  line(text: string): void {
    this.file().records.line(text);
    this.counted();
  }

  spliced(head: Buffer, source: Buffer, start: number, end: number, tail: Buffer): void {
    this.file().records.spliced(head, source, start, end, tail);
    this.counted();
  }

  get full(): boolean {
    return this.pending.size > 1 || (this.current?.records.full ?? false);
  }

  async drain(): Promise<void> {
    await this.current?.records.drain();
    if (this.pending.size > 1) await this.completions;
  }

  /** Completes the last file (an empty one is removed) and waits until every file is announced, or, with `hold`, complete and still there. */
  async finish(): Promise<void> {
    const last = this.current;
    this.current = undefined;
    if (last !== undefined && last.count > 0) this.queueCompletion(last);
    else if (last !== undefined) await last.discard();
    await this.completions;
    this.checkHeld();
  }

  /**
   * A held file gone was taken for a dead run's by another run (this one's
   * lease was not renewed for minutes: paused?); announced after
   * ACTIVATE_VERSION, it would have the target delete rows it never loads.
   */
  private checkHeld(): void {
    const gone = this.held.find(({ path }) => !fs.existsSync(path))?.path;
    if (gone !== undefined) {
      throw runtimeError(`Batch file ${gone} of the held full pass is gone: another run took this one for dead, its lease not renewed for minutes (was the run paused?). The pass was stopped and nothing was deleted.`);
    }
  }

  /** Announces the files held back, in order; call after `finish`. */
  async release(): Promise<void> {
    // Each stays held until its turn: a failure meanwhile leaves the rest to `abort`.
    for (let file = this.held.shift(); file !== undefined; file = this.held.shift()) await this.announced(file.path, file.records);
  }

  /** After a failure: the file being written and files not yet completed are removed, and so are files held back; announced files stay. */
  async abort(): Promise<void> {
    this.aborted = true;
    const last = this.current;
    this.current = undefined;
    await last?.discard();
    await this.completions.catch(() => undefined);
    // A failed completion stops the chain: the files after it were never completed.
    await Promise.all([...this.pending].map((file) => file.discard()));
    this.pending.clear();
    // Never announced: no target knows them.
    for (const path of [...this.held.splice(0).map((file) => file.path), ...this.unsent.splice(0)]) {
      await rm(path, { force: true });
      this.unannounced.delete(path);
    }
  }

  private file(): BatchFile {
    this.current ??= this.open();
    return this.current;
  }

  private open(): BatchFile {
    this.sequence++;
    const { directory, prefix, compression } = this.settings;
    const name = `${prefix}${this.stream}-${this.runId}-${this.sequence}.jsonl${compression === 'gzip' ? '.gz' : ''}`;
    return new BatchFile(join(directory, name), compression, this.unannounced);
  }

  private counted(): void {
    const file = this.current!;
    this.records++;
    if (++file.count < this.settings.batchSize) return;
    this.current = undefined;
    this.queueCompletion(file);
  }

  /**
   * The file stays unannounced (a stop removes it) until stdout took its
   * BATCH line: the wait for a full pipe may be long, and a file no line
   * names must never outlive the run.
   */
  private async announced(path: string, records: number): Promise<void> {
    this.unannounced.add(path);
    let sent = false;
    try {
      sent = (await this.announce(pathToFileURL(path).href, basename(path), records)) !== false;
    } finally {
      if (sent) this.unannounced.delete(path);
      else this.unsent.push(path);
    }
  }

  private queueCompletion(file: BatchFile): void {
    this.pending.add(file);
    this.completions = this.completions.then(async () => {
      if (this.aborted) return;
      await file.complete();
      this.pending.delete(file);
      this.files++;
      if (!this.hold) return this.announced(file.path, file.count);
      // Held files are as unannounced as partial ones: a stopped run removes them.
      this.unannounced.add(file.path);
      this.held.push({ path: file.path, records: file.count });
    });
    this.completions.catch(() => undefined);
  }
}
