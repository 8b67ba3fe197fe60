import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { syncOk } from '../helpers/cli.js';
import { type Bookmark, type JsonObject, lastState, recordsOf } from '../helpers/messages.js';
import { catalogOf } from '../helpers/resilience-util.js';
import { startTenantServer } from '../helpers/tenant-server.js';
import type { FakeServer } from '../helpers/fake-server.js';
import { contentHash } from '../../src/sync/read/incremental.js';

/**
 * A bookmark never moves past a record that was not emitted, end to end over
 * real HTTP, in JSONL and CSV: records before start_date that a service sends
 * anyway (the tenant server ignores date filters, so the tap's own bound
 * decides), and an invalid row skipped in an incremental run (no spool whose
 * count would give it away).
 */

const servers: FakeServer[] = [];

beforeAll(async () => {
  await ensureBuilt();
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

const FORMATS = ['jsonl', 'csv'] as const;

/** A completed training row of user `user` at `completedAt`. */
const row = (user: string, completedAt: string, extra: JsonObject = {}): JsonObject => ({ userId: user, programId: 'p', moduleId: 'm', completed: true, completedAt, progress: 100, ...extra });

/** One training-only run against a tenant server serving `training`, and its training records and bookmark. */
async function trainingRun(training: JsonObject[], config: JsonObject, state?: unknown): Promise<{ records: JsonObject[]; bookmark: Bookmark; stderr: string }> {
  const server = await startTenantServer({ training, phishing: [] });
  servers.push(server);
  const run = await syncOk({ config: { base_url: server.url, access_token: 'tok-anything', discovery: 'packaged', ...config }, catalog: catalogOf(['training']), ...(state === undefined ? {} : { state }) });
  // A CSV record carries every selected field, null where the dump has no column for it: compared without them.
  const records = recordsOf(run.messages, 'training').map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== null)));
  return { records, bookmark: lastState(run.messages).bookmarks!.training, stderr: run.stderr };
}

/** The bookmark's value and hashes: those of `atMaximum`, the emitted records at the greatest instant, or none. */
function expectBookmark(bookmark: Bookmark, value: string | undefined, atMaximum: readonly JsonObject[] = []): void {
  expect(bookmark.replication_key).toBe('completedAt');
  expect(bookmark.replication_key_value).toBe(value);
  expect(bookmark.boundary_hashes).toEqual(value === undefined ? undefined : atMaximum.map(contentHash).sort());
}

describe.concurrent('a first run with start_date, against a service that sends records before it anyway', () => {
  const startDate = '2025-06-01T00:00:00Z';

  it.each(FORMATS)('%s: every record before start_date: none emitted, and the bookmark holds no value and no hashes', async (format) => {
    const { records, bookmark } = await trainingRun([row('u-1', '2025-05-31T23:59:59Z'), row('u-2', '2025-01-01T00:00:00Z'), row('u-3', '2025-05-31T23:59:59Z')], { format, start_date: startDate });
    expect(records).toEqual([]);
    expectBookmark(bookmark, undefined);
  });

  it.each(FORMATS)('%s: some before start_date: only the others are emitted, and the bookmark is the greatest of them, with their hashes', async (format) => {
    const inRange = [row('u-2', '2025-07-01T10:00:00Z'), row('u-4', startDate), row('u-5', '2025-07-01T10:00:00Z')];
    const { records, bookmark } = await trainingRun([row('u-1', '2025-05-31T23:59:59Z'), inRange[0], row('u-3', '2025-03-01T00:00:00Z'), inRange[1], inRange[2]], { format, start_date: startDate });
    expect(records).toEqual(inRange);
    expectBookmark(bookmark, '2025-07-01T10:00:00Z', [records[0], records[2]]);
  });

  it.each(FORMATS)('%s: some before start_date, the others after the future bound: the bookmark holds no value, not the date of a record before start_date', async (format) => {
    const future = row('u-2', '2999-01-01T00:00:00Z');
    const { records, bookmark } = await trainingRun([row('u-1', '2025-05-31T23:59:59Z'), future, row('u-3', '2025-05-01T00:00:00Z')], { format, start_date: startDate });
    expect(records).toEqual([future]);
    expectBookmark(bookmark, undefined);
  });
});

describe.concurrent('an incremental run with on_invalid_record skip', () => {
  const previous = '2025-06-01T00:00:00Z';
  // A recent full pass: the run is incremental, its records go out as read (no spool).
  const state = () => ({ bookmarks: { training: { replication_key: 'completedAt', replication_key_value: previous, full_pass: { at: new Date().toISOString(), version: 1, rows: 3 } } } });

  it.each(FORMATS)('%s: an invalid row with the latest date is skipped, and the bookmark stays at the latest record emitted', async (format) => {
    const valid = [row('u-2', '2025-06-15T00:00:00Z'), row('u-3', '2025-07-01T10:00:00Z')];
    // Its date is fine and the latest of the dump; its progress is over the schema's maximum (100).
    const invalid = row('u-4', '2025-08-01T00:00:00Z', { progress: 150 });
    // The incremental read as it emits from a state made by hand: without the change store, which would not trust it and make a full pass.
    const { records, bookmark, stderr } = await trainingRun([row('u-1', '2025-05-01T00:00:00Z'), valid[0], invalid, valid[1]], { format, on_invalid_record: 'skip', refresh_open_rows: false, send_changes_only: false }, state());
    expect(stderr).toMatch(new RegExp(`skipped invalid record: training dump \\(${format}\\) line ${format === 'csv' ? 4 : 3}: .*progress`));
    expect(records).toEqual(valid);
    expectBookmark(bookmark, '2025-07-01T10:00:00Z', [valid[1]]);
  });
});
