import { expect } from 'vitest';
import type { JsonObject } from './messages.js';
import { canonical } from './records.js';
import { openRowsFilters, REPLICATION_KEY, type Sandbox, type Stream } from './sandbox.js';
import type { DumpRequestSeen } from '../../sandbox/api.js';
import { reportByName } from '../../src/catalog/reports.js';

/**
 * What an incremental run sends by default when rows were only appended since
 * the last run, as sandbox filters: the records after the bookmark. The open
 * rows (training) and the event window are read again too, but with the
 * change store a row that did not change is not sent again.
 */
export function afterBookmark(stream: Stream, bookmark: string): Array<Record<string, string>> {
  return [{ [REPLICATION_KEY[stream]]: `>${bookmark}` }];
}

/** What an incremental run sends without the change store (send_changes_only false): the records after the bookmark, and every open row of a report that has them. */
export function afterBookmarkWithOpenRows(stream: Stream, bookmark: string): Array<Record<string, string>> {
  const openRows = reportByName(stream)?.openRows;
  return openRows === undefined ? afterBookmark(stream, bookmark) : [...afterBookmark(stream, bookmark), openRowsFilters(openRows)];
}

/** The sandbox's records of a union of filter sets, each record once. */
export function recordsOfUnion(sandbox: Sandbox, stream: Stream, filterSets: ReadonlyArray<Record<string, string>>): Record<string, unknown>[] {
  const seen = new Set<string>();
  const out: Record<string, unknown>[] = [];
  for (const filters of filterSets) {
    for (const record of sandbox.records(stream, filters)) {
      const text = JSON.stringify(record);
      if (!seen.has(text)) out.push(record);
      seen.add(text);
    }
  }
  return out;
}

/**
 * A run's records of a stream are exactly the truth sandbox's records of
 * `filters` (one set, or several whose union the run emits: an incremental
 * run's afterBookmark), each renamed field by field to the names the run
 * emits; in any order, and never an empty comparison.
 */
export function expectRenamedRecords(actual: readonly JsonObject[], truth: Sandbox, stream: Stream, rename: (field: string, stream: Stream) => string, filters: Record<string, string> | Array<Record<string, string>> = {}): void {
  const expected = recordsOfUnion(truth, stream, Array.isArray(filters) ? filters : [filters]).map((record) => Object.fromEntries(Object.entries(record).map(([field, value]) => [rename(field, stream), value])));
  expect(expected.length, 'the comparison is not empty').toBeGreaterThan(0);
  expect(actual.map(canonical).sort()).toEqual(expected.map(canonical).sort());
}

/** The last request of a stream that asked by its replication key (the incremental read, not the open rows'). */
export function lastIncrementalRequest(sandbox: Sandbox, stream: Stream): DumpRequestSeen | undefined {
  return sandbox.requestsSeen().filter((r) => r.stream === stream && REPLICATION_KEY[stream] in r.filters).at(-1);
}
