import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fs } from '../builtins.js';
import { runtimeError, TapError } from '../errors.js';
import { makePrivateFolder } from '../output/private-files.js';
import type { Logger } from '../observe/log.js';
import { generationFileName, type GenerationOrigin, isGenerationId, readGenerationHeader } from './generation-file.js';
import { retentionDays, type ShelvedGeneration, unneeded } from './retention.js';
import { NextGeneration } from './next-generation.js';
import { SentRows } from './sent-rows.js';
import { streamFolder, tenantFolder } from './store-directory.js';
import { type LockOptions, StoreLock } from './store-lock.js';

/**
 * The change store as a run uses it: what the target holds, per stream, in
 * generations, tied to the state the target confirmed. A run opens the
 * tenant's store, asks per stream (taking the stream's lock: one run of a
 * stream at a time, runs of other streams beside it) for the generation its
 * incoming state names (or why it cannot trust it) and for the generation it
 * writes, and in the end keeps only the generations a state can still name.
 * Every stream of a run writes the generation of the same id.
 */

/** Files the store makes in a stream folder: generations, complete or being written, and the rows a run sent. */
const STORE_FILE = /^(\d{8}T\d{6}Z-[0-9a-f]{8})\.gen(\.partial|\.sent-hashes\.partial|\.sent-keys\.partial)?$/;

export interface ChangeStoreOptions {
  /** The store's root folder (store-directory.ts storeRoot). */
  root: string;
  /** The config's base_url: the tenant. */
  baseUrl: string;
  logger: Logger;
  /** How a run waits for another holding a stream's lock (store-lock.ts); tests wait less. */
  lockWait?: Omit<LockOptions, 'what'>;
  /** Days a generation no run used is kept (retention.ts); by default, that of the default pass intervals. */
  retentionDays?: number;
}

/** The pass intervals' defaults, for a store opened without them. */
const DEFAULT_INTERVALS = { full_pass_interval_days: 30, change_pass_interval_days: 1 };

export type StreamStore = { sent: SentRows; next: NextGeneration } | { untrusted: string; next: NextGeneration };

/** A stream this run asked for: its fingerprint, its lock, once taken, and the generation it writes, once started. */
interface OpenedStream {
  fingerprint: string;
  lock?: StoreLock;
  next?: NextGeneration;
}

export class ChangeStore {
  /** The streams this run asked for, by name. */
  private readonly opened = new Map<string, OpenedStream>();

  private constructor(
    /** The tenant's folder. */
    readonly folder: string,
    /** The generation this run writes, for every stream. */
    readonly generation: string,
    private readonly options: ChangeStoreOptions,
  ) {}

  /**
   * Opens the tenant's store: makes its folder. A root this user cannot make
   * or write (a read-only home, a full disk): the reason, one sentence, and the
   * run goes on as without a store. Locks are taken per stream (`stream`).
   */
  static async open(options: ChangeStoreOptions): Promise<ChangeStore | { unwritable: string }> {
    const folder = tenantFolder(options.root, options.baseUrl);
    try {
      makePrivateFolder(folder);
      fs.accessSync(folder, fs.constants.W_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      return { unwritable: `The change store's folder ${folder} cannot be made or written (${code}); set store_directory to a folder this user can write, with room.` };
    }
    return new ChangeStore(folder, newGenerationId(new Date()), options);
  }

  /**
   * Takes the stream's lock (waiting while another run of the stream holds
   * it: store-lock.ts), then gives the stream's confirmed rows, from the
   * generation the incoming state names (`confirmed`), or why the run cannot
   * trust them; and the generation this run writes.
   */
  async stream(name: string, confirmed: string | undefined, fingerprint: string): Promise<StreamStore> {
    if (this.opened.has(name)) throw new Error(`The change store was asked twice for stream ${name} in one run.`);
    const opened: OpenedStream = { fingerprint };
    this.opened.set(name, opened);
    opened.lock = await lockStream(streamFolder(this.folder, name), name, this.generation, this.options);
    return this.begin(name, opened, confirmed);
  }

  /**
   * The stream again, from its confirmed generation, its lock kept: a pass
   * read again after an attempt that was never sent (its rows noted, its keys
   * seen) starts a fresh generation.
   */
  async again(name: string, confirmed: string | undefined): Promise<StreamStore> {
    const opened = this.opened.get(name);
    if (opened?.lock === undefined) throw new Error(`The change store was asked to start stream ${name} again, which this run has not opened.`);
    await opened.next?.discard();
    return this.begin(name, opened, confirmed);
  }

  /** The stream is done (its state went out, its generations tidied): its lock goes now, so a run holds one stream's lock at a time. */
  done(name: string): void {
    const opened = this.opened.get(name);
    opened?.lock?.release();
    if (opened !== undefined) opened.lock = undefined;
  }

  private async begin(name: string, opened: OpenedStream, confirmed: string | undefined): Promise<StreamStore> {
    const folder = streamFolder(this.folder, name);
    const held = await confirmedRows(folder, name, confirmed, opened.fingerprint);
    const next = await nextGeneration(folder, this.generation, { stream: name, fingerprint: opened.fingerprint, parent: 'sent' in held ? held.generation : null });
    opened.next = next;
    return 'sent' in held ? { sent: held.sent, next } : { untrusted: held.untrusted, next };
  }

  /**
   * Once the state naming `written` went out: removes the stream's
   * generations that no state of this pipeline can name any more (lineage.ts:
   * the ancestors of `incoming`, the generation the incoming state named, and
   * the branches from it or them), and what dead runs left half-written.
   * Generations of other chains (other pipelines', runs' without a state)
   * stay but by retention.ts: those no run used for the retention time, and
   * lone roots of this config beyond the last few. `incoming` and `written`, and this
   * run's own generation, are never removed here; `incoming` named again is
   * marked used.
   */
  async keepOnly(stream: string, incoming: string | undefined, written: string): Promise<void> {
    const opened = this.opened.get(stream);
    if (opened?.next === undefined) throw new Error(`The change store was asked to tidy stream ${stream}, which this run has not opened.`);
    const folder = streamFolder(this.folder, stream);
    let names: string[];
    try {
      names = fs.readdirSync(folder);
    } catch {
      return;
    }
    if (written === incoming) markUsed(folder, written);
    const shelved: ShelvedGeneration[] = [];
    for (const name of names) {
      const [, generation, partial] = STORE_FILE.exec(name) ?? [];
      if (generation === undefined || generation === this.generation) continue;
      // The stream's lock is this run's: what another run left half-written, that run left dying.
      if (partial !== undefined) await remove(folder, name);
      else shelved.push(shelvedFile(folder, generation));
    }
    const run = { own: { stream, fingerprint: opened.fingerprint }, incoming, written, now: Date.now(), retentionDays: this.options.retentionDays ?? retentionDays(DEFAULT_INTERVALS) };
    for (const generation of unneeded(shelved, run)) await remove(folder, generationFileName(generation));
  }

  /** Discards the generations not committed, then releases the streams' locks. */
  async close(): Promise<void> {
    try {
      for (const { next } of this.opened.values()) await next?.discard();
    } finally {
      this.releaseLocks();
    }
  }

  /**
   * Releases the streams' locks, at once (a stop by signal, as the process
   * ends): the generations not committed stay, for the next run to remove
   * as those of a run that died.
   */
  releaseLocks(): void {
    for (const opened of this.opened.values()) {
      opened.lock?.release();
      opened.lock = undefined;
    }
  }
}

/** A generation file of the stream's folder: when a run last used it (its time), and its header. */
function shelvedFile(folder: string, generation: string): ShelvedGeneration {
  const path = join(folder, generationFileName(generation));
  try {
    return { generation, usedMs: fs.statSync(path).mtimeMs, header: readGenerationHeader(path) };
  } catch {
    // Gone meanwhile: nothing to judge it by, and nothing to remove.
    return { generation, usedMs: Date.now(), header: undefined };
  }
}

/** Marks a generation as used now (its file's time): a run named it again without writing a new one. */
function markUsed(folder: string, generation: string): void {
  const now = new Date();
  try {
    fs.utimesSync(join(folder, generationFileName(generation)), now, now);
  } catch {
    // Best effort: a generation whose time cannot be set is judged by its older one.
  }
}

/** One that cannot be removed now is tried again by the next run. */
async function remove(folder: string, name: string): Promise<void> {
  await rm(join(folder, name), { force: true }).catch(() => undefined);
}

/** The stream's folder, made, and its lock, taken; a disk that refuses (full, read-only) fails the run, before its state names a generation, in one line naming the stream. */
async function lockStream(folder: string, stream: string, run: string, options: ChangeStoreOptions): Promise<StoreLock> {
  try {
    makePrivateFolder(folder);
  } catch (error) {
    throw storeRefused(`start the next generation of stream ${stream}`, folder, error);
  }
  try {
    return await StoreLock.take(folder, run, options.logger, { what: `stream ${stream}`, ...options.lockWait });
  } catch (error) {
    if (error instanceof TapError) throw error;
    throw storeRefused(`take the lock of stream ${stream}`, folder, error);
  }
}

/** The rows of the generation the incoming state names, or why the run cannot trust them. */
async function confirmedRows(folder: string, stream: string, confirmed: string | undefined, fingerprint: string): Promise<{ sent: SentRows; generation: string } | { untrusted: string }> {
  if (confirmed === undefined) return { untrusted: `The state names no change store generation for stream ${stream} (a first run, a state from a version without the store, or a run since that sent rows without it).` };
  if (!isGenerationId(confirmed)) return { untrusted: `The state names a change store generation for stream ${stream} that is not one this tap makes.` };
  const sent = await SentRows.load(join(folder, generationFileName(confirmed)), { stream, fingerprint });
  return 'untrusted' in sent ? sent : { sent, generation: confirmed };
}

/** The generation the run writes in the stream's folder; a disk that refuses (full, read-only) fails the run before its state names a generation. */
async function nextGeneration(folder: string, generation: string, header: GenerationOrigin): Promise<NextGeneration> {
  try {
    return await NextGeneration.create(folder, generation, header);
  } catch (error) {
    throw storeRefused(`start the next generation of stream ${header.stream}`, folder, error);
  }
}

function storeRefused(what: string, folder: string, error: unknown): TapError {
  const code = (error as NodeJS.ErrnoException).code ?? 'error';
  return runtimeError(`The change store could not ${what} in ${folder} (${code}); free space there, or set store_directory to a folder this user can write, with room.`, error);
}

/** Sorts by time, in UTC; the random part keeps two runs in one second apart (as batch-run.ts's run ids). */
export function newGenerationId(now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${randomUUID().slice(0, 8)}`;
}
