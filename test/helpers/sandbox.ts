import { startSandbox, DEMO_TOKEN, type Sandbox, type SandboxOptions } from '../../sandbox/server.js';
import { FIXED_ANCHOR } from '../../sandbox/placement.js';
import { PHISHING, REPORTS, TRAINING, type StreamDescriptor, type StreamName } from '../../src/catalog/reports.js';
import type { JsonObject } from './messages.js';
import { keyOf } from './records.js';

export { DEMO_TOKEN, FIXED_ANCHOR };
export type { Sandbox };

/** The sandbox in the test process, and what the tests need to know of its streams (read from the stream descriptors). */

export const STREAM_NAMES: readonly StreamName[] = REPORTS.map((r) => r.name);
export type Stream = StreamName;
export const REPLICATION_KEY = Object.fromEntries(REPORTS.map((r) => [r.name, r.replicationKey])) as Record<Stream, string>;
export const KEY_PROPERTIES = Object.fromEntries(REPORTS.map((r) => [r.name, [...r.keyProperties]])) as Record<Stream, string[]>;
/** Dump path of each stream, without the format suffix. */
export const DUMP_PATH = Object.fromEntries(REPORTS.map((r) => [r.name, r.path])) as Record<Stream, string>;
export const SCOPE = Object.fromEntries(REPORTS.map((r) => [r.name, r.scope])) as Record<Stream, string>;

/** A descriptor's open rows (read again on every incremental run) as sandbox filters. */
export function openRowsFilters(openRows: NonNullable<StreamDescriptor['openRows']>): Record<string, string> {
  return { [openRows.filter]: openRows.value };
}

/**
 * A quiet sandbox on a free port with a small dataset, its dates at the fixed
 * anchor (those the tests were written against, whatever the day they run);
 * `anchor: null` places them before the clock, as the CLI sandbox does.
 */
export function startTestSandbox(options: Partial<SandboxOptions> = {}): Promise<Sandbox> {
  return startSandbox({ trainingRecords: 400, phishingRecords: 400, port: 0, log: () => {}, anchor: FIXED_ANCHOR, ...options });
}

/** A sandbox accepting `full` (both dump scopes) and `trainingOnly` (the training scope alone), and no demo token. */
export function startScopedSandbox(tokens: { full: string; trainingOnly: string }, records = 50): Promise<Sandbox> {
  return startTestSandbox({
    trainingRecords: records,
    phishingRecords: records,
    tokens: [
      { token: tokens.full, scopes: [TRAINING.scope, PHISHING.scope] },
      { token: tokens.trainingOnly, scopes: [TRAINING.scope] },
    ],
  });
}

export function sandboxRecords(sandbox: Sandbox, stream: Stream, filters?: Record<string, string>): JsonObject[] {
  return [...sandbox.records(stream, filters)];
}

/** The sandbox's rows of a stream now, by key: the same key as the model warehouse's rows, so the two maps compare. */
export function rowsByKey(sandbox: Sandbox, stream: Stream): Map<string, JsonObject> {
  return new Map(sandboxRecords(sandbox, stream).map((record) => [keyOf(record, KEY_PROPERTIES[stream]), record]));
}

export function tapConfig(sandbox: Sandbox, extra: JsonObject = {}): JsonObject {
  return { base_url: sandbox.url, access_token: DEMO_TOKEN, ...extra };
}

/**
 * A sandbox's training dump as bytes, and its records, for a purpose-built
 * server to serve (cut, dripped, reframed); the sandbox joins `open`, to be
 * closed after the tests.
 */
export async function trainingDump(open: Sandbox[], records: number, format: 'jsonl' | 'csv' = 'jsonl'): Promise<{ body: Buffer; expected: JsonObject[] }> {
  const sandbox = await startTestSandbox({ trainingRecords: records, phishingRecords: 0 });
  open.push(sandbox);
  return { body: Buffer.from(sandbox.dump('training', format)), expected: sandboxRecords(sandbox, 'training') };
}
