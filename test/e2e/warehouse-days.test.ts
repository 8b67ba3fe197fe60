import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/config.js';
import { discoverStreams } from '../../src/catalog/discovery.js';
import { defaultSelection } from '../../src/catalog/selection.js';
import { PHISHING, TRAINING } from '../../src/catalog/reports.js';
import { runSync } from '../../src/sync/run.js';
import { singer } from '../../src/singer/messages.js';
import { airbyteProtocol } from '../../src/airbyte/messages.js';
import { catalogMessage } from '../../src/airbyte/catalog.js';
import { stateFromAirbyte } from '../../src/airbyte/state.js';
import { createLogger } from '../../src/observe/log.js';
import type { TapState } from '../../src/state.js';
import type { DayChanges } from '../../sandbox/churn.js';
import { ModelWarehouse, type Deletes } from '../helpers/model-warehouse.js';
import { AirbyteDedupTable, dedupOf } from '../helpers/airbyte-dedup.js';
import { incrementalCatalog, serviceFields, type AirbyteStream } from '../helpers/airbyte.js';
import { canonical, keyOf } from '../helpers/records.js';
import { DEMO_TOKEN, KEY_PROPERTIES, openRowsFilters, rowsByKey, type Sandbox, startTestSandbox, type Stream, STREAM_NAMES } from '../helpers/sandbox.js';
import type { JsonObject } from '../helpers/messages.js';

/**
 * The warehouse mirrors the source, day after day: an organisation churns in
 * the sandbox (joiners, progress, completions, corrections, reassignments,
 * phishing waves, late events, leavers), the tap runs once a simulated day on
 * the sandbox's calendar (in process, over real HTTP), and a model warehouse
 * loads its output as Singer SQL targets do. After every run the warehouse
 * equals the sandbox but for what only a full pass can bring (corrections
 * and leavers since the last one); after the periodic full pass it equals it
 * exactly. In JSONL and CSV, with hard and soft deletes, and through the
 * Airbyte face into a model of an append_dedup destination (Destinations v2:
 * latest row per key by cursor, then extraction time; open rows and the
 * event window; its deletions need a full refresh with overwrite). A full
 * pass whose dump breaks deletes nothing.
 */

const sandboxes: Sandbox[] = [];
afterAll(async () => {
  await Promise.all(sandboxes.map((s) => s.close()));
});

const quiet = createLogger({ write: () => undefined });
/** The sandbox's history ends on 2026-01-01: the first run happens at the end of that day. */
const DAY_0 = Date.parse('2026-01-01T23:59:59Z');

type Face = 'singer' | 'airbyte';

interface RunResult {
  stdout: string;
  state: TapState;
  records: number;
}

function configFor(sandbox: Sandbox, settings: JsonObject): ReturnType<typeof resolveConfig> {
  return resolveConfig({ base_url: sandbox.url, access_token: DEMO_TOKEN, discovery: 'packaged', log_level: 'error', ...settings });
}

/** One run of the tap at `now`, in process, from `state`; its output as text. Through the Airbyte face, every stream as discover offers it (with the extraction cursor). */
async function runAt(sandbox: Sandbox, face: Face, now: number, state: TapState | undefined, settings: JsonObject = {}): Promise<RunResult> {
  const config = configFor(sandbox, settings);
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(Buffer.from(chunk)));
  const streams = defaultSelection(discoverStreams(config));
  const protocol = face === 'singer' ? singer : airbyteProtocol(new Set(streams.map((s) => s.descriptor.name)));
  const summaries = await runSync({ config, streams, state, out, protocol, logger: quiet, redact: (t) => t, now: () => now });
  const stdout = Buffer.concat(chunks).toString('utf8');
  return { stdout, state: stateOf(stdout, face), records: summaries.reduce((n, s) => n + s.records, 0) };
}

function stateOf(stdout: string, face: Face): TapState {
  const states = stdout.split('\n').filter((line) => line.startsWith('{"type":"STATE"')).map((line) => JSON.parse(line) as { value?: TapState; state?: unknown });
  return face === 'singer' ? states.at(-1)!.value! : stateFromAirbyte(states.map((s) => s.state), 'run');
}

type Snapshot = Record<Stream, Map<string, JsonObject>>;

/** Both streams' rows now: taken once a day, it is that day's truth and the next day's yesterday. */
function snapshot(sandbox: Sandbox): Snapshot {
  return { training: rowsByKey(sandbox, 'training'), phishing: rowsByKey(sandbox, 'phishing') };
}

/** Keys whose row differs between the warehouse and the source (missing, extra or other values). */
function differences(warehouse: Map<string, JsonObject>, truth: Map<string, JsonObject>): Set<string> {
  const keys = new Set<string>();
  for (const [key, record] of truth) if (warehouse.get(key) === undefined || canonical(warehouse.get(key)) !== canonical(record)) keys.add(key);
  for (const key of warehouse.keys()) if (!truth.has(key)) keys.add(key);
  return keys;
}

/** What only a full pass brings: rows corrected since it (training), and every row of the users who left since it. */
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

/**
 * What a daily run has to send at most: the rows that changed since
 * yesterday, the open training rows and the phishing rows inside the event
 * window (a run emits at most about 1.2 times this; a full pass, the dump).
 */
function dailyWork(sandbox: Sandbox, yesterday: Snapshot, today: Snapshot, now: number): number {
  let changed = 0;
  for (const stream of STREAM_NAMES) for (const [key, record] of today[stream]) if (canonical(yesterday[stream].get(key)) !== canonical(record)) changed++;
  const open = [...sandbox.records('training', openRowsFilters(TRAINING.openRows))].length;
  const window = [...sandbox.records('phishing', { sentAt: `>=${new Date(now - PHISHING.eventWindowDays * 86_400_000).toISOString()}` })].length;
  return changed + open + window;
}

async function simulate(face: Face, format: 'jsonl' | 'csv', deletes: Deletes, days = 8): Promise<void> {
  const sandbox = await startTestSandbox({ seed: 31, trainingRecords: 400, phishingRecords: 400 });
  sandboxes.push(sandbox);
  const warehouse = new ModelWarehouse(deletes);
  const pending = new Pending();
  let run = await runAt(sandbox, face, DAY_0, undefined, { format });
  warehouse.load(run.stdout);
  // The tap only reads: the sandbox's rows change in simulateDays alone, so one snapshot a day serves as that day's truth and the next day's yesterday.
  let today = snapshot(sandbox);
  for (const stream of STREAM_NAMES) expect(differences(warehouse.rows(stream), today[stream]).size, `day 0 ${stream}`).toBe(0);
  let sawPending = false;
  for (let d = 1; d <= days; d++) {
    const yesterday = today;
    const [day] = sandbox.simulateDays(1);
    pending.add(day);
    run = await runAt(sandbox, face, Date.parse(day.now), run.state, { format });
    today = snapshot(sandbox);
    const activated = run.stdout.includes('"type":"ACTIVATE_VERSION"');
    if (!activated) expect(run.records, `day ${d}: records emitted`).toBeLessThanOrEqual(1.2 * dailyWork(sandbox, yesterday, today, Date.parse(day.now)));
    warehouse.load(run.stdout);
    if (activated) {
      // The periodic full pass, 7 days after the first: the warehouse equals the source.
      expect(d, 'the full pass falls on day 7').toBe(7);
      pending.corrected.clear();
      pending.leavers.clear();
    }
    for (const stream of STREAM_NAMES) {
      const rows = warehouse.rows(stream);
      const differing = [...differences(rows, today[stream])];
      const wrong = differing.filter((key) => !pending.covers(stream, key, rows));
      expect(wrong, `${face} ${format} day ${d} ${stream}: rows that differ from the source`).toEqual([]);
      if (differing.length > 0) sawPending = true;
    }
    if (face === 'singer' && deletes !== 'ignore' && d === 7) expect(warehouse.activations).toBe(4);
  }
  // Corrections and leavers waited for the pass: the comparison was not empty-handed.
  expect(sawPending).toBe(true);
}

describe.concurrent('the warehouse mirrors the source, a run a simulated day for eight days', () => {
  it.each([
    ['jsonl', 'hard'],
    ['csv', 'hard'],
    ['jsonl', 'soft'],
  ] as const)('Singer, %s, %s deletes: equal but for corrections and leavers pending a full pass; equal after the pass on day 7', async (format, deletes) => {
    await simulate('singer', format, deletes);
  });

  it.each(['jsonl', 'csv'] as const)('Airbyte, %s, append_dedup: new assignments, progress, completions, reassignments and late events arrive every run (deletions are a full refresh\'s)', async (format) => {
    const sandbox = await startTestSandbox({ seed: 31, trainingRecords: 400, phishingRecords: 400 });
    sandboxes.push(sandbox);
    // Deduped by the primary key and cursor discover offers, as the platform configures a source-defined cursor.
    const discovered = (JSON.parse(catalogMessage(discoverStreams(configFor(sandbox, { format })))) as { catalog: { streams: AirbyteStream[] } }).catalog.streams;
    const destination = new AirbyteDedupTable(dedupOf(incrementalCatalog(discovered)));
    const pending = new Pending();
    let run = await runAt(sandbox, 'airbyte', DAY_0, undefined, { format });
    destination.load(run.stdout);
    let reassigned = 0;
    for (let d = 1; d <= 6; d++) {
      const [day] = sandbox.simulateDays(1);
      pending.add(day);
      reassigned += day.training.reassigned;
      run = await runAt(sandbox, 'airbyte', Date.parse(day.now), run.state, { format });
      expect(run.stdout).not.toContain('ACTIVATE_VERSION');
      destination.load(run.stdout);
      for (const stream of STREAM_NAMES) {
        const rows = new Map([...destination.rows(stream)].map(([key, data]) => [key, serviceFields(data)]));
        const wrong = [...differences(rows, rowsByKey(sandbox, stream))].filter((key) => !pending.covers(stream, key, rows));
        expect(wrong, `day ${d} ${stream}`).toEqual([]);
      }
    }
    // Completed rows reopened (completedAt back to null) were among the changes: the ones a completedAt cursor would have kept completed.
    expect(reassigned, 'training rows reassigned over the six days').toBeGreaterThan(0);
  });
});

describe.concurrent('a full pass that breaks', () => {
  it('deletes nothing and keeps its state: the run fails, the warehouse keeps every row, the next run passes in full', async () => {
    const sandbox = await startTestSandbox({ seed: 32, trainingRecords: 400, phishingRecords: 400 });
    sandboxes.push(sandbox);
    const warehouse = new ModelWarehouse('hard');
    const first = await runAt(sandbox, 'singer', DAY_0, undefined);
    warehouse.load(first.stdout);
    const days = sandbox.simulateDays(8);
    const before = { training: warehouse.rows('training'), phishing: warehouse.rows('phishing') };
    // Every attempt at a dump is cut: the pass (due: 8 days since the first) cannot read its dump.
    sandbox.setFaults({ dropAfterBytes: 30_000, dropRate: 1 });
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (chunk: Buffer) => chunks.push(Buffer.from(chunk)));
    const config = resolveConfig({ base_url: sandbox.url, access_token: DEMO_TOKEN, discovery: 'packaged', compression: 'none', max_retries: 1, backoff_base: 0.01 });
    await expect(runSync({ config, streams: defaultSelection(discoverStreams(config)), state: first.state, out, protocol: singer, logger: quiet, redact: (t) => t, now: () => Date.parse(days.at(-1)!.now) })).rejects.toThrow(/training dump: gave up/);
    const broken = Buffer.concat(chunks).toString('utf8');
    // No ACTIVATE_VERSION, no record, no STATE: the pass held everything back.
    expect(broken.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { type: string }).type).filter((type) => type !== 'SCHEMA')).toEqual([]);
    warehouse.load(broken);
    expect(warehouse.rows('training')).toEqual(before.training);
    expect(warehouse.rows('phishing')).toEqual(before.phishing);

    sandbox.setFaults({ dropAfterBytes: null });
    const retried = await runAt(sandbox, 'singer', Date.parse(days.at(-1)!.now), first.state);
    expect(retried.stdout).toContain('"type":"ACTIVATE_VERSION"');
    warehouse.load(retried.stdout);
    for (const stream of STREAM_NAMES) expect(differences(warehouse.rows(stream), rowsByKey(sandbox, stream)).size, stream).toBe(0);
  });
});
