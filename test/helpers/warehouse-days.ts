import { PassThrough } from 'node:stream';
import { expect } from 'vitest';
import { resolveConfig } from '../../src/config/config.js';
import { discoverStreams } from '../../src/catalog/discovery.js';
import { defaultSelection } from '../../src/catalog/selection.js';
import { runSync } from '../../src/sync/run.js';
import { singer } from '../../src/singer/messages.js';
import { airbyteProtocol } from '../../src/airbyte/messages.js';
import { stateFromAirbyte } from '../../src/airbyte/state.js';
import { createLogger } from '../../src/observe/log.js';
import type { TapState } from '../../src/state.js';
import { canonical } from './records.js';
import { DEMO_TOKEN, rowsByKey, type Sandbox, type Stream, STREAM_NAMES } from './sandbox.js';
import type { JsonObject } from './messages.js';

/**
 * Daily runs on the sandbox's calendar, in process over real HTTP, and the
 * checks that a warehouse mirrors the source after each (test/e2e/warehouse-days.test.ts,
 * store-travels.test.ts).
 */

export const quiet = createLogger({ write: () => undefined });
/** The sandbox's history ends on 2026-01-01: the first run happens at the end of that day. */
export const DAY_0 = Date.parse('2026-01-01T23:59:59Z');

export type Face = 'singer' | 'airbyte';

export interface RunResult {
  stdout: string;
  state: TapState;
  records: number;
}

export function configFor(sandbox: Sandbox, settings: JsonObject): ReturnType<typeof resolveConfig> {
  return resolveConfig({ base_url: sandbox.url, access_token: DEMO_TOKEN, discovery: 'packaged', log_level: 'error', ...settings });
}

/** One run of the tap at `now`, in process, from `state`; its output as text. Through the Airbyte face, every stream as discover offers it (with the extraction cursor). */
export async function runAt(sandbox: Sandbox, face: Face, now: number, state: TapState | undefined, settings: JsonObject = {}, logger = quiet): Promise<RunResult> {
  const config = configFor(sandbox, settings);
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(Buffer.from(chunk)));
  const streams = defaultSelection(discoverStreams(config));
  const protocol = face === 'singer' ? singer : airbyteProtocol(new Set(streams.map((s) => s.descriptor.name)));
  const summaries = await runSync({ config, streams, state, out, protocol, logger, redact: (t) => t, now: () => now });
  const stdout = Buffer.concat(chunks).toString('utf8');
  return { stdout, state: stateOf(stdout, face), records: summaries.reduce((n, s) => n + s.records, 0) };
}

export function stateOf(stdout: string, face: Face): TapState {
  const states = stdout.split('\n').filter((line) => line.startsWith('{"type":"STATE"')).map((line) => JSON.parse(line) as { value?: TapState; state?: unknown });
  return face === 'singer' ? states.at(-1)!.value! : stateFromAirbyte(states.map((s) => s.state), 'run');
}

export type Snapshot = Record<Stream, Map<string, JsonObject>>;

/** Both streams' rows now: taken once a day, it is that day's truth and the next day's yesterday. */
export function snapshot(sandbox: Sandbox): Snapshot {
  return { training: rowsByKey(sandbox, 'training'), phishing: rowsByKey(sandbox, 'phishing') };
}

/** Keys whose row differs between the warehouse and the source (missing, extra or other values). */
export function differences(warehouse: Map<string, JsonObject>, truth: Map<string, JsonObject>): Set<string> {
  const keys = new Set<string>();
  for (const [key, record] of truth) if (warehouse.get(key) === undefined || canonical(warehouse.get(key)) !== canonical(record)) keys.add(key);
  for (const key of warehouse.keys()) if (!truth.has(key)) keys.add(key);
  return keys;
}

/** The rows that changed (new ones included) or left between two snapshots: what a change-only run has to send. */
export function changedOrLeft(yesterday: Snapshot, today: Snapshot): number {
  let count = 0;
  for (const stream of STREAM_NAMES) {
    for (const [key, record] of today[stream]) if (canonical(yesterday[stream].get(key)) !== canonical(record)) count++;
    for (const key of yesterday[stream].keys()) if (!today[stream].has(key)) count++;
  }
  return count;
}

/** RECORD lines of a run's output (delete records included). */
export function recordLines(stdout: string): number {
  return stdout.split('\n').filter((line) => line.startsWith('{"type":"RECORD"')).length;
}

/** Every stream of the warehouse equals the source now. */
export function expectMirror(rows: (stream: Stream) => Map<string, JsonObject>, today: Snapshot, label: string): void {
  for (const stream of STREAM_NAMES) expect([...differences(rows(stream), today[stream])], `${label} ${stream}: rows that differ from the source`).toEqual([]);
}

/** Where a run's output lands: a model warehouse, or a model destination. */
export interface Loader {
  load(stdout: string): void;
  rows(stream: Stream): Map<string, JsonObject>;
}

/** The simulated clock of the daily run after day `d`'s churn. */
export const dayEnd = (d: number): number => DAY_0 + d * 86_400_000;

/** Settings of the run of day `d` (0: the first run), besides the format. */
export type DaySettings = (day: number) => JsonObject;

/**
 * A run each simulated day on `sandbox` (its churn, then the run), loaded into
 * `target`: every run after the first is a change pass (change_pass_interval_days 1),
 * so the warehouse equals the source after every run, corrections and leavers
 * included, and a run emits at most 1.2 times the rows that changed or left.
 */
export async function simulateDays(sandbox: Sandbox, face: Face, format: 'jsonl' | 'csv', target: Loader, days = 8, settings: DaySettings = () => ({})): Promise<{ deleted: number; last: RunResult }> {
  let run = await runAt(sandbox, face, DAY_0, undefined, { format, ...settings(0) });
  target.load(run.stdout);
  let today = snapshot(sandbox);
  expectMirror((stream) => target.rows(stream), today, 'day 0');
  let deleted = 0;
  for (let d = 1; d <= days; d++) {
    const yesterday = today;
    sandbox.simulateDays(1);
    run = await runAt(sandbox, face, dayEnd(d), run.state, { format, ...settings(d) });
    today = snapshot(sandbox);
    expect(run.stdout, `day ${d}: no full pass`).not.toContain('"type":"ACTIVATE_VERSION"');
    expect(recordLines(run.stdout), `day ${d}: records emitted`).toBeLessThanOrEqual(1.2 * changedOrLeft(yesterday, today));
    deleted += (run.stdout.match(/_deleted_at":"/g) ?? []).length;
    target.load(run.stdout);
    expectMirror((stream) => target.rows(stream), today, `${face} ${format} day ${d}`);
  }
  return { deleted, last: run };
}
