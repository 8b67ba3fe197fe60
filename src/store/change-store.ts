import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fs } from '../builtins.js';
import { runtimeError, TapError } from '../errors.js';
import { makePrivateFolder } from '../output/private-files.js';
import type { Logger } from '../observe/log.js';
import { generationFileName, type GenerationOrigin, GenerationRefused, isGenerationId, readGenerationHeader } from './generation-file.js';
import type { Bucket } from './bucket.js';
import { openBucket } from './open-bucket.js';
import { BucketHome, type GenerationHome, goneFromFolder, mayFitState, StateHome } from './homes.js';
import type { StoreRecord } from '../state.js';
import { retentionDays, type ShelvedGeneration, type TidyRun, unneeded } from './retention.js';
import { NextGeneration } from './next-generation.js';
import { SentRows } from './sent-rows.js';
import { streamFolder, tenantFolder, tenantName } from './store-directory.js';
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
  /** The most bytes a stream's generation may take in the state (state_store_max_kb); 0 or absent: none goes there. */
  stateMaxBytes?: number;
  /** store_url: the bucket for generations too large for the state. */
  storeUrl?: string;
  /** Where the providers' SDKs read their settings (the process's environment). */
  env?: NodeJS.ProcessEnv;
}

/** The pass intervals' defaults, for a store opened without them. */
const DEFAULT_INTERVALS = { full_pass_interval_days: 30, change_pass_interval_days: 1 };

export type StreamStore = { sent: SentRows; next: NextGeneration } | { untrusted: string; next: NextGeneration };

/** A stream this run asked for: its fingerprint, its lock, once taken, the generation it writes, once started, and where the incoming and the written generations live. */
interface OpenedStream {
  fingerprint: string;
  lock?: StoreLock;
  next?: NextGeneration;
  incoming?: GenerationHome;
  written?: GenerationHome;
  /** Headers of the confirmed generation and the one this run writes, wherever they live (retention.ts TidyRun.known). */
  readonly known: Map<string, GenerationOrigin>;
}

export class ChangeStore {
  /** The streams this run asked for, by name. */
  private readonly opened = new Map<string, OpenedStream>();
  private readonly state = new StateHome();
  /** Buckets opened, by store_url: a run opens each once. */
  private readonly buckets = new Map<string, Promise<Bucket>>();

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
  async stream(name: string, confirmed: StoreRecord | undefined, fingerprint: string): Promise<StreamStore> {
    if (this.opened.has(name)) throw new Error(`The change store was asked twice for stream ${name} in one run.`);
    const opened: OpenedStream = { fingerprint, known: new Map() };
    this.opened.set(name, opened);
    opened.lock = await lockStream(streamFolder(this.folder, name), name, this.generation, this.options);
    return this.begin(name, opened, confirmed);
  }

  /**
   * The stream again, from its confirmed generation, its lock kept: a pass
   * read again after an attempt that was never sent (its rows noted, its keys
   * seen) starts a fresh generation.
   */
  async again(name: string, confirmed: StoreRecord | undefined): Promise<StreamStore> {
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

  private async begin(name: string, opened: OpenedStream, confirmed: StoreRecord | undefined): Promise<StreamStore> {
    const folder = streamFolder(this.folder, name);
    const fetched = await this.fetched(name, opened, confirmed);
    const held = fetched ?? (await confirmedRows(folder, name, confirmed?.generation, opened.fingerprint));
    // A folder generation that is gone: say how to keep it where every run finds it.
    if ('untrusted' in held && fetched === undefined && opened.incoming === undefined && /^The change store holds no generation /.test(held.untrusted)) {
      held.untrusted += goneFromFolder(confirmed?.rows, this.options.stateMaxBytes ?? 0);
    }
    const next = await nextGeneration(folder, this.generation, { stream: name, fingerprint: opened.fingerprint, parent: 'sent' in held ? held.generation : null });
    opened.next = next;
    opened.known.clear();
    if ('sent' in held) opened.known.set(held.generation, { stream: name, fingerprint: opened.fingerprint, parent: held.sent.parent });
    opened.known.set(next.generation, next.origin);
    return 'sent' in held ? { sent: held.sent, next } : { untrusted: held.untrusted, next };
  }

  /**
   * The confirmed generation made a file of the stream's folder, fetched from
   * where the incoming state says it lives (homes.ts); undefined when it is
   * there, or why the run cannot trust it. A home that refuses (a bucket the
   * credentials cannot read) fails the run.
   */
  private async fetched(name: string, opened: OpenedStream, confirmed: StoreRecord | undefined): Promise<{ untrusted: string } | undefined> {
    if (confirmed === undefined || !isGenerationId(confirmed.generation)) return undefined;
    const home = typeof confirmed.data === 'string' ? this.state : typeof confirmed.url === 'string' ? await this.bucketHome(confirmed.url, name) : undefined;
    opened.incoming = home;
    if (home === undefined) return undefined;
    try {
      await home.fetch(confirmed, join(streamFolder(this.folder, name), generationFileName(confirmed.generation)), name);
      return undefined;
    } catch (error) {
      if (error instanceof GenerationRefused) return { untrusted: error.message };
      throw error;
    }
  }

  private async bucketHome(url: string, stream: string): Promise<BucketHome> {
    let bucket = this.buckets.get(url);
    if (bucket === undefined) this.buckets.set(url, (bucket = openBucket(url, this.options.env)));
    return new BucketHome(await bucket, `${tenantName(this.options.baseUrl)}/${basename(streamFolder('', stream))}/`);
  }

  /**
   * Keeps the generation this run wrote for the stream (`record`), where it
   * goes: in the state when it fits stateMaxBytes, else in the bucket of
   * store_url, else in the folder. What the state records of it.
   */
  async keep(stream: string, record: StoreRecord): Promise<StoreRecord> {
    const kept = await this.kept(stream, record);
    // Both members always written, the unused one null: a merged state never keeps a stale one (StoreRecord).
    return { generation: kept.generation, rows: kept.rows, data: kept.data ?? null, url: kept.url ?? null };
  }

  private async kept(stream: string, record: StoreRecord): Promise<StoreRecord> {
    const opened = this.opened.get(stream);
    const next = opened?.next;
    if (opened === undefined || next === undefined) throw new Error(`The change store was asked to keep stream ${stream}, which this run has not opened.`);
    const maxBytes = this.options.stateMaxBytes ?? 0;
    if (mayFitState(record.rows ?? 0, maxBytes)) {
      const inState = await this.state.keep(next.path, record, next.origin);
      if ((inState.data?.length ?? 0) <= maxBytes) {
        opened.written = this.state;
        return inState;
      }
    }
    const url = this.options.storeUrl;
    opened.written = url === undefined ? undefined : await this.bucketHome(url, stream);
    return opened.written === undefined ? { generation: record.generation, rows: record.rows } : opened.written.keep(next.path, record, next.origin);
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
    const run = { own: { stream, fingerprint: opened.fingerprint }, incoming, written, now: Date.now(), retentionDays: this.options.retentionDays ?? retentionDays(DEFAULT_INTERVALS), known: opened.known };
    for (const generation of unneeded(shelved, run)) await remove(folder, generationFileName(generation));
    // A generation that lives in the state or a bucket is not kept in the folder too: the people's keys stay where they live.
    if (incoming !== undefined && opened.incoming !== undefined && incoming !== written) await remove(folder, generationFileName(incoming));
    if (opened.written !== undefined || (incoming === written && opened.incoming !== undefined)) await remove(folder, generationFileName(written));
    if (this.options.storeUrl !== undefined) await this.tidyBucket(stream, run);
  }

  /** The bucket's generations of the stream no state can name any more go; a bucket that refuses now is a warning (the state went out: the next run tidies). */
  private async tidyBucket(stream: string, run: TidyRun): Promise<void> {
    try {
      await (await this.bucketHome(this.options.storeUrl!, stream)).tidy(run);
    } catch (error) {
      // The state went out: a tidy that fails never fails the run, whatever failed (the next run tries again).
      const said = error instanceof TapError ? error.message.replace(/ Nothing was sent as this run's state\.$/, '') : `an unexpected ${error instanceof Error ? error.name : 'error'} (its message not shown: a provider's may quote a credential)`;
      this.options.logger.warn(`${stream}: ${said} (while removing generations no state names; the next run tries again)`);
    }
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
