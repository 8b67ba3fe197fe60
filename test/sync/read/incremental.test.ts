import { describe, expect, it } from 'vitest';
import { contentHash, IncrementalCursor, type CursorRecord } from '../../../src/sync/read/incremental.js';
import { settledSnapshot } from '../../../src/records/record-snapshot.js';
import { instantMs } from '../../../src/dates.js';
import type { StreamPlan } from '../../../src/sync/plan/plan.js';

type CursorPlan = Pick<StreamPlan, 'incremental' | 'lowerBoundMs' | 'boundary' | 'previousMs' | 'futureBoundMs'>;

/** A training record as the decoders hand it to the cursor; `calls` counts how often its content was asked for, `settled` how often its snapshot was settled, `valueReads` how often its replication value (a string made on demand by the byte decoders) was. */
interface FakeRecord extends CursorRecord {
  readonly content: Record<string, unknown>;
  calls: number;
  settled: number;
  valueReads: number;
}

function record(completedAt: string | null, extra: Record<string, unknown> = {}): FakeRecord {
  const content = { userId: 'u1', programId: 'p1', moduleId: 'm1', completedAt, ...extra };
  return {
    content,
    calls: 0,
    settled: 0,
    valueReads: 0,
    replicationMs: completedAt === null ? Number.NaN : instantMs(completedAt),
    get replicationValue() {
      this.valueReads++;
      return completedAt;
    },
    toObject() {
      this.calls++;
      return content;
    },
    snapshot() {
      return {
        settle: () => void this.settled++,
        read: () => this.toObject(),
      };
    },
  };
}

const incremental = (plan: Partial<CursorPlan> = {}): IncrementalCursor => new IncrementalCursor({ incremental: true, futureBoundMs: Number.POSITIVE_INFINITY, ...plan });
const hashOf = (r: FakeRecord): string => contentHash(r.content);
/** boundary_hashes as the cursor writes them: sorted, so any order of the same records gives the same state. */
const sorted = (hashes: readonly string[]): string[] => [...hashes].sort();
const at = (hours: number, minutes = 0): number => Date.UTC(2024, 4, 1, hours, minutes);

describe('the window', () => {
  it('does not admit records before the lower bound, nor null replication keys when there is a bound, and counts them out of range', () => {
    const cursor = incremental({ lowerBoundMs: at(8) });
    const late = record('2024-05-01T09:00:00Z');
    expect(cursor.admit(record('2024-05-01T07:59:59.999Z'))).toBe(false);
    expect(cursor.admit(record(null))).toBe(false);
    expect(cursor.admit(record('2024-05-01T08:00:00Z'))).toBe(true);
    expect(cursor.admit(late)).toBe(true);
    expect(cursor.outOfRange).toBe(2);
    expect(cursor.duplicatesSkipped).toBe(0);
    expect(cursor.bookmark('completedAt')).toEqual({ replication_key: 'completedAt', replication_key_value: '2024-05-01T09:00:00Z', boundary_hashes: [hashOf(late)] });
  });

  it('without a bound admits a record with a null replication key, which does not move the bookmark', () => {
    const cursor = incremental();
    expect(cursor.admit(record(null))).toBe(true);
    expect(cursor.bookmark('completedAt')).toEqual({ replication_key: 'completedAt' });
    const dated = record('2024-05-01T08:00:00Z');
    expect(cursor.admit(dated)).toBe(true);
    expect(cursor.admit(record(null, { progress: 10 }))).toBe(true);
    expect(cursor.outOfRange).toBe(0);
    expect(cursor.bookmark('completedAt')).toEqual({ replication_key: 'completedAt', replication_key_value: '2024-05-01T08:00:00Z', boundary_hashes: [hashOf(dated)] });
  });
});

describe('the bookmark after records the cursor rejects (before the lower bound: start_date on a first run)', () => {
  it('is the replication key alone, with no value and no hashes, when every record lies before the bound', () => {
    const cursor = incremental({ lowerBoundMs: at(12) });
    for (const r of [record('2024-05-01T11:59:59Z'), record('2024-05-01T08:00:00Z'), record('2024-05-01T11:59:59Z', { userId: 'u2' })]) expect(cursor.admit(r)).toBe(false);
    expect([cursor.emitted, cursor.outOfRange]).toEqual([0, 3]);
    expect(cursor.bookmark('completedAt')).toEqual({ replication_key: 'completedAt' });
  });

  it('is the greatest admitted record, with the hashes of the admitted records at it only, when some lie before the bound', () => {
    const cursor = incremental({ lowerBoundMs: at(12) });
    const first = record('2024-05-01T12:30:00Z', { userId: 'a' });
    const tied = record('2024-05-01T12:30:00Z', { userId: 'b' });
    const records = [record('2024-05-01T11:00:00Z'), first, record('2024-05-01T11:59:59.999Z'), record('2024-05-01T12:00:00Z'), tied, record('2024-05-01T10:00:00Z')];
    expect(records.map((r) => cursor.admit(r))).toEqual([false, true, false, true, true, false]);
    expect(cursor.bookmark('completedAt')).toEqual({ replication_key: 'completedAt', replication_key_value: '2024-05-01T12:30:00Z', boundary_hashes: sorted([hashOf(first), hashOf(tied)]) });
  });

  it('is not moved by records before the bound when every admitted record lies after the future bound', () => {
    const cursor = incremental({ lowerBoundMs: at(12), futureBoundMs: at(20) });
    const records = [record('2024-05-01T11:00:00Z'), record('2999-01-01T00:00:00Z'), record('2024-05-01T11:30:00Z')];
    expect(records.map((r) => cursor.admit(r))).toEqual([false, true, false]);
    expect([cursor.emitted, cursor.outOfRange, cursor.future]).toEqual([1, 2, 1]);
    expect(cursor.bookmark('completedAt')).toEqual({ replication_key: 'completedAt' });
  });
});

describe('the bookmark', () => {
  it('is the greatest instant compared as instants, not as text, with the hashes of every record tied at it', () => {
    const cursor = incremental();
    const first = record('2024-05-01T09:30:00Z', { userId: 'u1' });
    const tiedWithOffset = record('2024-05-01T11:30:00+02:00', { userId: 'u2' });
    for (const r of [record('2024-05-01T10:00:00+02:00'), first, record('2024-05-01T09:00:00Z'), tiedWithOffset, record('2024-05-01T10:59:00+02:00')]) {
      expect(cursor.admit(r)).toBe(true);
    }
    expect(cursor.bookmark('completedAt')).toEqual({
      replication_key: 'completedAt',
      replication_key_value: '2024-05-01T09:30:00Z',
      boundary_hashes: sorted([hashOf(first), hashOf(tiedWithOffset)]),
    });
  });

  it('keeps only the hashes of the records at the new instant when a later one arrives', () => {
    const cursor = incremental();
    cursor.admit(record('2024-05-01T08:00:00Z', { userId: 'a' }));
    cursor.admit(record('2024-05-01T08:00:00Z', { userId: 'b' }));
    const later = record('2024-05-01T08:00:00.001Z', { userId: 'c' });
    cursor.admit(later);
    expect(cursor.bookmark('completedAt')).toEqual({ replication_key: 'completedAt', replication_key_value: '2024-05-01T08:00:00.001Z', boundary_hashes: [hashOf(later)] });
  });

  it('never moves back: a read whose records are all before the previous bookmark leaves only the replication key', () => {
    const cursor = incremental({ previousMs: at(10), lowerBoundMs: at(9) });
    expect(cursor.admit(record('2024-05-01T09:30:00Z'))).toBe(true);
    expect(cursor.admit(record('2024-05-01T09:59:59Z'))).toBe(true);
    expect(cursor.bookmark('completedAt')).toEqual({ replication_key: 'completedAt' });
  });

  it('moves forward from the previous bookmark when a record is later, and stays at it when one is at it', () => {
    const forward = incremental({ previousMs: at(10), lowerBoundMs: at(9) });
    forward.admit(record('2024-05-01T09:30:00Z'));
    forward.admit(record('2024-05-01T10:00:01Z'));
    expect(forward.bookmark('completedAt').replication_key_value).toBe('2024-05-01T10:00:01Z');

    const same = incremental({ previousMs: at(10), lowerBoundMs: at(9) });
    const atPrevious = record('2024-05-01T10:00:00Z');
    same.admit(record('2024-05-01T09:30:00Z'));
    same.admit(atPrevious);
    expect(same.bookmark('completedAt')).toEqual({ replication_key: 'completedAt', replication_key_value: '2024-05-01T10:00:00Z', boundary_hashes: [hashOf(atPrevious)] });
  });

  it('is {} for FULL_TABLE, which admits every record, null keys included, without asking for their content', () => {
    const cursor = new IncrementalCursor({ incremental: false, futureBoundMs: Number.POSITIVE_INFINITY });
    const records = [record('2024-05-01T08:00:00Z'), record(null), record('2023-01-01T00:00:00Z')];
    for (const r of records) expect(cursor.admit(r)).toBe(true);
    expect(cursor.bookmark('completedAt')).toEqual({});
    expect(records.map((r) => r.calls)).toEqual([0, 0, 0]);
    expect(cursor.outOfRange).toBe(0);
  });
});

describe('dates after the future bound (the run\'s start plus max_future_skew)', () => {
  it('are emitted and counted, but move neither the bookmark nor the boundary', () => {
    const cursor = incremental({ futureBoundMs: at(12) });
    const records = [record('2024-05-01T10:00:00Z'), record('2999-01-01T00:00:00Z'), record('2024-05-01T12:00:00Z'), record('2024-05-01T12:00:01Z')];
    expect(records.map((r) => cursor.admit(r))).toEqual([true, true, true, true]);
    expect([cursor.emitted, cursor.future]).toEqual([4, 2]);
    expect(cursor.bookmark('completedAt')).toEqual({ replication_key: 'completedAt', replication_key_value: '2024-05-01T12:00:00Z', boundary_hashes: [hashOf(records[2])] });
  });

  it('leave the bookmark where it was when nothing before the bound is newer', () => {
    const cursor = incremental({ futureBoundMs: at(12), previousMs: at(9), lowerBoundMs: at(9) });
    expect(cursor.admit(record('2999-01-01T00:00:00Z'))).toBe(true);
    expect(cursor.bookmark('completedAt')).toEqual({ replication_key: 'completedAt' });
  });
});

describe('boundary dedupe', () => {
  const boundaryPlan = (...hashes: string[]): Partial<CursorPlan> => ({ previousMs: at(8), lowerBoundMs: at(8), boundary: { ms: at(8), hashes: new Set(hashes) } });

  it('skips a record at the previous bookmark whose content hash is in the boundary, and emits a changed one at that instant', () => {
    const emittedBefore = record('2024-05-01T08:00:00Z', { userId: 'u1', progress: 100 });
    const cursor = incremental(boundaryPlan(hashOf(emittedBefore)));
    const unchanged = record('2024-05-01T08:00:00Z', { userId: 'u1', progress: 100 });
    const changed = record('2024-05-01T08:00:00Z', { userId: 'u1', progress: 90 });
    expect(cursor.admit(unchanged)).toBe(false);
    expect(cursor.admit(changed)).toBe(true);
    expect(cursor.duplicatesSkipped).toBe(1);
    expect(cursor.outOfRange).toBe(0);
    // The skipped record stays part of the boundary, so it is not emitted again next time either.
    expect(cursor.bookmark('completedAt')).toEqual({
      replication_key: 'completedAt',
      replication_key_value: '2024-05-01T08:00:00Z',
      boundary_hashes: sorted([hashOf(unchanged), hashOf(changed)]),
    });
  });

  it('recognises a boundary record whatever its key order', () => {
    const cursor = incremental(boundaryPlan(contentHash({ userId: 'u1', programId: 'p1', moduleId: 'm1', completedAt: '2024-05-01T08:00:00Z' })));
    const reordered: CursorRecord = {
      replicationMs: at(8),
      replicationValue: '2024-05-01T08:00:00Z',
      toObject: () => ({ completedAt: '2024-05-01T08:00:00Z', moduleId: 'm1', programId: 'p1', userId: 'u1' }),
      snapshot: () => settledSnapshot(() => ({ completedAt: '2024-05-01T08:00:00Z', moduleId: 'm1', programId: 'p1', userId: 'u1' })),
    };
    expect(cursor.admit(reordered)).toBe(false);
    expect(cursor.duplicatesSkipped).toBe(1);
  });

  it('does not dedupe records after the boundary instant, even with a content hash from the boundary', () => {
    const later = record('2024-05-01T08:00:01Z');
    const cursor = incremental(boundaryPlan(hashOf(later)));
    expect(cursor.admit(later)).toBe(true);
    expect(cursor.duplicatesSkipped).toBe(0);
    expect(cursor.bookmark('completedAt')).toEqual({ replication_key: 'completedAt', replication_key_value: '2024-05-01T08:00:01Z', boundary_hashes: [hashOf(later)] });
  });

  it('when every record at the boundary is skipped, keeps the bookmark and its hashes', () => {
    const a = record('2024-05-01T08:00:00Z', { userId: 'a' });
    const b = record('2024-05-01T08:00:00Z', { userId: 'b' });
    const cursor = incremental(boundaryPlan(hashOf(a), hashOf(b)));
    expect(cursor.admit(b)).toBe(false);
    expect(cursor.admit(a)).toBe(false);
    expect(cursor.duplicatesSkipped).toBe(2);
    expect(cursor.bookmark('completedAt')).toEqual({ replication_key: 'completedAt', replication_key_value: '2024-05-01T08:00:00Z', boundary_hashes: sorted([hashOf(b), hashOf(a)]) });
  });
});

describe('content is asked for only when a hash is needed', () => {
  it('builds the content only of the records still at the maximum when the dump ends: none below it, none passed later, none not admitted', () => {
    const cursor = incremental({ lowerBoundMs: at(7) });
    const records = [
      record('2024-05-01T06:00:00Z'), // out of range
      record('2024-05-01T08:00:00Z'), // new maximum
      record('2024-05-01T09:00:00Z'), // new maximum
      record('2024-05-01T08:30:00Z'), // below the maximum
      record('2024-05-01T09:00:00Z', { userId: 'u2' }), // tied with the maximum
      record(null), // out of range
    ];
    for (const r of records) cursor.admit(r);
    expect(records.map((r) => r.calls)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(cursor.bookmark('completedAt').boundary_hashes).toEqual(sorted([hashOf(records[2]), hashOf(records[4])]));
    expect(records.map((r) => r.calls)).toEqual([0, 0, 1, 0, 1, 0]);
  });

  it('on a dump sorted by the key, hashes only the last instant, every record at it', () => {
    const cursor = incremental();
    const records = Array.from({ length: 3000 }, (_, i) => record(new Date(at(0) + Math.floor(i / 2) * 1000).toISOString(), { userId: `u${i}` }));
    // A long tie at the end: more records than are kept unhashed.
    const tied = Array.from({ length: 9000 }, (_, i) => record('2024-05-02T00:00:00Z', { userId: `t${i}` }));
    for (const r of [...records, ...tied]) cursor.admit(r);
    expect(records.every((r) => r.calls === 0)).toBe(true);
    const bookmark = cursor.bookmark('completedAt');
    expect(bookmark.boundary_hashes).toEqual(sorted(tied.map(hashOf)));
    // The value comes from the first tied record's content, read once for its hash (the long tie hashed it early).
    expect(bookmark.replication_key_value).toBe('2024-05-02T00:00:00Z');
    expect(tied.every((r) => r.calls === 1)).toBe(true);
  });

  it("on a dump sorted by the key, makes no record's value: the bookmark reads it from the last maximum's content", () => {
    const cursor = incremental();
    const records = Array.from({ length: 1000 }, (_, i) => record(new Date(at(0) + i * 1000).toISOString(), { userId: `u${i}` }));
    for (const r of records) cursor.admit(r);
    expect(records.every((r) => r.valueReads === 0)).toBe(true);
    expect(cursor.bookmark('completedAt')).toEqual({ replication_key: 'completedAt', replication_key_value: records[999].content.completedAt, boundary_hashes: [hashOf(records[999])] });
    expect(records.map((r) => r.calls).filter((calls) => calls > 0)).toEqual([1]);
  });

  it('settles a snapshot once, only if it is still at the maximum when its chunk ends: a record passed within its chunk is never copied', () => {
    const cursor = incremental();
    const chunk1 = [record('2024-05-01T08:00:00Z'), record('2024-05-01T09:00:00Z'), record('2024-05-01T10:00:00Z', { userId: 'a' }), record('2024-05-01T10:00:00Z', { userId: 'b' })];
    const chunk2 = [record('2024-05-01T07:00:00Z'), record('2024-05-01T10:00:00Z', { userId: 'c' })];
    const chunk3 = [record('2024-05-01T11:00:00Z')];
    for (const chunk of [chunk1, chunk2, chunk3]) {
      for (const r of chunk) cursor.admit(r);
      cursor.settle();
    }
    cursor.settle();
    expect([...chunk1, ...chunk2, ...chunk3].map((r) => r.settled)).toEqual([0, 0, 1, 1, 0, 1, 1]);
    expect(cursor.bookmark('completedAt').boundary_hashes).toEqual([hashOf(chunk3[0])]);
  });

  it('calls toObject() once for a record at the boundary instant, whether skipped or emitted', () => {
    const skipped = record('2024-05-01T08:00:00Z', { userId: 'a' });
    const emitted = record('2024-05-01T08:00:00Z', { userId: 'b' });
    const cursor = incremental({ previousMs: at(8), lowerBoundMs: at(8), boundary: { ms: at(8), hashes: new Set([hashOf(skipped)]) } });
    cursor.admit(skipped);
    cursor.admit(emitted);
    expect([skipped.calls, emitted.calls]).toEqual([1, 1]);
  });
});

describe('contentHash', () => {
  it('is equal whatever the key order, and differs when a value or its type differs', () => {
    const hash = contentHash({ userId: 'u1', progress: 50, completedAt: null });
    expect(contentHash({ completedAt: null, progress: 50, userId: 'u1' })).toBe(hash);
    expect(hash).toMatch(/^[A-Za-z0-9_-]{12}$/);
    expect(contentHash({ userId: 'u1', progress: 51, completedAt: null })).not.toBe(hash);
    expect(contentHash({ userId: 'u1', progress: '50', completedAt: null })).not.toBe(hash);
    expect(contentHash({ userId: 'u1', progress: 50, completedAt: '2024-05-01T08:00:00Z' })).not.toBe(hash);
  });

  it('hashes a field that is null like a field the record leaves out (a JSONL line omits what a CSV row writes as an empty cell), and like nothing else', () => {
    const csvRow = contentHash({ userId: 'u1', progress: 50, completedAt: null, score: null });
    expect(contentHash({ userId: 'u1', progress: 50 })).toBe(csvRow);
    expect(contentHash({ userId: 'u1', progress: 50, score: null })).toBe(csvRow);
    for (const value of ['', 0, false, 'null', []]) expect(contentHash({ userId: 'u1', progress: 50, score: value }), JSON.stringify(value)).not.toBe(csvRow);
  });
});
