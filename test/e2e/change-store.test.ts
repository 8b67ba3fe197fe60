import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { startTap, syncOk, syncTap, waitFor } from '../helpers/cli.js';
import { tempFolder, writeTempJson } from '../helpers/files.js';
import { activationsOf, lastState, parseMessages, recordsOf, statesOf, type JsonObject } from '../helpers/messages.js';
import { sandboxRecords, type Sandbox, startTestSandbox, tapConfig } from '../helpers/sandbox.js';
import { GenerationFile } from '../../src/store/generation-file.js';
import { LOCK_NAME } from '../../src/store/store-lock.js';

/**
 * The change store through the CLI, against the sandbox: a run sends only
 * what changed; the store is private and holds keys and hashes only; a run
 * with nothing to send writes no generation; a store the run cannot trust
 * makes a full pass, saying why; one it cannot make is a warning and the run
 * goes on as before the store.
 */

let sandbox: Sandbox;

beforeAll(async () => {
  await ensureBuilt();
  sandbox = await startTestSandbox({ trainingRecords: 300, phishingRecords: 200 });
});

afterAll(async () => {
  await sandbox.close();
});

/** Every file under `folder`, with its mode. */
function filesUnder(folder: string): Array<{ path: string; mode: number; directory: boolean }> {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' }).map((name) => {
    const path = join(folder, name);
    const info = statSync(path);
    return { path, mode: info.mode & 0o777, directory: info.isDirectory() };
  });
}

/** The stream's summary line says as many seconds as its sync_duration metric: a wait for the store's lock included. */
function expectSummaryCountsTheWholeStream(stderr: string, stream: string): void {
  const summary = new RegExp(`\\b${stream}: \\d+ records in (\\d+\\.\\d) s`).exec(stderr);
  const metric = new RegExp(`METRIC: (\\{"type":"timer","metric":"sync_duration".*"stream":"${stream}".*\\})`).exec(stderr);
  expect(summary, stderr).not.toBeNull();
  expect(metric, stderr).not.toBeNull();
  const seconds = (JSON.parse(metric![1]) as { value: number }).value;
  expect(Math.abs(Number(summary![1]) - seconds), `summary ${summary![1]} s, sync_duration ${seconds} s`).toBeLessThanOrEqual(0.06);
}

describe.concurrent('the change store', () => {
  it('lets the next run send only what changed, and a run with nothing to send names the same generation and writes none (but the second run of a pipeline, which builds on the first generation)', async () => {
    const store = tempFolder('tap-store-');
    const config = { ...tapConfig(sandbox), discovery: 'packaged', state_store_max_kb: 0, store_directory: store };
    const first = await syncOk({ config });
    expect(recordsOf(first.messages, 'training')).toHaveLength(300);
    const state = lastState(first.messages);
    expect(state.bookmarks!.training.store).toEqual({ generation: expect.stringMatching(/^\d{8}T\d{6}Z-[0-9a-f]{8}$/), rows: 300, data: null, url: null });

    // The first run's generation is built on none: the second run builds on it even with nothing to send (retention.ts).
    const second = await syncOk({ config, state });
    expect(recordsOf(second.messages, 'training')).toEqual([]);
    const generation = lastState(second.messages).bookmarks!.training.store!.generation;
    expect(generation).not.toBe(state.bookmarks!.training.store!.generation);

    const again = await syncOk({ config, state: lastState(second.messages) });
    expect(recordsOf(again.messages, 'training')).toEqual([]);
    expect(recordsOf(again.messages, 'phishing')).toEqual([]);
    expect(lastState(again.messages).bookmarks!.training.store).toEqual({ generation, rows: 300, data: null, url: null });
    const generations = filesUnder(store).filter((f) => f.path.endsWith('.gen'));
    expect(generations).toHaveLength(2);
  });

  it('taken by two runs of one tenant at once: one waits for the other, saying so, both finish, and a next run from either state sends nothing; each summary counts the wait', async () => {
    // A body at 2 KB/s: the first run holds the training stream's lock until the test lets its dump go.
    const slow = await startTestSandbox({ trainingRecords: 120, phishingRecords: 80, faults: { bodyBytesPerSecond: 2000 } });
    try {
      const store = tempFolder('tap-store-');
      const args = ['--config', writeTempJson({ ...tapConfig(slow), discovery: 'packaged', state_store_max_kb: 0, store_directory: store }, 'config.json')];
      const first = startTap(args);
      await waitFor(() => readdirSync(store, { recursive: true, encoding: 'utf8' }).some((name) => basename(name) === LOCK_NAME), 'the first run takes the lock', 30_000);
      const second = startTap(args);
      await waitFor(() => /change store: waiting for .* to release/.test(second.stderr()), 'the second run says it waits', 30_000);
      slow.setFaults({ bodyBytesPerSecond: null });
      for (const run of [first, second]) {
        const [code] = await run.closed;
        expect(code, run.stderr()).toBe(0);
        const messages = parseMessages(run.stdout());
        expect(recordsOf(messages, 'training')).toHaveLength(120);
        expectSummaryCountsTheWholeStream(run.stderr(), 'training');
        const next = await syncOk({ config: { ...tapConfig(slow), discovery: 'packaged', state_store_max_kb: 0, store_directory: store }, state: lastState(messages) });
        expect(recordsOf(next.messages, 'training'), 'a run from this state sends only what changed: nothing').toEqual([]);
        expect(recordsOf(next.messages, 'phishing')).toEqual([]);
      }
    } finally {
      await slow.close();
    }
  });

  it('is private (folders 0700, files 0600) and holds keys and hashes only: no e-mail address, no name', async () => {
    const store = tempFolder('tap-store-');
    await syncOk({ config: { ...tapConfig(sandbox), discovery: 'packaged', state_store_max_kb: 0, store_directory: store } });
    const files = filesUnder(store);
    expect(files.filter((f) => f.directory).map((f) => f.mode.toString(8))).toEqual(files.filter((f) => f.directory).map(() => '700'));
    expect(files.filter((f) => !f.directory).map((f) => f.mode.toString(8))).toEqual(files.filter((f) => !f.directory).map(() => '600'));
    const training = files.find((f) => f.path.includes('training') && f.path.endsWith('.gen'))!.path;
    const raw = readFileSync(training);
    const file = GenerationFile.open(training, { stream: 'training', fingerprint: JSON.parse(raw.subarray(0, raw.indexOf(10)).toString('utf8')).fingerprint as string });
    let keys = '';
    try {
      for await (const block of file.keyBlocks()) keys += block.toString('latin1');
    } finally {
      file.close();
    }
    const records = sandboxRecords(sandbox, 'training');
    expect(keys).toContain(String(records[0].userId));
    for (const record of records.slice(0, 50)) for (const personal of [record.email, record.firstName, record.lastName, record.employeeNumber]) expect(keys.includes(String(personal)) || raw.includes(String(personal)), String(personal).slice(0, 3)).toBe(false);
  });

  it('that the run cannot trust (another personal-data policy changes every record) makes a full pass with ACTIVATE_VERSION, saying why in one line per stream', async () => {
    const store = tempFolder('tap-store-');
    const config: JsonObject = { ...tapConfig(sandbox), discovery: 'packaged', state_store_max_kb: 0, store_directory: store };
    const first = await syncOk({ config });
    const changed = await syncOk({ config: { ...config, personal_data: [{ field: 'email', policy: 'redact' }] }, state: lastState(first.messages) });
    expect(activationsOf(changed.messages).map((m) => m.stream)).toEqual(['training', 'phishing']);
    const sent = recordsOf(changed.messages, 'training');
    expect(sent).toHaveLength(300);
    expect(sent.every((r) => r.email !== sandboxRecords(sandbox, 'training').find((s) => s.userId === r.userId)?.email)).toBe(true);
    expect(changed.stderr.split('\n').filter((line) => line.includes('making a full pass instead of sending only what changed'))).toEqual([
      expect.stringMatching(/training: making a full pass instead of sending only what changed\. The change store.*(fingerprint|other)/i),
      expect.stringMatching(/phishing: making a full pass instead of sending only what changed/),
    ]);
  });

  it('that cannot be made (its folder would be under a file) is one warning, and the run sends every row as before the store', async () => {
    const blocker = join(tempFolder('tap-store-'), 'a-file');
    writeFileSync(blocker, '');
    const run = await syncOk({ config: { ...tapConfig(sandbox), discovery: 'packaged', state_store_max_kb: 0, store_directory: join(blocker, 'store') } });
    expect(recordsOf(run.messages, 'training')).toHaveLength(300);
    // One warning; each stream's plan line says the store is not used.
    expect(run.stderr.split('\n').filter((line) => line.includes('change store') && !line.includes(': plan: '))).toEqual([expect.stringMatching(/cannot be made or written \(ENOTDIR\); set store_directory to a folder this user can write, with room\. This run sends every row it reads, and leavers wait for the full pass\.$/)]);
    expect(run.stderr.split('\n').filter((line) => line.includes(': plan: ')).map((line) => line.split('; ').at(-1))).toEqual(['change store: not used (it could not be opened)', 'change store: not used (it could not be opened)']);
    expect(lastState(run.messages).bookmarks!.training.store).toEqual({ generation: null });
  });

  it('that cannot be made, with generations that live in the state (the default): the run works in a temporary folder, says so, and the next run in a new container sends nothing new', async () => {
    const blocker = join(tempFolder('tap-store-'), 'a-file');
    writeFileSync(blocker, '');
    const config = { ...tapConfig(sandbox), discovery: 'packaged', store_directory: join(blocker, 'store') };
    const first = await syncOk({ config });
    expect(first.stderr).toMatch(/cannot be made or written \(ENOTDIR\); .* The change store works in \S+ instead, keeping generations in the state\./);
    expect(lastState(first.messages).bookmarks!.training.store).toMatchObject({ rows: 300, data: expect.any(String) });
    const next = await syncOk({ config, state: lastState(first.messages) });
    expect(recordsOf(next.messages, 'training')).toEqual([]);
    expect(next.stderr).not.toMatch(/making a full pass/);
  });

  it('whose stream folder cannot be written fails the run before its STATE, naming the stream', async () => {
    const store = tempFolder('tap-store-');
    const config = { ...tapConfig(sandbox), discovery: 'packaged', state_store_max_kb: 0, store_directory: store };
    const first = await syncOk({ config });
    const streamFolder = filesUnder(store).find((f) => f.directory && f.path.endsWith('training'))!.path;
    rmSync(streamFolder, { recursive: true });
    writeFileSync(streamFolder, '');
    const run = await syncTap({ config, state: lastState(first.messages) });
    expect(run.code).toBe(1);
    expect(statesOf(run.messages)).toEqual([]);
    expect(run.stderr.trim().split('\n').at(-1)).toMatch(/^tap-report-dump: error: .*training/);
  });

  it('makes the change pass now when the state dates the last one a month ahead (a host clock that ran ahead), deleting the leavers, with one warning naming the date; the state then holds this run\'s date', async () => {
    const own = await startTestSandbox({ trainingRecords: 200, phishingRecords: 100 });
    try {
      const config = { ...tapConfig(own), discovery: 'packaged', store_directory: tempFolder('tap-store-') };
      const first = await syncOk({ config });
      const second = await syncOk({ config, state: lastState(first.messages) });
      const [day] = own.simulateDays(1);
      expect(day.leavers.length).toBeGreaterThan(0);
      const state = lastState(second.messages);
      const ahead = new Date(Date.now() + 30 * 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z');
      state.bookmarks!.training.change_pass = { at: ahead };
      const run = await syncOk({ config, state });
      expect(run.stderr).toMatch(/training: change pass: reading the whole dump/);
      expect(run.stdout).toContain('_sdc_deleted_at":"');
      expect(run.stderr.split('\n').filter((line) => line.includes('after this run\'s start'))).toEqual([
        expect.stringContaining(`training: the state dates the last change pass ${ahead}, after this run's start (a host clock that ran ahead?); making the change pass now, and the state will hold this run's date`),
      ]);
      expect(Date.parse(lastState(run.messages).bookmarks!.training.change_pass!.at)).toBeLessThanOrEqual(Date.now());
    } finally {
      await own.close();
    }
  });

  it('waits with a due change pass for pass_window: outside it a run sends only what changed; inside it, the pass deletes the leavers', async () => {
    const own = await startTestSandbox({ trainingRecords: 200, phishingRecords: 100 });
    try {
      const config = { ...tapConfig(own), discovery: 'packaged', state_store_max_kb: 0, store_directory: tempFolder('tap-store-') };
      const first = await syncOk({ config });
      const [day] = own.simulateDays(1);
      expect(day.leavers.length).toBeGreaterThan(0);
      // The last passes a day and an hour ago: the change pass fell due an hour ago.
      const state = lastState(first.messages);
      for (const bookmark of Object.values(state.bookmarks!)) bookmark.full_pass!.at = new Date(Date.now() - 25 * 3_600_000).toISOString();
      const hour = new Date().getUTCHours();
      // Hours on either side of now: no run near the turn of an hour falls on the wrong side.
      const window = (from: number, to: number): string => `${String(from % 24).padStart(2, '0')}:00-${String(to % 24).padStart(2, '0')}:00`;
      const outside = await syncOk({ config: { ...config, pass_window: window(hour + 4, hour + 6) }, state });
      expect(outside.stderr).not.toMatch(/change pass/);
      expect(outside.stdout).not.toContain('_sdc_deleted_at":"');
      const inside = await syncOk({ config: { ...config, pass_window: window(hour + 23, hour + 2) }, state });
      expect(inside.stderr).toMatch(/training: change pass: reading the whole dump/);
      expect(inside.stdout).toContain('_sdc_deleted_at":"');
    } finally {
      await own.close();
    }
  });
});

