import { recordHash, type StreamBookmark } from '../../state.js';
import type { Replicated } from '../../records/fields.js';
import { settledSnapshot, type RecordSnapshot } from '../../records/record-snapshot.js';
import type { StreamPlan } from '../plan/plan.js';

export type { RecordSnapshot } from '../../records/record-snapshot.js';

/** A record the cursor decides on: its replication key, and its content when a boundary hash is needed. */
export interface CursorRecord extends Replicated {
  toObject(): Record<string, unknown>;
  /** The content of this record for later, when it may never be needed. */
  snapshot(): RecordSnapshot;
}

/** Records at the maximum kept unhashed at most (a few MiB of their bytes): beyond this many, they are hashed at once, so memory stays flat on any tie. */
const PENDING_SNAPSHOTS = 8192;

/**
 * Canonical content of a record for boundary dedupe, as conformed to its
 * schema: keys sorted, and a field that is null the same as a field the record
 * leaves out (a JSONL line may omit what a CSV row writes as an empty cell;
 * a target loads both as null), so a record hashes alike in CSV and JSONL and
 * a run after a change of `format` does not emit the boundary again.
 */
export function contentHash(record: Record<string, unknown>): string {
  const keys = Object.keys(record).sort();
  let text = '';
  for (const key of keys) {
    const value = record[key];
    if (value !== null && value !== undefined) text += `${JSON.stringify(key)}:${JSON.stringify(value)},`;
  }
  return recordHash(text);
}

/**
 * The incremental rules of one stream's sync: which records are emitted (not
 * those before the window, nor those emitted unchanged at the bookmark last
 * time), the greatest replication-key instant among the emitted ones and the
 * content hashes of the records at it, and from these the next bookmark.
 */
export class IncrementalCursor {
  /** Records admitted. */
  emitted = 0;
  outOfRange = 0;
  duplicatesSkipped = 0;
  /** Emitted records whose replication key lies after the future bound: they do not move the bookmark. */
  future = 0;
  private maxMs = Number.NEGATIVE_INFINITY;
  private maxValue: string | null = null;
  /**
   * The first record at the greatest instant, kept as a snapshot: its value is
   * read from it only for the bookmark. On a dump sorted by the key every
   * record is a new maximum, and making each one's value a string was a
   * native call per record.
   */
  private maxRecord: RecordSnapshot | undefined;
  /** The records at the greatest instant so far, in order: a hash, or a snapshot hashed only if it is still at the maximum when the dump ends. */
  private atMaximum: Array<string | RecordSnapshot> = [];
  private pending = 0;
  /** Entries of atMaximum from this index on may still point into the current chunk. */
  private unsettled = 0;
  // The plan's parts, read once: admit runs for every record.
  private readonly incremental: boolean;
  private readonly bounded: boolean;
  private readonly lowerBoundMs: number;
  private readonly boundary: StreamPlan['boundary'];
  private readonly futureBoundMs: number;

  constructor(private readonly plan: Pick<StreamPlan, 'incremental' | 'lowerBoundMs' | 'boundary' | 'previousMs' | 'futureBoundMs'>) {
    this.incremental = plan.incremental;
    this.bounded = plan.lowerBoundMs !== undefined;
    this.lowerBoundMs = plan.lowerBoundMs ?? Number.NEGATIVE_INFINITY;
    this.boundary = plan.boundary;
    this.futureBoundMs = plan.futureBoundMs;
  }

  /** Whether the record is emitted; observes it when it is (or when it is a known boundary record). */
  admit(record: CursorRecord): boolean {
    const ms = record.replicationMs;
    // A null key (NaN) is outside any bound.
    if (this.bounded && !(ms >= this.lowerBoundMs)) {
      this.outOfRange++;
      return false;
    }
    // A null key, or one that is not an instant, says nothing about the bookmark.
    if (this.incremental && !Number.isNaN(ms) && !this.observeAdmitted(record, ms)) return false;
    this.emitted++;
    return true;
  }

  /** An incremental record inside the window: false when it is a boundary record emitted unchanged last time. */
  private observeAdmitted(record: CursorRecord, ms: number): boolean {
    if (ms > this.futureBoundMs) {
      // A date from a wrong clock would hold the bookmark in the future and hide every later record.
      this.future++;
      return true;
    }
    let hash: string | undefined;
    const { boundary } = this;
    if (boundary !== undefined && ms === boundary.ms) {
      hash = contentHash(record.toObject());
      if (boundary.hashes.has(hash)) {
        this.duplicatesSkipped++;
        this.observe(ms, record, hash);
        return false;
      }
    }
    // A record at a new maximum is hashed only if no later one passes it: on a dump sorted by the key, almost none is.
    if (ms >= this.maxMs) this.observe(ms, record, hash ?? record.snapshot());
    return true;
  }

  private observe(ms: number, record: CursorRecord, content: string | RecordSnapshot): void {
    if (ms > this.maxMs) {
      this.maxMs = ms;
      // Read while the record is current: its value as written may be made on demand.
      if (typeof content === 'string') this.maxValue = record.replicationValue;
      this.maxRecord = typeof content === 'string' ? undefined : content;
      // Emptied in place: on a dump sorted by the key every record is a new maximum, and a new array each time was most of what the cursor allocated.
      this.atMaximum.length = 0;
      this.pending = 0;
      this.unsettled = 0;
    } else if (ms !== this.maxMs) return;
    this.atMaximum.push(content);
    if (typeof content !== 'string' && ++this.pending > PENDING_SNAPSHOTS) this.hashPending();
  }

  /** The decoder is done with the current chunk: snapshots still pointing into it copy what they need. */
  settle(): void {
    const entries = this.atMaximum;
    for (let k = this.unsettled; k < entries.length; k++) {
      const entry = entries[k];
      if (typeof entry !== 'string') entry.settle();
    }
    this.unsettled = entries.length;
  }

  private hashPending(): void {
    this.atMaximum = this.atMaximum.map((entry) => {
      if (typeof entry === 'string') return entry;
      const record = entry.read();
      // The bookmark's value is read from this content later; the snapshot, which may point into the chunk, leaves the list settle() walks.
      if (entry === this.maxRecord) this.maxRecord = settledSnapshot(() => record);
      return contentHash(record);
    });
    this.pending = 0;
    this.unsettled = this.atMaximum.length;
  }

  /**
   * The bookmark after the whole dump was read: it never moves back, and never
   * past a record that was not emitted. Its hashes are sorted (they are read
   * as a set), so the same records give the same STATE in any dump order.
   */
  bookmark(replicationKey: string): Pick<StreamBookmark, 'replication_key' | 'replication_key_value' | 'boundary_hashes'> {
    if (!this.plan.incremental) return {};
    const { previousMs } = this.plan;
    if (this.maxMs === Number.NEGATIVE_INFINITY || (previousMs !== undefined && this.maxMs < previousMs)) return { replication_key: replicationKey };
    this.hashPending();
    const value = this.maxRecord === undefined ? this.maxValue : this.maxRecord.read()[replicationKey];
    if (typeof value !== 'string') throw new Error(`the record at the greatest ${replicationKey} holds no text value`);
    return { replication_key: replicationKey, replication_key_value: value, boundary_hashes: [...new Set(this.atMaximum as string[])].sort() };
  }
}
