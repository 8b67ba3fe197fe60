import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { syncOk, syncTap } from '../helpers/cli.js';
import { ModelWarehouse } from '../helpers/model-warehouse.js';
import { activationsOf, lastState, recordMessages, type JsonObject, type StateValue } from '../helpers/messages.js';
import { canonical } from '../helpers/records.js';
import { rowsByKey, type Sandbox, startTestSandbox, tapConfig } from '../helpers/sandbox.js';

/**
 * A full pass deletes only what the source no longer has, through the CLI
 * against the sandbox: a pass of two reads that saw the source change
 * between them reads again (or deletes nothing); a pass with no baseline in
 * a state that shows a loaded table records one instead of activating; a
 * last pass dated in the future is due now; a service that refuses the open
 * rows' filter costs the run that read only; a table version with no
 * successor is refused before anything is emitted.
 */

const sandboxes: Sandbox[] = [];

beforeAll(async () => {
  await ensureBuilt();
});

afterAll(async () => {
  await Promise.all(sandboxes.map((s) => s.close()));
});

async function sandbox(records = 400): Promise<Sandbox> {
  const started = await startTestSandbox({ trainingRecords: records, phishingRecords: 40 });
  sandboxes.push(started);
  return started;
}

const daysAgo = (days: number): string => new Date(Date.now() - days * 86_400_000).toISOString();

/** The state with the training stream's last full pass moved to `at` (a pass falls due, or lies in the future). */
function passAt(state: StateValue, at: string): StateValue {
  const moved = structuredClone(state);
  moved.bookmarks!.training.full_pass!.at = at;
  return moved;
}

/** Whether the warehouse's training rows are exactly the sandbox's. */
function mirrors(warehouse: ModelWarehouse, s: Sandbox): boolean {
  const held = warehouse.rows('training');
  const truth = rowsByKey(s, 'training');
  return held.size === truth.size && [...truth].every(([key, row]) => held.has(key) && canonical(held.get(key)) === canonical(row));
}

describe.concurrent('a full pass of two reads (start_date: the completed rows, then the open ones)', () => {
  const config = (s: Sandbox): JsonObject => ({ ...tapConfig(s), discovery: 'packaged', full_pass_interval_days: 7, start_date: '2020-01-01' });

  it('whose source changed between the reads reads the pass again, and then deletes only what the source no longer has', async () => {
    const s = await sandbox();
    const warehouse = new ModelWarehouse('hard');
    const first = await syncOk({ config: config(s) });
    warehouse.load(first.stdout);
    expect(mirrors(warehouse, s)).toBe(true);
    // A simulated day lands between the pass's two reads: rows open at the first read complete before the second.
    s.beforeRequest(2, () => s.simulateDays(1));
    const pass = await syncOk({ config: config(s), state: passAt(lastState(first.messages), daysAgo(8)) });
    warehouse.load(pass.stdout);
    expect(pass.stderr).toMatch(/training: the source changed while the full pass read it \(the answer to its full pass read changed after it was read \(Last-Modified .+ then\)\); reading the pass again \(attempt 2 of 3\)/);
    expect(activationsOf(pass.messages, 'training')).toHaveLength(1);
    expect(mirrors(warehouse, s)).toBe(true);
    // Each attempt asked its first read again with If-Modified-Since: the second attempt's was answered 304.
    expect(s.stats().byStatus['304']).toBeGreaterThanOrEqual(1);
  });

  it('whose source changes during every attempt sends its records without ACTIVATE_VERSION, deleting nothing, and the next pass makes the table exact', async () => {
    const s = await sandbox();
    const warehouse = new ModelWarehouse('hard');
    const first = await syncOk({ config: config(s) });
    warehouse.load(first.stdout);
    // An attempt is three requests: the completed rows, the open rows, the completed rows asked again; each attempt sees a change before its second.
    for (const request of [2, 5, 8]) s.beforeRequest(request, () => s.update('training', 3));
    const pass = await syncOk({ config: config(s), state: passAt(lastState(first.messages), daysAgo(8)) });
    warehouse.load(pass.stdout);
    expect(activationsOf(pass.messages, 'training')).toEqual([]);
    expect(pass.stderr).toMatch(/training: the full pass sends its \d+ records without ACTIVATE_VERSION, so the target deletes nothing: the answer to its full pass read changed after it was read .*, so a row that changed between its reads may be in none/);
    // Nothing the source still has went missing.
    for (const key of rowsByKey(s, 'training').keys()) expect(warehouse.rows('training').has(key), key).toBe(true);
    const next = await syncOk({ config: config(s), state: passAt(lastState(pass.messages), daysAgo(8)) });
    warehouse.load(next.stdout);
    expect(activationsOf(next.messages, 'training')).toHaveLength(1);
    expect(mirrors(warehouse, s)).toBe(true);
  });
});

describe.concurrent('a full pass with nothing to judge its row count by', () => {
  it('when the state shows the table was loaded (a bookmark, no full_pass): sends its records without ACTIVATE_VERSION, naming both facts, and records the baseline the next pass activates on', async () => {
    const s = await sandbox();
    const config = { ...tapConfig(s), discovery: 'packaged', full_pass_interval_days: 7 };
    const first = await syncOk({ config });
    const upgraded = structuredClone(lastState(first.messages));
    delete upgraded.bookmarks!.training.full_pass;
    const pass = await syncOk({ config, state: upgraded });
    expect(activationsOf(pass.messages, 'training')).toEqual([]);
    expect(recordMessages(pass.messages, 'training')).toHaveLength(400);
    expect(pass.stderr).toContain('training: the full pass sends its 400 records without ACTIVATE_VERSION, so the target deletes nothing: the state shows the table was loaded before but holds no row count of an earlier pass to judge 400 rows by; 400 is now that count, and the next pass activates if it holds at least full_pass_min_ratio (0.5) of it');
    const recorded = lastState(pass.messages);
    expect(recorded.bookmarks!.training.full_pass).toMatchObject({ rows: 400 });
    const next = await syncOk({ config, state: passAt(recorded, daysAgo(8)) });
    expect(activationsOf(next.messages, 'training')).toHaveLength(1);
  });

  it('on a first run (no state: a new warehouse) activates as before', async () => {
    const s = await sandbox(50);
    const run = await syncOk({ config: { ...tapConfig(s), discovery: 'packaged', full_pass_interval_days: 7 } });
    expect(activationsOf(run.messages).map((m) => m.stream)).toEqual(['training', 'phishing']);
  });
});

describe.concurrent('the state of the last full pass', () => {
  it('dated a year ahead (a host clock that ran ahead) makes the pass due now, with one warning naming the date, and the state then holds this run\'s date', async () => {
    const s = await sandbox(50);
    const config = { ...tapConfig(s), discovery: 'packaged', full_pass_interval_days: 7 };
    const first = await syncOk({ config });
    const ahead = new Date(Date.now() + 365 * 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const run = await syncOk({ config, state: passAt(lastState(first.messages), ahead) });
    expect(activationsOf(run.messages, 'training')).toHaveLength(1);
    expect(run.stderr.split('\n').filter((line) => line.includes('after this run\'s start'))).toEqual([
      expect.stringContaining(`training: the state dates the last full pass ${ahead}, after this run's start (a host clock that ran ahead?); making the pass now, and the state will hold this run's date`),
    ]);
    expect(Date.parse(lastState(run.messages).bookmarks!.training.full_pass!.at)).toBeLessThanOrEqual(Date.now());
  });

  it('with a table version that has no safe integer after it is refused before anything is emitted (exit 2), naming the member and the fix', async () => {
    const s = await sandbox(50);
    const config = { ...tapConfig(s), discovery: 'packaged', full_pass_interval_days: 7 };
    const first = await syncOk({ config });
    const state = passAt(lastState(first.messages), daysAgo(8));
    state.bookmarks!.training.full_pass!.version = Number.MAX_SAFE_INTEGER;
    const run = await syncTap({ config, state });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n').at(-1)).toMatch(/^tap-report-dump: error: State: bookmarks\.training\.full_pass\.version 9007199254740991 leaves no room for a later table version .*Fix or remove bookmarks\.training\.full_pass; the next run then makes a full pass with a version from the clock\.$/);
  });
});

describe.concurrent('a service that refuses filter[completed]=false (HTTP 400)', () => {
  async function refusing(): Promise<Sandbox> {
    const s = await sandbox();
    s.setFaults({ rejectFilters: ['completed'] });
    return s;
  }

  it('costs an incremental run only its open rows: the new records and STATE go out, exit 0, one warning naming refresh_open_rows and no setting the user did not set', async () => {
    const s = await refusing();
    const config = { ...tapConfig(s), discovery: 'packaged', full_pass_interval_days: 7 };
    const first = await syncOk({ config });
    s.append('training', 5);
    const run = await syncOk({ config, state: lastState(first.messages) });
    expect(recordMessages(run.messages, 'training')).toHaveLength(5);
    expect(lastState(run.messages).bookmarks!.training.replication_key_value).not.toBe(lastState(first.messages).bookmarks!.training.replication_key_value);
    const warnings = run.stderr.split('\n').filter((line) => line.includes('refused'));
    expect(warnings).toEqual([expect.stringContaining('training: the service refused the read of the open rows with HTTP 400; this run goes on without it')]);
    expect(warnings[0]).toContain('set refresh_open_rows to false to stop asking');
    expect(run.stderr).not.toMatch(/start_date|filters\.training/);
    // And the run after it works the same way.
    expect((await syncTap({ config, state: lastState(run.messages) })).code).toBe(0);
  });

  it('keeps a pass of two reads from activating (the open rows would be deleted); with refresh_open_rows false the pass is one read and no warning comes', async () => {
    const s = await refusing();
    const config = { ...tapConfig(s), discovery: 'packaged', full_pass_interval_days: 7, start_date: '2020-01-01' };
    const pass = await syncOk({ config });
    expect(activationsOf(pass.messages, 'training')).toEqual([]);
    expect(pass.stderr).toContain('training: the full pass sends its');
    expect(pass.stderr).toContain('the service refused the open rows read, and the rows it would have held must not be deleted for it');
    const off = await syncOk({ config: { ...config, refresh_open_rows: false } });
    expect(activationsOf(off.messages, 'training')).toHaveLength(1);
    expect(off.stderr).not.toMatch(/refused/);
  });
});
