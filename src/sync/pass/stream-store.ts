import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fingerprint } from '../plan/plan.js';
import { ChangedRows } from './changed-rows.js';
import { DeleteRecords } from './delete-records.js';
import { RowIdentity } from '../../records/row-identity.js';
import { SentRows } from '../../store/sent-rows.js';
import { Pseudonymiser } from '../../records/pseudonymise.js';
import { storeRoot, type StoreEnvironment } from '../../store/store-directory.js';
import type { ChangeStore } from '../../store/change-store.js';
import type { Logger } from '../../observe/log.js';
import type { NextGeneration } from '../../store/next-generation.js';
import type { StoreUse, StoreView } from '../plan/read-plans.js';
import type { RecordSink } from '../../output/record-sink.js';
import type { Envelope } from '../read/decoders.js';
import type { SelectedStream } from '../../catalog/selection.js';
import type { Config } from '../../config/config.js';
import type { StoreRecord } from '../../state.js';
import type { OutputProtocol } from '../../output/protocol.js';

/**
 * One stream's use of the change store (store/) in one run: the generation
 * its incoming state names, read as what the target holds, or why it cannot
 * be trusted; the sink that sends only what changed and notes what was sent;
 * the delete records of a change pass; the generation this run writes. The
 * store is for incremental streams: a FULL_TABLE run sends every row.
 */
export class StreamStore {
  private sink: ChangedRows | undefined;
  /** The generation this run's state names, once committed. */
  private written: string | undefined;

  private constructor(
    private readonly store: ChangeStore,
    private readonly selected: SelectedStream,
    /** The incoming state's record: the generation it names, and where it lives. */
    private readonly confirmed: StoreRecord | undefined,
    /** What the target holds (empty when the generation cannot be trusted). */
    private confirmedRows: SentRows,
    private next: NextGeneration,
    readonly view: NonNullable<StoreView>,
    /** A member of every record left out of its content (OutputProtocol.recordMember). */
    private readonly excluded: string | undefined,
    /** Whether the reader keeps the last of a key's records sent in one run (OutputProtocol.lastRecordWins). */
    private readonly lastRecordWins: boolean,
  ) {}

  static async open(store: ChangeStore, selected: SelectedStream, confirmed: StoreRecord | undefined, config: Config, protocol: OutputProtocol): Promise<StreamStore> {
    const print = storeFingerprint(selected, config, protocol.deletionMember);
    const opened = await store.stream(selected.descriptor.name, confirmed, print);
    const view: NonNullable<StoreView> = 'sent' in opened ? { trusted: true } : { trusted: false, why: opened.untrusted };
    return new StreamStore(store, selected, confirmed, 'sent' in opened ? opened.sent : SentRows.empty(), opened.next, view, protocol.recordMember, protocol.lastRecordWins);
  }

  /** Rows the target holds, by the confirmed generation. */
  get held(): number {
    return this.confirmedRows.rows;
  }

  /** Records the target held as they were, not sent (by the current sink). */
  get unchanged(): number {
    return this.sink?.unchanged ?? 0;
  }

  /** Records that went on to the output (by the current sink). */
  get sent(): number {
    return this.sink?.sent ?? 0;
  }

  /** Whether rows read wait for the end of the reads before they may go out (keys that repeat: changed-rows.ts). */
  get holding(): boolean {
    return this.sink?.holding ?? false;
  }

  /** The reads are done: the held rows of keys that repeat go out where they changed (changed-rows.ts). */
  async finishReads(): Promise<void> {
    await this.sink?.finish();
  }

  /** The output's records through the store: `changes`, only what changed goes on; `all`, every record does. Every record sent is noted. */
  records(output: RecordSink, use: StoreUse): ChangedRows {
    const keys = this.selected.keyProperties;
    const identity = new RowIdentity(keys, this.excluded);
    this.sink = new ChangedRows(output, identity, this.confirmedRows, this.next, use === 'changes');
    return this.sink;
  }

  /** The envelope of a read that starts now. */
  envelope(envelope: Envelope): void {
    this.sink?.read(envelope);
  }

  /** A pass read again (its earlier attempt held, never sent): nothing of that attempt is noted, and no key counts as seen. */
  async again(): Promise<void> {
    const opened = await this.store.again(this.selected.descriptor.name, this.confirmed);
    this.next = opened.next;
    this.confirmedRows = 'sent' in opened ? opened.sent : SentRows.empty();
  }

  /**
   * The delete records of a change pass: one for each row the target holds
   * that no read of the pass saw, through `write` (with `drain` when `full`).
   * Returns how many.
   */
  async deletes(records: DeleteRecords, deletedAt: string, out: { line(json: string): void; readonly full: boolean; drain(): Promise<void> }): Promise<number> {
    let count = 0;
    for await (const key of this.confirmedRows.unseen()) {
      out.line(records.json(key, deletedAt));
      count++;
      if (out.full) await out.drain();
    }
    return count;
  }

  /**
   * Writes the generation this run leaves: what the target holds once it
   * confirms this run's state. `drop`: rows the run did not see are gone (a
   * pass that deleted them). A run that sent nothing and deleted nothing
   * leaves the target as it was: its state names the confirmed generation
   * again, and no file is written (an hourly run of an unchanged dump costs
   * no disk), unless that file is of an older format, or was built on none:
   * its pipeline's second run always builds on it, so that only the first
   * generations of runs without a state are lone roots, which a folder keeps
   * a few of (retention.ts). Keys the dump gave more than once get one
   * warning.
   */
  async commit(drop: boolean, logger: Logger): Promise<StoreRecord> {
    const held = this.confirmedRows;
    const unchanged = this.view.trusted && this.confirmed !== undefined && this.next.sentCount === 0 && (!drop || held.seen === held.rows) && !held.outdated && !held.root;
    if (unchanged) {
      await this.next.discard();
      this.warnRepeats(held.seenAgain, logger);
      this.written = this.confirmed!.generation;
      // Where it lives, as it came: the state's copy (data) or the bucket's.
      return { ...this.confirmed!, rows: held.rows };
    }
    const rows = await this.next.commit(held, drop, !this.lastRecordWins);
    this.warnRepeats(this.next.repeated, logger);
    this.written = this.next.generation;
    return this.store.keep(this.selected.descriptor.name, { generation: this.next.generation, rows });
  }

  private warnRepeats(keys: number, logger: Logger): void {
    if (keys === 0) return;
    const name = this.selected.descriptor.name;
    logger.warn(`${name}: ${keys} key(s) came more than once in the dump (key properties ${this.selected.keyProperties.join(', ')}); the target keeps the last row of each, and so does the change store`);
  }

  /** After the state that names this run's generation went out: the generations of this pipeline no state can name go (other pipelines' stay). */
  async tidy(): Promise<void> {
    try {
      await this.store.keepOnly(this.selected.descriptor.name, this.confirmed?.generation, this.written ?? this.next.generation);
    } finally {
      this.store.done(this.selected.descriptor.name);
    }
  }

}

/**
 * What a generation's rows depend on besides the rows themselves: the
 * stream, its key, the fields it emits and their names, the personal-data
 * policies and the pseudonymisation key (by a keyed digest, never itself),
 * the face (Singer or Airbyte, by its deletion member). A store written
 * under another is not trusted.
 */
function storeFingerprint(selected: SelectedStream, config: Config, face: string): string {
  const key = config.pseudonymisation_key === undefined ? null : new Pseudonymiser(config.pseudonymisation_key).keyId();
  return fingerprint({
    stream: selected.descriptor.name,
    keys: selected.keyProperties,
    fields: Object.keys(selected.schema.properties ?? {}),
    personal: selected.personal === undefined ? null : Object.fromEntries(selected.personal),
    key,
    face,
  });
}

/**
 * The change store of a run, with send_changes_only: opened in
 * store_directory or the XDG state folder (each stream's lock is taken when
 * the stream starts: store/change-store.ts). A store that cannot be made or
 * written (a read-only home, a full disk) is a warning, and the run goes on
 * without one, as before the store.
 */
export async function openRunStore(config: Config, logger: Logger, env: StoreEnvironment = process.env): Promise<ChangeStore | undefined> {
  if (!config.send_changes_only) return undefined;
  const root = storeRoot(config.store_directory, env);
  const { ChangeStore } = await import('../../store/change-store.js');
  const { retentionDays } = await import('../../store/retention.js');
  const options = { baseUrl: config.base_url, logger, retentionDays: retentionDays(config), stateMaxBytes: config.state_store_max_kb * 1024, storeUrl: config.store_url };
  const store = typeof root === 'string' ? await ChangeStore.open({ root, ...options }) : root;
  if (!('unwritable' in store)) return store;
  // Generations that live in the state or a bucket need a folder only while the run works: the temporary one will do.
  if (options.stateMaxBytes > 0 || options.storeUrl !== undefined) {
    const scratch = await ChangeStore.open({ root: join(tmpdir(), `tap-report-dump-${process.getuid?.() ?? 'user'}`), ...options });
    if (!('unwritable' in scratch)) {
      logger.info(`${store.unwritable} The change store works in ${scratch.folder} instead, keeping generations in the state${options.storeUrl === undefined ? '' : ` or in ${options.storeUrl}`}.`);
      return scratch;
    }
  }
  logger.warn(`${store.unwritable} This run sends every row it reads, and leavers wait for the full pass.`);
  return undefined;
}
