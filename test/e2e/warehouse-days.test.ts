import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/config.js';
import { discoverStreams } from '../../src/catalog/discovery.js';
import { catalogMessage } from '../../src/airbyte/catalog.js';
import type { TapState } from '../../src/state.js';
import type { DayChanges } from '../../sandbox/churn.js';
import { ModelWarehouse, type DeletedRows, type Deletes } from '../helpers/model-warehouse.js';
import { tempFolder } from '../helpers/files.js';
import { AirbyteDedupTable, dedupOf } from '../helpers/airbyte-dedup.js';
import { incrementalCatalog, serviceFields, type AirbyteStream } from '../helpers/airbyte.js';
import { keyOf } from '../helpers/records.js';
import { configFor, DAY_0, dayEnd, differences, expectMirror, type Face, type Loader, quiet, recordLines, runAt, simulateDays, snapshot } from '../helpers/warehouse-days.js';
import { PassThrough } from 'node:stream';
import { runSync } from '../../src/sync/run.js';
import { singer } from '../../src/singer/messages.js';
import { createLogger } from '../../src/observe/log.js';
import { defaultSelection } from '../../src/catalog/selection.js';
import { DEMO_TOKEN, KEY_PROPERTIES, rowsByKey, type Sandbox, startTestSandbox, type Stream, STREAM_NAMES } from '../helpers/sandbox.js';
import type { JsonObject } from '../helpers/messages.js';

/**
 * The warehouse mirrors the source, day after day: an organisation churns in
 * the sandbox (joiners, progress, completions, corrections, reassignments,
 * phishing waves, late events, leavers), the tap runs once a simulated day on
 * the sandbox's calendar (in process, over real HTTP), and a model warehouse
 * loads its output as the real targets do (MeltanoLabs target-postgres hard
 * and soft, pipelinewise-target-postgres with hard_delete; an Airbyte
 * append_dedup destination: Destinations v2). With the change store (the
 * default) every daily run is a change pass: the warehouse equals the source
 * after every run, corrections and leavers included, and a run emits at most
 * 1.2 times the rows that changed or left. A run whose output is lost, a
 * wiped store, and a full pass whose dump breaks leave it right too; without
 * the store, corrections and leavers wait for the weekly full pass.
 */

const sandboxes: Sandbox[] = [];
afterAll(async () => {
  await Promise.all(sandboxes.map((s) => s.close()));
});

/** What only a full pass brings without the change store: rows corrected since it (training), and every row of the users who left since it. */
class Pending {
  corrected = new Set<string>();
  leavers = new Set<string>();

  add(day: DayChanges): void {
    for (const key of day.corrected) this.corrected.add(keyOf(key, KEY_PROPERTIES.training));
    for (const user of day.leavers) this.leavers.add(user);
  }

  covers(stream: Stream, key: string, rows: Map<string, JsonObject>): boolean {
    const user = (rows.get(key)?.userId as string | undefined) ?? (JSON.parse(key) as string[])[0];
    return this.leavers.has(user) || (stream === 'training' && this.corrected.has(key));
  }
}

/** A Singer target as the model warehouse: what ACTIVATE_VERSION and delete records do. */
type SingerTarget = { activate: Deletes; deletedRows: DeletedRows };


/** The daily runs of simulateDays on a sandbox of its own. */
async function simulate(face: Face, format: 'jsonl' | 'csv', target: Loader, days = 8): Promise<{ deleted: number }> {
  const sandbox = await startTestSandbox({ seed: 31, trainingRecords: 400, phishingRecords: 400 });
  sandboxes.push(sandbox);
  return simulateDays(sandbox, face, format, target, days);
}

/** The same days without the change store (send_changes_only false): corrections and leavers wait for the weekly full pass. */
async function simulateWithoutStore(format: 'jsonl' | 'csv', target: SingerTarget, days = 8): Promise<void> {
  const settings = { format, send_changes_only: false, full_pass_interval_days: 7 };
  const sandbox = await startTestSandbox({ seed: 31, trainingRecords: 400, phishingRecords: 400 });
  sandboxes.push(sandbox);
  const warehouse = new ModelWarehouse(target.activate, target.deletedRows);
  const pending = new Pending();
  let run = await runAt(sandbox, 'singer', DAY_0, undefined, settings);
  warehouse.load(run.stdout);
  let sawPending = false;
  for (let d = 1; d <= days; d++) {
    const [day] = sandbox.simulateDays(1);
    pending.add(day);
    run = await runAt(sandbox, 'singer', Date.parse(day.now), run.state, settings);
    const today = snapshot(sandbox);
    const activated = run.stdout.includes('"type":"ACTIVATE_VERSION"');
    warehouse.load(run.stdout);
    if (activated) {
      expect(d, 'the full pass falls on day 7').toBe(7);
      pending.corrected.clear();
      pending.leavers.clear();
    }
    for (const stream of STREAM_NAMES) {
      const rows = warehouse.rows(stream);
      const differing = [...differences(rows, today[stream])];
      expect(differing.filter((key) => !pending.covers(stream, key, rows)), `day ${d} ${stream}`).toEqual([]);
      if (differing.length > 0) sawPending = true;
    }
  }
  expect(sawPending).toBe(true);
}

const TARGETS: Record<string, SingerTarget> = {
  'MeltanoLabs target-postgres, hard_delete': { activate: 'hard', deletedRows: 'mark' },
  'MeltanoLabs target-postgres, soft deletes': { activate: 'soft', deletedRows: 'mark' },
  'pipelinewise-target-postgres, hard_delete': { activate: 'ignore', deletedRows: 'remove' },
};

describe.concurrent('the warehouse mirrors the source after every daily run, corrections and leavers included (the change store)', () => {
  it.each([
    ['jsonl', 'MeltanoLabs target-postgres, hard_delete'],
    ['csv', 'MeltanoLabs target-postgres, hard_delete'],
    ['jsonl', 'MeltanoLabs target-postgres, soft deletes'],
    ['jsonl', 'pipelinewise-target-postgres, hard_delete'],
  ] as const)('Singer, %s, into %s: only changes and delete records, at most 1.2x the rows that changed or left', async (format, target) => {
    const { activate, deletedRows } = TARGETS[target];
    const { deleted } = await simulate('singer', format, new ModelWarehouse(activate, deletedRows));
    expect(deleted, 'leavers were deleted by delete records').toBeGreaterThan(0);
  });

  it.each(['jsonl', 'csv'] as const)('Airbyte, %s, append_dedup: changes, and delete records (_ab_cdc_deleted_at) the destination removes', async (format) => {
    const discovered = (JSON.parse(catalogMessage(discoverStreams(resolveConfig({ base_url: 'http://127.0.0.1:1', access_token: DEMO_TOKEN, discovery: 'packaged', format })))) as { catalog: { streams: AirbyteStream[] } }).catalog.streams;
    const destination = new AirbyteDedupTable(dedupOf(incrementalCatalog(discovered)));
    const rows = (stream: Stream): Map<string, JsonObject> => new Map([...destination.rows(stream)].map(([key, data]) => [key, serviceFields(data)]));
    const { deleted } = await simulate('airbyte', format, { load: (stdout) => destination.load(stdout), rows });
    expect(deleted, 'leavers were deleted by delete records').toBeGreaterThan(0);
  });

  it('without the change store (send_changes_only false): corrections and leavers wait for the weekly full pass, and the pass makes the warehouse exact', async () => {
    await simulateWithoutStore('jsonl', TARGETS['MeltanoLabs target-postgres, hard_delete']);
  });
});

describe.concurrent('what the change store survives', () => {
  it('a run whose output never reached the target (its state not kept): the next run, from the older state, sends what it missed', async () => {
    const sandbox = await startTestSandbox({ seed: 33, trainingRecords: 400, phishingRecords: 400 });
    sandboxes.push(sandbox);
    const warehouse = new ModelWarehouse('hard', 'mark');
    const first = await runAt(sandbox, 'singer', DAY_0, undefined);
    warehouse.load(first.stdout);
    sandbox.simulateDays(1);
    const lost = await runAt(sandbox, 'singer', dayEnd(1), first.state);
    expect(recordLines(lost.stdout)).toBeGreaterThan(0);
    // The target failed: neither the records nor the state were kept.
    sandbox.simulateDays(1);
    const next = await runAt(sandbox, 'singer', dayEnd(2), first.state);
    warehouse.load(next.stdout);
    expectMirror((stream) => warehouse.rows(stream), snapshot(sandbox), 'after the lost run');
  });

  it.each(Object.keys(TARGETS))('a reconcile pass with the day\'s leavers, into %s: they get delete records too (before ACTIVATE_VERSION), and the warehouse is exact', async (name) => {
    const sandbox = await startTestSandbox({ seed: 36, trainingRecords: 400, phishingRecords: 400 });
    sandboxes.push(sandbox);
    const { activate, deletedRows } = TARGETS[name];
    const warehouse = new ModelWarehouse(activate, deletedRows);
    const first = await runAt(sandbox, 'singer', DAY_0, undefined);
    warehouse.load(first.stdout);
    const [day] = sandbox.simulateDays(1);
    expect(day.leavers.length).toBeGreaterThan(0);
    const reconcile = await runAt(sandbox, 'singer', dayEnd(1), first.state, { full_pass_interval_days: 0.5 });
    const lines = reconcile.stdout.split('\n');
    const activation = lines.findIndex((line) => line.startsWith('{"type":"ACTIVATE_VERSION","stream":"training"'));
    const deletes = lines.flatMap((line, i) => (line.includes('"_sdc_deleted_at":"') && line.includes('"stream":"training"') ? [i] : []));
    expect(activation).toBeGreaterThan(0);
    expect(deletes.length).toBeGreaterThan(0);
    expect(Math.max(...deletes)).toBeLessThan(activation);
    warehouse.load(reconcile.stdout);
    expectMirror((stream) => warehouse.rows(stream), snapshot(sandbox), `${name} after the reconcile`);
  });

  it('a wiped store folder (the store kept there, not in the state): the next run falls back to a full pass with ACTIVATE_VERSION, saying why, and the warehouse is exact again', async () => {
    const sandbox = await startTestSandbox({ seed: 34, trainingRecords: 400, phishingRecords: 400 });
    sandboxes.push(sandbox);
    const store = tempFolder('tap-store-');
    const warehouse = new ModelWarehouse('hard', 'mark');
    const first = await runAt(sandbox, 'singer', DAY_0, undefined, { state_store_max_kb: 0, store_directory: store });
    warehouse.load(first.stdout);
    sandbox.simulateDays(2);
    rmSync(store, { recursive: true, force: true });
    const lines: string[] = [];
    const after = await runAt(sandbox, 'singer', dayEnd(2), first.state, { state_store_max_kb: 0, store_directory: store }, createLogger({ write: (line) => void lines.push(line) }));
    expect(after.stdout).toContain('"type":"ACTIVATE_VERSION"');
    expect(lines.filter((line) => line.includes('making a full pass instead of sending only what changed'))).toHaveLength(2);
    warehouse.load(after.stdout);
    expectMirror((stream) => warehouse.rows(stream), snapshot(sandbox), 'after the wiped store');
  });
});

/** A run whose every dump attempt is cut (the tap gives up): its output, and the error it ends with. */
async function brokenRun(sandbox: Sandbox, state: TapState, now: number, settings: JsonObject): Promise<string> {
  sandbox.setFaults({ dropAfterBytes: 30_000, dropRate: 1 });
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(Buffer.from(chunk)));
  const config = configFor(sandbox, { compression: 'none', max_retries: 1, backoff_base: 0.01, ...settings });
  await expect(runSync({ config, streams: defaultSelection(discoverStreams(config)), state, out, protocol: singer, logger: quiet, redact: (t) => t, now: () => now })).rejects.toThrow(/training dump: gave up/);
  sandbox.setFaults({ dropAfterBytes: null });
  return Buffer.concat(chunks).toString('utf8');
}

const typesOf = (stdout: string): string[] => stdout.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { type: string }).type);

describe.concurrent('a pass that breaks', () => {
  it('a full pass deletes nothing and keeps its state: the run fails, the warehouse keeps every row, the next run passes in full', async () => {
    const sandbox = await startTestSandbox({ seed: 32, trainingRecords: 400, phishingRecords: 400 });
    sandboxes.push(sandbox);
    const weekly = { full_pass_interval_days: 7 };
    const warehouse = new ModelWarehouse('hard');
    const first = await runAt(sandbox, 'singer', DAY_0, undefined, weekly);
    warehouse.load(first.stdout);
    const days = sandbox.simulateDays(8);
    const before = { training: warehouse.rows('training'), phishing: warehouse.rows('phishing') };
    // Every attempt at a dump is cut: the pass (due: 8 days since the first) cannot read its dump.
    const broken = await brokenRun(sandbox, first.state, Date.parse(days.at(-1)!.now), weekly);
    // No ACTIVATE_VERSION, no record, no STATE: the pass held everything back.
    expect(typesOf(broken).filter((type) => type !== 'SCHEMA')).toEqual([]);
    warehouse.load(broken);
    expect(warehouse.rows('training')).toEqual(before.training);
    expect(warehouse.rows('phishing')).toEqual(before.phishing);

    const retried = await runAt(sandbox, 'singer', Date.parse(days.at(-1)!.now), first.state, weekly);
    expect(retried.stdout).toContain('"type":"ACTIVATE_VERSION"');
    warehouse.load(retried.stdout);
    for (const stream of STREAM_NAMES) expect(differences(warehouse.rows(stream), rowsByKey(sandbox, stream)).size, stream).toBe(0);
  });

  it('a change pass sends no delete record and no STATE: what it sent were upserts, the warehouse keeps every row the source has, and the next run makes it exact', async () => {
    const sandbox = await startTestSandbox({ seed: 35, trainingRecords: 400, phishingRecords: 400 });
    sandboxes.push(sandbox);
    const warehouse = new ModelWarehouse('ignore', 'remove');
    const first = await runAt(sandbox, 'singer', DAY_0, undefined);
    warehouse.load(first.stdout);
    const held = { training: new Set(warehouse.rows('training').keys()), phishing: new Set(warehouse.rows('phishing').keys()) };
    const [day] = sandbox.simulateDays(1);
    const broken = await brokenRun(sandbox, first.state, dayEnd(1), {});
    expect(broken).not.toContain('_sdc_deleted_at":"');
    expect(typesOf(broken)).not.toContain('STATE');
    warehouse.load(broken);
    // Every row the warehouse held that the source still has is still there.
    for (const stream of STREAM_NAMES) for (const key of rowsByKey(sandbox, stream).keys()) if (held[stream].has(key)) expect(warehouse.rows(stream).has(key), `${stream} ${key}`).toBe(true);
    expect(day.leavers.length, 'the day had leavers to delete').toBeGreaterThan(0);

    const retried = await runAt(sandbox, 'singer', dayEnd(1), first.state);
    warehouse.load(retried.stdout);
    expectMirror((stream) => warehouse.rows(stream), snapshot(sandbox), 'after the retried change pass');
  });
});
