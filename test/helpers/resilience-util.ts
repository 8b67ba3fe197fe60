import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import {
  canonical,
  statesOf,
  type JsonObject,
  type SingerMessage,
  type Stream,
  type TapRun,
} from './tap.js';

/**
 * Shared pieces of the resilience tests (issue 4, "never lose a record"):
 * fast retry settings, multiset comparison of records, the one-line error
 * check, distinctive tokens, and a tiny HTTP server serving hand-made dumps.
 */

export const TRAINING_SCOPE = 'report:training:read';
export const PHISHING_SCOPE = 'report:phishing:read';
export const ALL_SCOPES = [TRAINING_SCOPE, PHISHING_SCOPE];

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

// ------------------------------------------------------------------ fake dump server

export interface FakeRequest {
  path: string;
  query: string;
  headers: IncomingMessage['headers'];
}

export type FakeHandler = (req: IncomingMessage, res: ServerResponse, info: { path: string; query: string; nth: number }) => void | Promise<void>;

export interface FakeServer {
  readonly url: string;
  readonly requests: FakeRequest[];
  close(): Promise<void>;
}

/**
 * A tiny real HTTP server on 127.0.0.1 (port 0). `handler` answers every
 * request; `nth` counts requests per path from 1.
 */
export async function startFakeServer(handler: FakeHandler): Promise<FakeServer> {
  const requests: FakeRequest[] = [];
  const perPath = new Map<string, number>();
  const server = createServer((req, res) => {
    res.on('error', () => undefined);
    const target = req.url ?? '/';
    const q = target.indexOf('?');
    const path = q < 0 ? target : target.slice(0, q);
    const query = q < 0 ? '' : target.slice(q + 1);
    requests.push({ path, query, headers: req.headers });
    const nth = (perPath.get(path) ?? 0) + 1;
    perPath.set(path, nth);
    Promise.resolve(handler(req, res, { path, query, nth })).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export const FAKE_LAST_MODIFIED = 'Wed, 01 Jan 2025 00:00:00 GMT';

export const DUMP_PATH = { training: '/public/v1/report/training/dump', phishing: '/public/v1/report/phishing/dump' } as const;

/** Sends a complete 200 dump body (chunked), with Last-Modified. */
export function sendDump(res: ServerResponse, body: string | Buffer, contentType = 'application/jsonl', lastModified = FAKE_LAST_MODIFIED): void {
  res.writeHead(200, { 'Content-Type': contentType, 'Last-Modified': lastModified });
  res.end(body);
}

/** Sends the first `cut` bytes of a dump, then destroys the connection (chunked, or with the full Content-Length). */
export function sendCutDump(res: ServerResponse, body: Buffer, cut: number, options: { contentLength?: boolean; contentType?: string; lastModified?: string } = {}): void {
  const headers: Record<string, string | number> = {
    'Content-Type': options.contentType ?? 'application/jsonl',
    'Last-Modified': options.lastModified ?? FAKE_LAST_MODIFIED,
  };
  if (options.contentLength) headers['Content-Length'] = body.length;
  res.writeHead(200, headers);
  res.write(body.subarray(0, cut), () => {
    // Give the bytes a moment to reach the client before the connection goes.
    setTimeout(() => res.socket?.destroy(), 30);
  });
}
