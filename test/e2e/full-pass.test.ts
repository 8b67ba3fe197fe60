import { existsSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { type LiveTap, startTap, syncOk, syncTap, waitFor } from '../helpers/cli.js';
import { tempFolder, writeTempJson } from '../helpers/files.js';
import { age, asOtherHostsSpool } from '../helpers/leases.js';
import { activationsOf, type JsonObject, lastState, parseMessages, recordMessages, recordsOf } from '../helpers/messages.js';
import { catalogOf } from '../helpers/resilience-util.js';
import { type Sandbox, startTestSandbox, tapConfig } from '../helpers/sandbox.js';
import { startTenantServer } from '../helpers/tenant-server.js';
import type { FakeServer } from '../helpers/fake-server.js';

/**
 * The full pass through the CLI, as a scheduler runs it: ACTIVATE_VERSION
 * before the pass's records, every record with the table version; the next
 * pass when the interval is over; a pass that holds far fewer rows, or
 * skipped invalid ones, sends no ACTIVATE_VERSION; a pass held in its spool
 * leaves no spool behind when it is stopped, fails on a full spool naming the
 * setting, and a killed one's spool is removed by the next run, or, left
 * on another host, by a later run once its lease expired, while a live run
 * of another host keeps its spool by renewing the lease.
 */

/** lease.ts's LEASE_EXPIRY_MS, and a minute. */
const EXPIRED_MS = 11 * 60_000;

const servers: Array<Sandbox | FakeServer> = [];

beforeAll(async () => {
  await ensureBuilt();
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function sandbox(records = 300, faults = {}): Promise<Sandbox> {
  const started = await startTestSandbox({ trainingRecords: records, phishingRecords: 40, faults });
  servers.push(started);
  return started;
}

const daysAgo = (days: number): string => new Date(Date.now() - days * 86_400_000).toISOString();

describe.concurrent('a full pass', () => {
  it('sends ACTIVATE_VERSION after SCHEMA and before its records, which all carry its version; later runs carry it until the next pass', async () => {
    const s = await sandbox();
    const config = tapConfig(s, { discovery: 'packaged', full_pass_interval_days: 7 });
    const first = await syncOk({ config });
    const training = first.messages.filter((m) => 'stream' in m && m.stream === 'training');
    expect(training.map((m) => m.type).slice(0, 3)).toEqual(['SCHEMA', 'ACTIVATE_VERSION', 'RECORD']);
    const [activation] = activationsOf(first.messages, 'training');
    expect(Number.isSafeInteger(activation.version)).toBe(true);
    expect(Math.abs(activation.version - Date.now())).toBeLessThan(120_000);
    expect(recordMessages(first.messages, 'training').every((m) => m.version === activation.version)).toBe(true);
    const state = lastState(first.messages);
    expect(state.bookmarks!.training.full_pass).toEqual({ at: expect.stringMatching(/Z$/), due: state.bookmarks!.training.full_pass!.at, version: activation.version, rows: 300 });

    s.append('training', 3);
    const next = await syncOk({ config, state });
    expect(activationsOf(next.messages)).toEqual([]);
    expect(recordMessages(next.messages, 'training').length).toBeGreaterThanOrEqual(3);
    expect(recordMessages(next.messages, 'training').every((m) => m.version === activation.version)).toBe(true);

    // Eight days later: the next pass, a later version.
    const old = structuredClone(lastState(next.messages));
    old.bookmarks!.training.full_pass!.at = daysAgo(8);
    const pass = await syncOk({ config, state: old });
    const [second] = activationsOf(pass.messages, 'training');
    expect(second.version).toBeGreaterThan(activation.version);
    expect(recordMessages(pass.messages, 'training')).toHaveLength(303);
    expect(activationsOf(pass.messages, 'phishing')).toEqual([]);
    expect(pass.stderr).toMatch(/training: 303 records .*; full pass \(interval\), version \d+ activated/);
  });

  it('without emit_activate_version_messages sends no ACTIVATE_VERSION and no version, and holds nothing back', async () => {
    const s = await sandbox(100);
    const spools = tempFolder('tap-spool-');
    const run = await syncOk({ config: tapConfig(s, { discovery: 'packaged', full_pass_interval_days: 7, emit_activate_version_messages: false, spool_directory: spools }) });
    expect(activationsOf(run.messages)).toEqual([]);
    expect(recordMessages(run.messages).every((m) => m.version === undefined)).toBe(true);
    expect(lastState(run.messages).bookmarks!.training.full_pass).toEqual({ at: expect.any(String), due: expect.any(String), rows: 100 });
    expect(run.stderr).not.toMatch(/spool/);
  });

  it('that holds fewer rows than full_pass_min_ratio of the last one sends them without ACTIVATE_VERSION, naming both counts, and keeps the baseline', async () => {
    const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ userId: `u-${i}`, programId: 'p', moduleId: 'm', completed: true, completedAt: `2025-03-0${1 + (i % 9)}T10:00:00Z` }));
    const dumps = { training: rows(10), phishing: [{ userId: 'u-1', campaignId: 'c', sentAt: '2025-03-01T10:00:00Z' }] };
    const server = await startTenantServer(dumps);
    servers.push(server);
    const config = { base_url: server.url, access_token: 'tok-anything', discovery: 'packaged', full_pass_interval_days: 7 };
    const first = await syncOk({ config });
    expect(activationsOf(first.messages, 'training')).toHaveLength(1);
    dumps.training = rows(4);
    const state = structuredClone(lastState(first.messages));
    state.bookmarks!.training.full_pass!.at = daysAgo(8);
    const truncated = await syncOk({ config, state });
    expect(activationsOf(truncated.messages, 'training')).toEqual([]);
    expect(recordMessages(truncated.messages, 'training')).toHaveLength(4);
    expect(truncated.stderr).toContain('training: the full pass sends its 4 records without ACTIVATE_VERSION, so the target deletes nothing: the last full pass held 10 records, and 4 is fewer than full_pass_min_ratio (0.5) of that. If the source really shrank, lower full_pass_min_ratio for one run.');
    expect(lastState(truncated.messages).bookmarks!.training.full_pass).toMatchObject({ rows: 10 });
    // The operator accepts the shrink for one run.
    const accepted = await syncOk({ config: { ...config, full_pass_min_ratio: 0 }, state });
    expect(activationsOf(accepted.messages, 'training')).toHaveLength(1);
    expect(lastState(accepted.messages).bookmarks!.training.full_pass).toMatchObject({ rows: 4 });
  });

  it('that holds no rows sends no ACTIVATE_VERSION: not on a first run, nor with full_pass_min_ratio 0 after a pass that held rows', async () => {
    const rows = Array.from({ length: 10 }, (_, i) => ({ userId: `u-${i}`, programId: 'p', moduleId: 'm', completed: true, completedAt: '2025-03-01T10:00:00Z' }));
    const dumps: { training: JsonObject[]; phishing: JsonObject[] } = { training: [], phishing: [] };
    const server = await startTenantServer(dumps);
    servers.push(server);
    const config = { base_url: server.url, access_token: 'tok-anything', discovery: 'packaged', full_pass_interval_days: 7 };
    const emptied = 'training: the full pass sends its 0 records without ACTIVATE_VERSION, so the target deletes nothing: the dump held no records (an empty dump never empties the warehouse)';

    const first = await syncOk({ config, catalog: catalogOf(['training']) });
    expect(activationsOf(first.messages)).toEqual([]);
    expect(first.stderr).toContain(emptied);
    // No baseline: the next pass is held against none.
    expect(lastState(first.messages).bookmarks!.training.full_pass).toEqual({ at: expect.any(String), due: expect.any(String), version: expect.any(Number) });

    dumps.training = rows;
    const full = await syncOk({ config, catalog: catalogOf(['training']) });
    expect(activationsOf(full.messages, 'training')).toHaveLength(1);
    dumps.training = [];
    const state = structuredClone(lastState(full.messages));
    state.bookmarks!.training.full_pass!.at = daysAgo(8);
    // A ratio of 0 lets any count through the shrink check; an empty pass still deletes nothing.
    const empty = await syncOk({ config: { ...config, full_pass_min_ratio: 0 }, catalog: catalogOf(['training']), state });
    expect(activationsOf(empty.messages)).toEqual([]);
    expect(empty.stderr).toContain(emptied);
    expect(lastState(empty.messages).bookmarks!.training.full_pass).toMatchObject({ rows: 10 });
  });

  it('that skipped invalid records sends no ACTIVATE_VERSION: their rows must not be deleted for it', async () => {
    const dumps = {
      training: [
        { userId: 'u-1', programId: 'p', moduleId: 'm', completedAt: '2025-03-01T10:00:00Z' },
        { userId: 'u-2', programId: 'p', moduleId: 'm', completedAt: 'not a date' },
      ],
      phishing: [],
    };
    const server = await startTenantServer(dumps);
    servers.push(server);
    const run = await syncOk({ config: { base_url: server.url, access_token: 'tok-anything', discovery: 'packaged', full_pass_interval_days: 7, on_invalid_record: 'skip' } });
    expect(activationsOf(run.messages, 'training')).toEqual([]);
    expect(recordMessages(run.messages, 'training')).toHaveLength(1);
    expect(run.stderr).toContain('training: the full pass sends its 1 records without ACTIVATE_VERSION, so the target deletes nothing: 1 invalid records were skipped');
  });
});

describe('the spool of a full pass', () => {
  /** The tap on a slow dump, its pass held in `spools`. */
  function slowPass(s: Sandbox, spools: string): LiveTap {
    return startTap(['--config', writeTempJson(tapConfig(s, { discovery: 'packaged', full_pass_interval_days: 7, compression: 'none', spool_directory: spools }))]);
  }

  // The folder is made, then its lease written: a test that moves or ages the folder waits for both.
  const spoolAppears = (spools: string): Promise<void> => waitFor(() => readdirSync(spools).some((name) => existsSync(join(spools, name, 'lease'))), 'a spool folder appears, with its lease');

  it('is removed when the run is stopped (SIGTERM), which still dies of that signal and sent nothing of the pass', async () => {
    const s = await sandbox(3000, { bodyBytesPerSecond: 200_000 });
    const spools = tempFolder('tap-spool-');
    const run = slowPass(s, spools);
    await spoolAppears(spools);
    run.kill('SIGTERM');
    const [code, signal] = await run.closed;
    expect({ code, signal }).toEqual({ code: null, signal: 'SIGTERM' });
    expect(readdirSync(spools)).toEqual([]);
    expect(parseMessages(run.stdout()).filter((m) => m.type !== 'SCHEMA')).toEqual([]);
  });

  it('left by a killed run (SIGKILL) is removed by the next run, which passes in full', async () => {
    const s = await sandbox(3000, { bodyBytesPerSecond: 200_000 });
    const spools = tempFolder('tap-spool-');
    const killed = slowPass(s, spools);
    await spoolAppears(spools);
    killed.kill('SIGKILL');
    await killed.closed;
    expect(readdirSync(spools)).toHaveLength(1);
    s.setFaults({ bodyBytesPerSecond: null });
    const next = await syncOk({ config: tapConfig(s, { discovery: 'packaged', full_pass_interval_days: 7, spool_directory: spools }) });
    expect(activationsOf(next.messages)).toHaveLength(2);
    expect(readdirSync(spools)).toEqual([]);
  });

  it('left by a run killed on another host is kept while its lease is fresh, and removed by a later run of any kind once it expired', async () => {
    const s = await sandbox(3000, { bodyBytesPerSecond: 200_000 });
    const spools = tempFolder('tap-spool-');
    const killed = slowPass(s, spools);
    await spoolAppears(spools);
    killed.kill('SIGKILL');
    await killed.closed;
    const left = asOtherHostsSpool(join(spools, readdirSync(spools)[0]));
    s.setFaults({ bodyBytesPerSecond: null });
    const next = await syncOk({ config: tapConfig(s, { discovery: 'packaged', full_pass_interval_days: 7, spool_directory: spools }) });
    expect(activationsOf(next.messages)).toHaveLength(2);
    expect(readdirSync(spools)).toEqual([basename(left)]);

    age(left, EXPIRED_MS);
    // An incremental run, which makes no spool of its own.
    const later = await syncOk({ config: tapConfig(s, { discovery: 'packaged', full_pass_interval_days: 7, spool_directory: spools }), state: lastState(next.messages) });
    expect(activationsOf(later.messages)).toEqual([]);
    expect(readdirSync(spools)).toEqual([]);
    expect(later.stderr).toContain(`spool: removed 1 spool folder(s) that runs left when they died, in ${spools}`);
  });

  it('of a live run on another host is left alone by a concurrent run while the run renews its lease; both send their pass in full', async () => {
    // About 1.2 MB at 100 KB/s: the pass is held for some twelve seconds, its lease renewed within five and the concurrent run done well before.
    const s = await sandbox(3000, { bodyBytesPerSecond: 100_000 });
    const spools = tempFolder('tap-spool-');
    const live = slowPass(s, spools);
    await spoolAppears(spools);
    // Moved out of its name as another host's, the live run still finds it under its own (a link).
    const own = join(spools, readdirSync(spools)[0]);
    const moved = asOtherHostsSpool(own);
    symlinkSync(moved, own);
    age(moved, EXPIRED_MS);
    await waitFor(() => Date.now() - statSync(join(moved, 'lease')).mtimeMs < 60_000, 'the live run renews its lease', 10_000);

    s.setFaults({ bodyBytesPerSecond: null });
    // Another host: its own change store (one store would make it wait for the live run's lock on the stream).
    const concurrent = await syncOk({ config: tapConfig(s, { discovery: 'packaged', full_pass_interval_days: 7, spool_directory: spools, store_directory: tempFolder('tap-store-') }) });
    expect(activationsOf(concurrent.messages)).toHaveLength(2);
    // Its folder is still there (its records file is made with the first full block; the run's full pass below proves the records kept).
    expect(readdirSync(moved)).toContain('lease');
    expect(live.lines.filter((line) => line.includes('"type":"ACTIVATE_VERSION"'))).toEqual([]);

    const [code] = await live.closed;
    expect(code).toBe(0);
    const messages = parseMessages(live.stdout());
    expect(activationsOf(messages)).toHaveLength(2);
    expect(recordMessages(messages, 'training')).toHaveLength(3000);
    rmSync(moved, { recursive: true });
    expect(readdirSync(spools)).toEqual([]);
  });

  it('held plain on a disk, or compressed where spool_max_mb leaves no room for a plain head, sends every record of the pass after ACTIVATE_VERSION, in the order read', async () => {
    const s = await sandbox(3000);
    const direct = await syncOk({ config: tapConfig(s, { discovery: 'packaged', full_pass_interval_days: 7, emit_activate_version_messages: false }) });
    const expected = recordsOf(direct.messages, 'training');
    // 0.2 MB: a plain head of at most 50 KB, less than one writer block, so every record is compressed; 3,000 records compress to about 100 KB.
    for (const spool_max_mb of [8192, 0.2]) {
      const spools = tempFolder('tap-spool-');
      const run = await syncOk({ config: tapConfig(s, { discovery: 'packaged', full_pass_interval_days: 7, spool_directory: spools, spool_max_mb }) });
      expect(run.stderr, `spool_max_mb ${spool_max_mb}`).toMatch(spool_max_mb === 0.2 ? /full pass held in a spool: 3000 records, [\d.]+ MiB on disk \(compressed beyond its plain head\), checked/ : /full pass held in a spool: 3000 records, [\d.]+ MiB on disk, checked/);
      const training = run.messages.filter((m) => 'stream' in m && m.stream === 'training');
      expect(training.map((m) => m.type).slice(0, 2)).toEqual(['SCHEMA', 'ACTIVATE_VERSION']);
      expect(recordsOf(run.messages, 'training'), `spool_max_mb ${spool_max_mb}`).toEqual(expected);
      expect(readdirSync(spools)).toEqual([]);
    }
  });

  it('that outgrows spool_max_mb fails the run, naming the setting; nothing is sent or deleted, no spool is left', async () => {
    const s = await sandbox(3000);
    const spools = tempFolder('tap-spool-');
    const run = await syncTap({ config: tapConfig(s, { discovery: 'packaged', full_pass_interval_days: 7, spool_directory: spools, spool_max_mb: 0.01 }) });
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n').at(-1)).toMatch(/^tap-report-dump: error: The full pass's spool passed spool_max_mb \(0 MB on disk, after \d+ records\): the pass was stopped and nothing was deleted\. Raise spool_max_mb, or set spool_directory to a disk with room\.$/);
    expect(run.messages.filter((m) => m.type !== 'SCHEMA')).toEqual([]);
    expect(readdirSync(spools)).toEqual([]);
  });
});
