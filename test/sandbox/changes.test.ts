import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { FIXED_ANCHOR } from '../../sandbox/placement.js';
import { REPORTS, type StreamName } from '../../src/catalog/reports.js';

type Rec = Record<string, unknown>;
let sandbox: Sandbox;

async function fetchDump(stream: StreamName, headers: Record<string, string> = {}) {
  const res = await request(`${sandbox.url}/public/v1/report/${stream}/dump.jsonl`, {
    headers: { authorization: 'Bearer demo-token', ...headers },
  });
  const text = await res.body.text();
  return {
    status: res.statusCode,
    lastModified: String(res.headers['last-modified']),
    records: text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Rec),
  };
}

async function admin(method: 'GET' | 'POST', path: string, body?: unknown) {
  const res = await request(sandbox.url + path, { method, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

const keyOf = (stream: StreamName, r: Rec): string =>
  REPORTS.find((s) => s.name === stream)!.keyProperties.map((k) => r[k]).join('|');
const maxOf = (records: Rec[], field: string): number =>
  Math.max(...records.filter((r) => r[field] !== null).map((r) => Date.parse(r[field] as string)));

beforeAll(async () => {
  sandbox = await startSandbox({ anchor: FIXED_ANCHOR, seed: 11, trainingRecords: 300, phishingRecords: 300 });
});
afterAll(async () => {
  await sandbox.close();
});

describe('Last-Modified', () => {
  it('is stable across requests and derived from the seed, not the clock', async () => {
    const a = await fetchDump('training');
    const b = await fetchDump('training');
    expect(a.lastModified).toBe(b.lastModified);
    expect(a.lastModified).toMatch(/GMT$/);
    const other = await startSandbox({ anchor: FIXED_ANCHOR, seed: 11, trainingRecords: 300, phishingRecords: 300 });
    expect(other.lastModified('training').getTime()).toBe(sandbox.lastModified('training').getTime());
    await other.close();
  });
});

describe.each([
  ['training', 'completedAt'],
  ['phishing', 'sentAt'],
] as const)('%s changes', (stream, replicationKey) => {
  it('append adds records later than every existing one, with new unique keys, and moves Last-Modified', async () => {
    const before = await fetchDump(stream);
    const lm = sandbox.lastModified(stream).getTime();
    const result = sandbox.append(stream, 30);
    expect(result.changed).toBe(30);
    expect(result.keys).toHaveLength(30);
    expect(result.lastModified.getTime()).toBeGreaterThanOrEqual(lm + 1000);
    expect(result.lastModified.getTime() % 1000).toBe(0);
    const after = await fetchDump(stream);
    expect(after.lastModified).toBe(result.lastModified.toUTCString());
    expect(after.records.slice(0, before.records.length)).toEqual(before.records);
    const added = after.records.slice(before.records.length);
    expect(added).toHaveLength(30);
    expect(added.map((r) => keyOf(stream, r))).toEqual(result.keys.map((k) => Object.values(k).join('|')));
    const previousMax = maxOf(before.records, replicationKey);
    for (const r of added) expect(Date.parse(r[replicationKey] as string)).toBeGreaterThan(previousMax);
    expect(new Set(after.records.map((r) => keyOf(stream, r))).size).toBe(after.records.length);
    // Appended rows tie among themselves too.
    expect(new Set(added.map((r) => r[replicationKey])).size).toBeLessThan(added.length);
    // The old Last-Modified no longer gives 304.
    expect((await fetchDump(stream, { 'if-modified-since': before.lastModified })).status).toBe(200);
    expect((await fetchDump(stream, { 'if-modified-since': after.lastModified })).status).toBe(304);
  });

  it('update changes existing rows deterministically and moves Last-Modified', async () => {
    const before = await fetchDump(stream);
    const result = sandbox.update(stream, 5);
    expect(result.changed).toBe(5);
    expect(result.lastModified.getTime()).toBeGreaterThan(new Date(before.lastModified).getTime());
    const after = await fetchDump(stream);
    expect(after.records).toHaveLength(before.records.length);
    const changed = after.records.filter((r, i) => JSON.stringify(r) !== JSON.stringify(before.records[i]));
    expect(changed.map((r) => keyOf(stream, r)).sort()).toEqual(result.keys.map((k) => Object.values(k).join('|')).sort());
    const previousMax = maxOf(before.records, replicationKey);
    for (const r of changed) {
      const old = before.records.find((o) => keyOf(stream, o) === keyOf(stream, r))!;
      if (stream === 'training') {
        expect(old.completed).toBe(false);
        expect(r).toMatchObject({ completed: true, progress: 100 });
        expect(Date.parse(r.completedAt as string)).toBeGreaterThan(previousMax);
        expect(r.score).not.toBeNull();
      } else {
        expect(r.sentAt).toBe(old.sentAt);
        expect(old.openedAt).toBeNull();
        expect(Date.parse(r.openedAt as string)).toBeGreaterThan(Date.parse(r.sentAt as string));
        if (r.clickedAt !== null) expect(Date.parse(r.clickedAt as string)).toBeGreaterThan(Date.parse(r.openedAt as string));
      }
    }
  });

  it('replays identically in another sandbox with the same seed', async () => {
    const twin = await startSandbox({ anchor: FIXED_ANCHOR, seed: 11, trainingRecords: 300, phishingRecords: 300 });
    try {
      twin.append(stream, 30);
      twin.update(stream, 5);
      expect([...twin.records(stream)]).toEqual([...sandbox.records(stream)]);
    } finally {
      await twin.close();
    }
  });
});

describe('admin endpoints', () => {
  it('append and update over HTTP return the changed keys and the new Last-Modified', async () => {
    const append = await admin('POST', '/_admin/phishing/append?count=3');
    expect(append.status).toBe(200);
    expect(append.body).toMatchObject({ stream: 'phishing', changed: 3 });
    expect(append.body.lastModified).toBe(sandbox.lastModified('phishing').toUTCString());
    const update = await admin('POST', '/_admin/training/update?count=2');
    expect(update.body).toMatchObject({ stream: 'training', changed: 2 });
    expect(update.body.keys).toHaveLength(2);
  });

  it('at_request holds a change until just before the N-th dump request from now, so it lands between two reads', async () => {
    const before = await fetchDump('training');
    const scheduled = await admin('POST', '/_admin/training/update?count=2&at_request=2');
    expect(scheduled).toMatchObject({ status: 202, body: { scheduled: { update: 2, stream: 'training', atRequest: 2 } } });
    const first = await fetchDump('training');
    expect(first.records).toEqual(before.records);
    expect(first.lastModified).toBe(before.lastModified);
    const second = await fetchDump('training');
    expect(second.lastModified).not.toBe(before.lastModified);
    expect(second.records.filter((r, i) => JSON.stringify(r) !== JSON.stringify(before.records[i]))).toHaveLength(2);
    const days = await admin('POST', '/_admin/simulate?days=1&at_request=1');
    expect(days).toMatchObject({ status: 202, body: { scheduled: { days: 1, atRequest: 1 } } });
    expect((await fetchDump('training')).lastModified).not.toBe(second.lastModified);
    expect((await admin('POST', '/_admin/training/update?count=1&at_request=0')).status).toBe(400);
  });

  it('the rejectFilters fault answers 400 naming a filter the service does not support, and only to requests carrying it', async () => {
    await admin('POST', '/_admin/faults', { rejectFilters: ['completed'] });
    try {
      const refused = await request(`${sandbox.url}/public/v1/report/training/dump.jsonl?filter[completed]=false`, { headers: { authorization: 'Bearer demo-token' } });
      expect(refused.statusCode).toBe(400);
      expect(await refused.body.json()).toMatchObject({ error: 'unknown_filter', parameter: 'filter[completed]' });
      expect((await fetchDump('training')).status).toBe(200);
    } finally {
      await admin('POST', '/_admin/faults', { rejectFilters: [] });
    }
    expect((await admin('POST', '/_admin/faults', { rejectFilters: 'completed' })).status).toBe(400);
  });

  it('health, stats and faults', async () => {
    const health = await admin('GET', '/_admin/health');
    expect(health.body).toMatchObject({ status: 'ok', streams: { training: { records: sandbox.recordCount('training') } } });
    const stats = await admin('GET', '/_admin/stats');
    expect(stats.body.requests).toBe(sandbox.requestCount);
    const faults = await admin('POST', '/_admin/faults', { latencyMs: 1, dropAfterBytes: '10-20' });
    expect(faults.body).toMatchObject({ latencyMs: 1, dropAfterBytes: [10, 20] });
    expect(sandbox.faults().latencyMs).toBe(1);
    await admin('POST', '/_admin/faults', { latencyMs: 0, dropAfterBytes: null });
    expect((await admin('POST', '/_admin/faults', { failRate: 2 })).status).toBe(400);
    expect((await admin('POST', '/_admin/faults', { bogus: 1 })).status).toBe(400);
  });

  it('rejects bad counts, unknown paths and wrong methods', async () => {
    expect((await admin('POST', '/_admin/training/append?count=-1')).status).toBe(400);
    expect((await admin('POST', '/_admin/training/append?count=abc')).status).toBe(400);
    expect((await admin('POST', '/_admin/other/append?count=1')).status).toBe(404);
    expect((await admin('GET', '/_admin/training/append?count=1')).status).toBe(405);
  });
});
