import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../sandbox/server.js';
import { FIXED_ANCHOR } from '../../sandbox/placement.js';
import type { OrderName } from '../../sandbox/order.js';
import { REPORTS, type StreamName } from '../../src/catalog/reports.js';

type Rec = Record<string, unknown>;
const ORDERED: readonly OrderName[] = ['ascending', 'descending', 'shuffled', 'grouped'];
const RECORDS = 600;
const KEY = Object.fromEntries(REPORTS.map((r) => [r.name, r.replicationKey])) as Record<StreamName, string>;
const STREAMS = REPORTS.map((r) => r.name);

const open: Sandbox[] = [];
async function sandboxWith(options: Partial<SandboxOptions>): Promise<Sandbox> {
  const sandbox = await startSandbox({ anchor: FIXED_ANCHOR, seed: 5, trainingRecords: RECORDS, phishingRecords: RECORDS, log: () => undefined, ...options });
  open.push(sandbox);
  return sandbox;
}

const byOrder = {} as Record<OrderName, Sandbox>;
beforeAll(async () => {
  for (const order of ['generated', ...ORDERED] as const) byOrder[order] = await sandboxWith({ order });
});
afterAll(async () => {
  await Promise.all(open.map((s) => s.close()));
});

const records = (order: OrderName, stream: StreamName, filters?: Record<string, string>): Rec[] => [...byOrder[order].records(stream, filters)];
const ms = (value: unknown): number => (value === null ? Number.NEGATIVE_INFINITY : Date.parse(String(value)));
const sortedLines = (text: string, eol: string): string[] => text.split(eol).filter(Boolean).sort();
const userId = (r: Rec): string => String(r.userId);

describe.each(STREAMS)('%s: every order serves the same records', (stream) => {
  it.each(ORDERED)('%s: the same multiset of JSONL lines and CSV rows (same header) as the default order', (order) => {
    const generated = byOrder.generated;
    expect(sortedLines(byOrder[order].dump(stream, 'jsonl'), '\n')).toEqual(sortedLines(generated.dump(stream, 'jsonl'), '\n'));
    const csv = byOrder[order].dump(stream, 'csv');
    const defaultCsv = generated.dump(stream, 'csv');
    expect(csv.split('\r\n')[0]).toBe(defaultCsv.split('\r\n')[0]);
    expect(sortedLines(csv, '\r\n')).toEqual(sortedLines(defaultCsv, '\r\n'));
  });

  it('ascending: replication key never decreases, nulls first, ties in the default order', () => {
    const rows = records('ascending', stream);
    const keys = rows.map((r) => ms(r[KEY[stream]]));
    for (let i = 1; i < keys.length; i++) expect(keys[i]).toBeGreaterThanOrEqual(keys[i - 1]);
    const defaultPosition = new Map(records('generated', stream).map((r, i) => [JSON.stringify(r), i]));
    for (let i = 1; i < rows.length; i++) {
      if (keys[i] === keys[i - 1]) expect(defaultPosition.get(JSON.stringify(rows[i]))!).toBeGreaterThan(defaultPosition.get(JSON.stringify(rows[i - 1]))!);
    }
  });

  it('descending: replication key never increases, nulls last', () => {
    const keys = records('descending', stream).map((r) => (r[KEY[stream]] === null ? Number.NEGATIVE_INFINITY : ms(r[KEY[stream]])));
    for (let i = 1; i < keys.length; i++) expect(keys[i]).toBeLessThanOrEqual(keys[i - 1]);
  });

  it('grouped: all of a user\'s rows are together', () => {
    const users = records('grouped', stream).map(userId);
    const runs = users.filter((u, i) => i === 0 || u !== users[i - 1]);
    expect(new Set(runs).size).toBe(runs.length);
  });

  it('shuffled: deterministic for a seed, another seed another order, and not sorted', async () => {
    const again = await sandboxWith({ order: 'shuffled' });
    expect(again.dump(stream, 'jsonl')).toBe(byOrder.shuffled.dump(stream, 'jsonl'));
    const reseeded = await sandboxWith({ order: 'shuffled', seed: 6 });
    const otherSeedDefault = await sandboxWith({ seed: 6 });
    expect(reseeded.dump(stream, 'jsonl')).not.toBe(otherSeedDefault.dump(stream, 'jsonl'));
    const keys = records('shuffled', stream).map((r) => ms(r[KEY[stream]]));
    expect(keys.some((k, i) => i > 0 && k < keys[i - 1])).toBe(true);
    expect(keys.some((k, i) => i > 0 && k > keys[i - 1])).toBe(true);
  });

  it('filters select records and keep the order', () => {
    const all = records('generated', stream);
    const middle = [...all.map((r) => r[KEY[stream]]).filter((v) => v !== null)].sort()[Math.floor(all.length / 3)] as string;
    for (const order of ORDERED) {
      const filtered = records(order, stream, { [KEY[stream]]: `>=${middle}` });
      const expected = records(order, stream).filter((r) => r[KEY[stream]] !== null && ms(r[KEY[stream]]) >= ms(middle));
      expect(filtered.length).toBeGreaterThan(0);
      expect(filtered).toEqual(expected);
    }
  });
});

describe('the default order', () => {
  it('is grouped by user for training (the same bytes), by campaign for phishing (not grouped by user)', () => {
    expect(byOrder.grouped.dump('training', 'jsonl')).toBe(byOrder.generated.dump('training', 'jsonl'));
    expect(byOrder.grouped.dump('phishing', 'jsonl')).not.toBe(byOrder.generated.dump('phishing', 'jsonl'));
    const campaigns = records('generated', 'phishing').map((r) => String(r.campaignId));
    expect([...campaigns].sort()).toEqual(campaigns);
  });

  it('has training rows with null completedAt (so nulls placement is tested) and ties', () => {
    const keys = records('generated', 'training').map((r) => r.completedAt);
    expect(keys.filter((k) => k === null).length).toBeGreaterThan(10);
    expect(new Set(keys).size).toBeLessThan(keys.length - 10);
  });
});

describe('orders after data changes', () => {
  it('ascending is recomputed: updated and appended rows take their place', async () => {
    const sandbox = await sandboxWith({ order: 'ascending', trainingRecords: 200 });
    const before = sandbox.dump('training', 'jsonl');
    sandbox.update('training', 5);
    sandbox.append('training', 6);
    const rows = [...sandbox.records('training')];
    expect(rows).toHaveLength(206);
    const keys = rows.map((r) => ms(r.completedAt));
    for (let i = 1; i < keys.length; i++) expect(keys[i]).toBeGreaterThanOrEqual(keys[i - 1]);
    expect(sandbox.dump('training', 'jsonl')).not.toBe(before);
  });
});

describe('over HTTP', () => {
  async function body(url: string, stream: StreamName, format: 'jsonl' | 'csv', gzip: boolean): Promise<string> {
    const res = await request(`${url}/public/v1/report/${stream}/dump.${format}`, {
      headers: { authorization: 'Bearer demo-token', 'accept-encoding': gzip ? 'gzip' : 'identity' },
    });
    expect(res.statusCode).toBe(200);
    const bytes = Buffer.from(await res.body.arrayBuffer());
    return (res.headers['content-encoding'] === 'gzip' ? gunzipSync(bytes) : bytes).toString('utf8');
  }

  it.each(ORDERED)('%s: live, pre-rendered and pre-rendered gzip bodies are the in-process dump, in both formats', async (order) => {
    const prerendered = await sandboxWith({ order, prerender: true, prerenderGzip: true });
    for (const stream of STREAMS) {
      for (const format of ['jsonl', 'csv'] as const) {
        const expected = byOrder[order].dump(stream, format);
        expect(await body(byOrder[order].url, stream, format, false)).toBe(expected);
        expect(await body(byOrder[order].url, stream, format, true)).toBe(expected);
        expect(await body(prerendered.url, stream, format, false)).toBe(expected);
        expect(await body(prerendered.url, stream, format, true)).toBe(expected);
      }
    }
  });

  it.each(['title', 'snake'] as const)('the %s layout serves the same rows in the same order', async (layout) => {
    const other = await sandboxWith({ order: 'descending', layout });
    const keyField = layout === 'title' ? 'User ID' : 'user_id';
    const served = (await body(other.url, 'phishing', 'jsonl', false)).split('\n').filter(Boolean).map((l) => (JSON.parse(l) as Rec)[keyField]);
    expect(served).toEqual(records('descending', 'phishing').map(userId));
  });
});

describe('configuration', () => {
  it('rejects an unknown order', async () => {
    await expect(startSandbox({ order: 'random' as OrderName, log: () => undefined })).rejects.toThrow(/unknown order "random": use generated, ascending/);
  });
});
