import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { parse } from 'csv-parse/sync';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { FIXED_ANCHOR } from '../../sandbox/placement.js';
import { MEDIA_TYPES, REPORTS, type DumpFormat, type StreamName } from '../../src/catalog/reports.js';

const TOKEN = 'tok-all';
const TRAINING_ONLY = 'tok-training';
let sandbox: Sandbox;

async function get(path: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' | 'POST' | 'DELETE' = 'GET') {
  const res = await request(sandbox.url + path, { method, headers: { authorization: `Bearer ${TOKEN}`, ...headers } });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers, body, text: body.toString('utf8') };
}

function jsonl(text: string): Record<string, unknown>[] {
  expect(text === '' || text.endsWith('\n')).toBe(true);
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** CSV rows as objects, empty unquoted fields as null, booleans and numbers typed by the schema. */
function csvRecords(text: string, stream: StreamName): Record<string, unknown>[] {
  const schema = loadSchema(stream);
  const rows = parse(text, { columns: true, cast: (value, ctx) => {
    if (ctx.header) return value;
    if (value === '' && !ctx.quoting) return null;
    const type = schema.properties[String(ctx.column)]?.type;
    const types = Array.isArray(type) ? type : [type];
    if (types.includes('boolean')) return value === 'true';
    if (types.includes('integer') || types.includes('number')) return Number(value);
    return value;
  } }) as Record<string, unknown>[];
  return rows;
}

interface Schema {
  properties: Record<string, { type: string | string[] }>;
}
function loadSchema(stream: StreamName): Schema {
  return JSON.parse(readFileSync(new URL(`../../schemas/${stream}.json`, import.meta.url), 'utf8')) as Schema;
}

beforeAll(async () => {
  sandbox = await startSandbox({
    anchor: FIXED_ANCHOR,
    seed: 7,
    trainingRecords: 600,
    phishingRecords: 500,
    tokens: [
      { token: TOKEN, scopes: ['report:training:read', 'report:phishing:read'] },
      { token: TRAINING_ONLY, scopes: ['report:training:read'] },
    ],
  });
});
afterAll(async () => {
  await sandbox.close();
});

describe.each(REPORTS.map((s) => s.name))('%s dump', (stream) => {
  const path = (format: DumpFormat) => `/public/v1/report/${stream}/dump.${format}`;

  it('serves JSONL: one object per line, keys in schema order, valid against the schema', async () => {
    const res = await get(path('jsonl'));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(MEDIA_TYPES.jsonl);
    expect(res.headers['last-modified']).toBe(sandbox.lastModified(stream).toUTCString());
    const records = jsonl(res.text);
    expect(records).toHaveLength(sandbox.recordCount(stream));
    const schema = loadSchema(stream);
    const ajv = new Ajv.default({ strict: true, allErrors: true });
    addFormats.default(ajv);
    const validate = ajv.compile(schema);
    for (const r of records) {
      expect(Object.keys(r)).toEqual(Object.keys(schema.properties));
      if (!validate(r)) throw new Error(JSON.stringify(validate.errors));
    }
    expect(records).toEqual([...sandbox.records(stream)]);
    expect(res.text).toBe(sandbox.dump(stream, 'jsonl'));
  });

  it('serves CSV with a header row, CRLF rows and the same records as JSONL', async () => {
    const res = await get(path('csv'));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(MEDIA_TYPES.csv);
    const schema = loadSchema(stream);
    expect(res.text.split('\r\n')[0]).toBe(Object.keys(schema.properties).join(','));
    expect(res.text.endsWith('\r\n')).toBe(true);
    const fromJsonl = jsonl((await get(path('jsonl'))).text);
    expect(csvRecords(res.text, stream)).toEqual(fromJsonl);
  });

  it('has unique keys, RFC 3339 UTC second-precision dates and values that need CSV quoting', async () => {
    const records = jsonl((await get(path('jsonl'))).text);
    const descriptor = REPORTS.find((s) => s.name === stream)!;
    const keys = new Set(records.map((r) => descriptor.keyProperties.map((k) => r[k]).join('|')));
    expect(keys.size).toBe(records.length);
    const dateFields = Object.entries(loadSchema(stream).properties)
      .filter(([, p]) => (p as { format?: string }).format === 'date-time')
      .map(([n]) => n);
    for (const r of records) {
      for (const f of dateFields) if (r[f] !== null) expect(r[f]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    }
    const quoting = records.filter((r) => Object.values(r).some((v) => typeof v === 'string' && /[",\n]/.test(v)));
    expect(quoting.length).toBeGreaterThan(records.length / 10);
    expect(records.some((r) => Object.values(r).some((v) => typeof v === 'string' && /[^\x00-\x7f]/.test(v)))).toBe(true);
    // Ties on the replication key are common, so clients must handle them at the bookmark.
    const rk = descriptor.replicationKey;
    const values = records.map((r) => r[rk]).filter((v) => v !== null);
    expect(new Set(values).size).toBeLessThan(values.length * 0.9);
    // Not sorted by the replication key.
    const sorted = [...values].sort();
    expect(values).not.toEqual(sorted);
  });

  it('gzips when asked, decoding to the same bytes', async () => {
    const plain = await get(path('csv'));
    const zipped = await get(path('csv'), { 'accept-encoding': 'gzip' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toBe('Accept-Encoding');
    expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);
    expect(plain.headers['content-encoding']).toBeUndefined();
    const refused = await get(path('csv'), { 'accept-encoding': 'gzip;q=0, identity' });
    expect(refused.headers['content-encoding']).toBeUndefined();
  });

  it('answers HEAD like GET without a body', async () => {
    const res = await get(path('jsonl'), {}, 'HEAD');
    expect(res.status).toBe(200);
    expect(res.body.length).toBe(0);
    expect(res.headers['last-modified']).toBeDefined();
  });

  it('answers 304 to If-Modified-Since at or after Last-Modified and 200 before it', async () => {
    const lm = sandbox.lastModified(stream);
    const same = await get(path('jsonl'), { 'if-modified-since': lm.toUTCString() });
    expect(same.status).toBe(304);
    expect(same.body.length).toBe(0);
    expect(same.headers['last-modified']).toBe(lm.toUTCString());
    const later = await get(path('jsonl'), { 'if-modified-since': new Date(lm.getTime() + 3_600_000).toUTCString() });
    expect(later.status).toBe(304);
    const earlier = await get(path('jsonl'), { 'if-modified-since': new Date(lm.getTime() - 1000).toUTCString() });
    expect(earlier.status).toBe(200);
    expect(earlier.body.length).toBeGreaterThan(0);
    const invalid = await get(path('jsonl'), { 'if-modified-since': 'yesterday-ish' });
    expect(invalid.status).toBe(200);
  });
});

describe('authentication and authorisation', () => {
  const path = '/public/v1/report/phishing/dump.jsonl';

  it('401 without a header, with a malformed one and with an unknown token', async () => {
    for (const authorization of [undefined, 'Basic Zm9vOmJhcg==', 'Bearer', 'Bearer nope']) {
      const res = await request(sandbox.url + path, { headers: authorization ? { authorization } : {} });
      const body = (await res.body.json()) as { error: string; message: string };
      expect(res.statusCode).toBe(401);
      expect(String(res.headers['www-authenticate'])).toMatch(/^Bearer/);
      expect(body.error).toBe('unauthorized');
      expect(body.message).not.toContain('nope');
    }
  });

  it('403 naming the missing scope', async () => {
    const res = await get(path, { authorization: `Bearer ${TRAINING_ONLY}` });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.text)).toMatchObject({ error: 'insufficient_scope', scope: 'report:phishing:read' });
    const ok = await get('/public/v1/report/training/dump.csv', { authorization: `bearer ${TRAINING_ONLY}` });
    expect(ok.status).toBe(200);
  });
});

describe('routing', () => {
  it('404 with a JSON body for any other path', async () => {
    for (const p of ['/', '/public/v1/report/training/dump', '/public/v1/report/other/dump.csv', '/public/v1/report/training/dump.xml', '/public/v2/report/training/dump.csv']) {
      const res = await get(p);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(res.text).error).toBe('not_found');
    }
  });

  it('405 with Allow for other methods', async () => {
    for (const method of ['POST', 'DELETE'] as const) {
      const res = await get('/public/v1/report/training/dump.csv', {}, method);
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD');
      expect(JSON.parse(res.text).error).toBe('method_not_allowed');
    }
  });
});

describe('determinism', () => {
  it('same seed gives the same bytes, another seed other bytes', async () => {
    const a = await startSandbox({ anchor: FIXED_ANCHOR, seed: 7, trainingRecords: 600, phishingRecords: 500 });
    const b = await startSandbox({ anchor: FIXED_ANCHOR, seed: 8, trainingRecords: 600, phishingRecords: 500 });
    try {
      for (const stream of ['training', 'phishing'] as const) {
        const mine = (await get(`/public/v1/report/${stream}/dump.csv`)).body;
        const fromA = await request(`${a.url}/public/v1/report/${stream}/dump.csv`, { headers: { authorization: 'Bearer demo-token' } });
        const fromB = await request(`${b.url}/public/v1/report/${stream}/dump.csv`, { headers: { authorization: 'Bearer demo-token' } });
        expect(Buffer.from(await fromA.body.arrayBuffer()).equals(mine)).toBe(true);
        expect(Buffer.from(await fromB.body.arrayBuffer()).equals(mine)).toBe(false);
        expect(fromA.headers['last-modified']).toBe(sandbox.lastModified(stream).toUTCString());
      }
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
