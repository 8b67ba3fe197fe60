import type { FilterPredicate } from './filters.js';
import type { RawRecord, RawValue, StreamModel } from './model.js';
import { hashInts } from './prng.js';
import { UNMOVED, type Placement } from './placement.js';

/** Rows [start, start + count) were appended together at `instant`, of the model's `kind` (what the rows are: new completions, or a joiner's open assignments …). */
interface AppendBatch {
  readonly start: number;
  readonly count: number;
  readonly instant: number;
  readonly kind?: string;
}

/**
 * An immutable view of a dataset. A response reads one snapshot from start to
 * end, so its body matches its Last-Modified even if data change meanwhile.
 */
export interface Snapshot {
  readonly version: number;
  readonly count: number;
  readonly batches: readonly AppendBatch[];
  readonly overrides: ReadonlyMap<number, Partial<RawRecord>>;
  /** Users who left: every row of theirs is gone from the dumps. */
  readonly deletedUsers: ReadonlySet<string>;
  /** Rows of those users, for the live count. */
  readonly deletedRows: number;
  /** Epoch milliseconds, whole seconds. */
  readonly lastModified: number;
}

/** The field that names a row's user: the one leavers are deleted by. */
export const USER_FIELD = 'userId';

/** Picks the change of one candidate row, or null to pass it by. */
export type RowChange = (record: RawRecord, index: number, position: number, instant: number) => Partial<RawRecord> | null;

/** What append or update changed. */
export interface ChangeResult {
  readonly stream: string;
  /** Number of rows appended or updated. */
  readonly changed: number;
  /** Key values of the changed rows (at most KEY_LIST_LIMIT entries). */
  readonly keys: Record<string, string>[];
  readonly keysTruncated: boolean;
  /** The instant the change was written at (replication-key values lie at or after it). */
  readonly instant: string;
  readonly lastModified: Date;
  readonly records: number;
}

export const KEY_LIST_LIMIT = 10_000;

/** Filter predicates split by how much of a record they need. */
export interface RecordFilter {
  readonly identity: readonly FilterPredicate[];
  readonly full: readonly FilterPredicate[];
}

export const NO_FILTER: RecordFilter = { identity: [], full: [] };

/** Ordering of candidate rows for updates: a stride coprime with the row count spreads them out. */
const STRIDES = [7919, 7927, 7933];

/**
 * Generated rows plus a small overlay of appended batches and per-row overrides.
 * Memory grows with the number of changed rows, never with the dataset size.
 */
export class Dataset {
  private current: Snapshot;
  /** Logical clock (epoch seconds) for written instants: deterministic, after all synthetic history. */
  private clock: number;
  /** Seconds added to the dates the model generates (placement.ts). */
  private readonly shift: number;
  private readonly dateFields: readonly string[];

  constructor(
    readonly model: StreamModel,
    private readonly seed: number,
    readonly initialCount: number,
    placement: Placement = UNMOVED,
  ) {
    this.clock = placement.clockStart;
    this.shift = placement.shift;
    this.dateFields = model.fields.filter((f) => f.kind === 'date').map((f) => f.name);
    const initialLastModified = Math.max(placement.modifiedDay + (hashInts(seed, 99, initialCount) % 86_400), placement.modifiedFloor) * 1000;
    this.current = { version: 0, count: initialCount, batches: [], overrides: new Map(), deletedUsers: new Set(), deletedRows: 0, lastModified: initialLastModified };
  }

  snapshot(): Snapshot {
    return this.current;
  }

  get lastModified(): Date {
    return new Date(this.current.lastModified);
  }

  compileFilter(predicates: readonly FilterPredicate[]): RecordFilter {
    const ids = this.model.identityFields;
    return {
      identity: predicates.filter((p) => ids.has(p.field)),
      full: predicates.filter((p) => !ids.has(p.field)),
    };
  }

  /** Record `index` as of `snap`, with its overlay applied. */
  recordAt(snap: Snapshot, index: number): RawRecord {
    return this.finish(snap, index, this.model.identity(index));
  }

  /** One field of record `index`: from its identity alone when the field is part of it (cheap), else from the full record. */
  valueAt(snap: Snapshot, index: number, field: string): RawValue | undefined {
    if (this.model.identityFields.has(field)) return this.model.identity(index)[field];
    return this.recordAt(snap, index)[field];
  }

  /** Record `index` when it passes `filter` (and its user has not left), otherwise null. */
  matchAt(snap: Snapshot, index: number, filter: RecordFilter): RawRecord | null {
    const id = this.model.identity(index);
    if (snap.deletedUsers.has(id[USER_FIELD] as string)) return null;
    for (const p of filter.identity) if (!p.test(id)) return null;
    const record = this.finish(snap, index, id);
    for (const p of filter.full) if (!p.test(record)) return null;
    return record;
  }

  private finish(snap: Snapshot, index: number, id: RawRecord): RawRecord {
    let record: RawRecord;
    if (index < this.initialCount) {
      record = this.moved(this.model.complete(index, id));
    } else {
      // The model writes in its own window: it gets the instant there, and the whole row moves back.
      const batch = findBatch(snap.batches, index);
      record = this.moved(this.model.appended(index, index - batch.start, batch.instant - this.shift, batch.kind));
    }
    const override = snap.overrides.get(index);
    return override ? Object.assign(record, override) : record;
  }

  /** The record with every date moved by the placement's shift. */
  private moved(record: RawRecord): RawRecord {
    if (this.shift === 0) return record;
    for (const field of this.dateFields) {
      const value = record[field];
      if (typeof value === 'number') record[field] = value + this.shift;
    }
    return record;
  }

  append(count: number, nowMs: number): ChangeResult {
    if (count <= 0) return this.result(0, [], false, this.clock);
    return this.appendAt(count, this.tick(), nowMs);
  }

  /** Appends `count` rows of the model's `kind` written at `instant` (on the simulated calendar); the logical clock moves past them. */
  appendAt(count: number, instant: number, nowMs: number, kind?: string): ChangeResult {
    const snap = this.current;
    if (count <= 0) return this.result(0, [], false, this.clock);
    this.clock = Math.max(this.clock, instant + this.model.appendSpan(count));
    const batch: AppendBatch = { start: snap.count, count, instant, ...(kind === undefined ? {} : { kind }) };
    // Rows of users who left never reach a dump.
    const hidden = snap.deletedUsers.size === 0 ? 0 : this.rowsOf(snap.deletedUsers, snap.count, snap.count + count);
    this.commit({ ...snap, count: snap.count + count, batches: [...snap.batches, batch], deletedRows: snap.deletedRows + hidden }, nowMs);
    const keys: Record<string, string>[] = [];
    for (let i = snap.count; i < snap.count + Math.min(count, KEY_LIST_LIMIT); i++) keys.push(this.keyOf(this.model.identity(i)));
    return this.result(count, keys, count > KEY_LIST_LIMIT, instant);
  }

  update(count: number, nowMs: number): ChangeResult {
    if (count <= 0 || this.current.count === 0) return this.result(0, [], false, this.clock);
    const instant = this.tick();
    const result = this.changeAt(count, instant, nowMs, (record, index, position, at) => this.model.update(record, index, position, at));
    if (result.changed > 0) this.clock = Math.max(this.clock, instant + this.model.updateSpan);
    return result;
  }

  /**
   * Changes up to `count` rows `change` takes (a live row it returns fields
   * for), visited in an order spread over the rows by the seed, the data
   * version and `salt`; `instant` is when the change is written.
   */
  changeAt(count: number, instant: number, nowMs: number, change: RowChange, salt = 0): ChangeResult {
    const snap = this.current;
    const n = snap.count;
    if (count <= 0 || n === 0) return this.result(0, [], false, this.clock);
    const stride = STRIDES.find((s) => n % s !== 0) ?? 1;
    const start = hashInts(this.seed, snap.version + salt * 7919, n) % n;
    const overrides = new Map(snap.overrides);
    const keys: Record<string, string>[] = [];
    let changed = 0;
    for (let k = 0; k < n && changed < count; k++) {
      const index = (start + k * stride) % n;
      const record = this.recordAt(snap, index);
      if (snap.deletedUsers.has(record[USER_FIELD] as string)) continue;
      const fields = change(record, index, changed, instant);
      if (!fields) continue;
      overrides.set(index, { ...snap.overrides.get(index), ...fields });
      if (keys.length < KEY_LIST_LIMIT) keys.push(this.keyOf(record));
      changed++;
    }
    if (changed === 0) return this.result(0, [], false, this.clock);
    this.clock = Math.max(this.clock, instant);
    this.commit({ ...snap, overrides }, nowMs);
    return this.result(changed, keys, changed > KEY_LIST_LIMIT, instant);
  }

  /** Every row of these users leaves the dumps (they left the organisation). Returns the rows that went. */
  deleteUsers(userIds: readonly string[], nowMs: number): number {
    const snap = this.current;
    const leaving = new Set(userIds.filter((id) => !snap.deletedUsers.has(id)));
    if (leaving.size === 0) return 0;
    const rows = this.rowsOf(leaving, 0, snap.count);
    this.commit({ ...snap, deletedUsers: new Set([...snap.deletedUsers, ...leaving]), deletedRows: snap.deletedRows + rows }, nowMs);
    return rows;
  }

  /** Rows in [from, to) of these users. */
  private rowsOf(users: ReadonlySet<string>, from: number, to: number): number {
    let rows = 0;
    for (let index = from; index < to; index++) if (users.has(this.model.identity(index)[USER_FIELD] as string)) rows++;
    return rows;
  }

  /** Rows in the dumps: appended ones included, those of users who left not. */
  get liveCount(): number {
    return this.current.count - this.current.deletedRows;
  }

  /** The logical clock (epoch seconds): written instants lie after everything written so far. */
  get now(): number {
    return this.clock;
  }

  /** Moves the logical clock forward to `seconds` (a simulated day has passed). */
  advanceTo(seconds: number): void {
    this.clock = Math.max(this.clock, seconds);
  }

  private tick(): number {
    return this.clock + 3600;
  }

  /** Last-Modified moves by at least one second per change, whatever the wall clock says. */
  private commit(next: Omit<Snapshot, 'version' | 'lastModified'>, nowMs: number): void {
    const previous = this.current.lastModified;
    const lastModified = Math.max(Math.floor(nowMs / 1000) * 1000, previous + 1000);
    this.current = { ...next, version: this.current.version + 1, lastModified };
  }

  private keyOf(record: RawRecord): Record<string, string> {
    const key: Record<string, string> = {};
    for (const k of this.model.descriptor.keyProperties) key[k] = String(record[k]);
    return key;
  }

  private result(changed: number, keys: Record<string, string>[], keysTruncated: boolean, instant: number): ChangeResult {
    return {
      stream: this.model.descriptor.name,
      changed,
      keys,
      keysTruncated,
      instant: new Date(instant * 1000).toISOString().replace('.000Z', 'Z'),
      lastModified: this.lastModified,
      records: this.liveCount,
    };
  }
}

function findBatch(batches: readonly AppendBatch[], index: number): AppendBatch {
  let lo = 0;
  let hi = batches.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (batches[mid].start <= index) lo = mid;
    else hi = mid - 1;
  }
  return batches[lo];
}
