import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { canonical } from './records.js';
import { statesOf, type JsonObject, type SingerMessage } from './messages.js';
import { SCOPE, type Stream } from './sandbox.js';
import type { TapRun } from './cli.js';

/**
 * Shared pieces of the resilience tests (issue 4, "never lose a record"):
 * fast retry settings, multiset comparison of records, the one-line error
 * check, distinctive tokens (the hand-made dump server is in fake-server.ts).
 */

export const TRAINING_SCOPE = SCOPE.training;
export const PHISHING_SCOPE = SCOPE.phishing;
export const ALL_SCOPES = Object.values(SCOPE);

/** A token nobody could confuse with other output: `tok-SECRET-<label>-<random hex>`. */
export function secretToken(label: string): string {
  return `tok-SECRET-${label}-${randomBytes(6).toString('hex')}`;
}

/** Retry settings that keep a test fast: tiny backoff, many retries. */
export const FAST_RETRIES = { backoff_base: 0.01, max_retries: 30, retry_max_elapsed: 60 } as const;

/** Multiset difference of records as canonical JSON: what is missing from `actual`, and what is in it too often. */
export function multisetDiff(actual: readonly JsonObject[], expected: readonly JsonObject[]): { missing: string[]; extra: string[] } {
  const counts = new Map<string, number>();
  for (const r of expected) {
    const key = canonical(r);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const extra: string[] = [];
  for (const r of actual) {
    const key = canonical(r);
    const n = counts.get(key) ?? 0;
    if (n === 0) extra.push(key);
    else counts.set(key, n - 1);
  }
  const missing: string[] = [];
  for (const [key, n] of counts) for (let i = 0; i < n; i++) missing.push(key);
  return { missing, extra };
}

/** Fails unless `actual` holds exactly the records of `expected`, each as often (no loss, no duplicates, nothing invented). */
export function expectSameRecords(actual: readonly JsonObject[], expected: readonly JsonObject[], label: string): void {
  const { missing, extra } = multisetDiff(actual, expected);
  const sample = (list: string[]): string => list.slice(0, 2).map((s) => s.slice(0, 160)).join(' | ');
  expect(missing.length, `${label}: ${missing.length} records missing, e.g. ${sample(missing)}`).toBe(0);
  expect(extra.length, `${label}: ${extra.length} records duplicated or not in the dump, e.g. ${sample(extra)}`).toBe(0);
  expect(actual.length, `${label}: record count`).toBe(expected.length);
}

/** Fails unless every record of `expected` is in `actual` (duplicates allowed), and `actual` holds nothing else than `allowed`. */
export function expectNoneMissing(actual: readonly JsonObject[], expected: readonly JsonObject[], label: string): void {
  const have = new Set(actual.map(canonical));
  const missing = expected.map(canonical).filter((key) => !have.has(key));
  expect(missing.length, `${label}: ${missing.length} records missing, e.g. ${missing.slice(0, 2).join(' | ').slice(0, 300)}`).toBe(0);
}

/** The multiset of canonical records has no key twice. */
export function duplicateCount(records: readonly JsonObject[]): number {
  return records.length - new Set(records.map(canonical)).size;
}

/**
 * The run's error, which must be exactly one line `tap-report-dump: error: ...`
 * and the last line of stderr (with `stack`, TAP_REPORT_DUMP_DEBUG's stack
 * trace may follow it).
 */
export function errorLine(run: Pick<TapRun, 'stderr'>, options: { stack?: boolean } = {}): string {
  const lines = run.stderr.split('\n').filter((line) => line !== '');
  const errors = lines.filter((line) => line.startsWith('tap-report-dump: '));
  expect(errors, `expected exactly one error line; stderr:\n${run.stderr.slice(-3000)}`).toHaveLength(1);
  expect(errors[0]).toMatch(/^tap-report-dump: error: \S/);
  if (!options.stack) expect(lines.at(-1), 'the error is the last line of stderr').toBe(errors[0]);
  return errors[0];
}

/** Every STATE message's bookmark for `stream` (undefined when the STATE has none). */
export function bookmarksOf(messages: readonly SingerMessage[], stream: Stream): Array<JsonObject | undefined> {
  return statesOf(messages).map((m) => m.value.bookmarks?.[stream] as JsonObject | undefined);
}

/** Fails when `secret` (or, for long secrets, its distinctive random tail) appears in stdout or stderr. */
export function expectNoSecret(run: Pick<TapRun, 'stdout' | 'stderr'>, secret: string, label: string): void {
  expect(run.stdout.includes(secret), `${label}: the token appears on stdout`).toBe(false);
  expect(run.stderr.includes(secret), `${label}: the token appears on stderr:\n${run.stderr.slice(-2000)}`).toBe(false);
  const tail = secret.slice(-12);
  expect(run.stdout.includes(tail) || run.stderr.includes(tail), `${label}: the token's random tail appears in the output`).toBe(false);
}

/** A minimal catalog selecting `streams`, synced in that order (schemas come from the tap's own files). */
export function catalogOf(streams: readonly Stream[]): unknown {
  return { streams: streams.map((stream) => ({ tap_stream_id: stream, stream, metadata: [{ breadcrumb: [], metadata: { selected: true } }] })) };
}
