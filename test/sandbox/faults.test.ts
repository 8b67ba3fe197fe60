import { request } from 'undici';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { parseTokenList, parseTokenSpec } from '../../sandbox/auth.js';
import { isLoopback } from '../../sandbox/http-util.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../sandbox/server.js';
import { FIXED_ANCHOR } from '../../sandbox/placement.js';

const started: Sandbox[] = [];
async function sandboxWith(options: Partial<SandboxOptions>): Promise<Sandbox> {
  const s = await startSandbox({ anchor: FIXED_ANCHOR, trainingRecords: 400, phishingRecords: 300, ...options });
  started.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.close()));
});

async function get(s: Sandbox, path = '/public/v1/report/training/dump.jsonl', headers: Record<string, string> = {}) {
  const res = await request(s.url + path, { headers: { authorization: 'Bearer demo-token', ...headers } });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers, body, text: body.toString('utf8') };
}

/** Reads a body the server cuts short: how many bytes came before the read failed (it must fail). */
async function bytesBeforeCut(body: AsyncIterable<unknown>): Promise<number> {
  let received = 0;
  await expect(
    (async () => {
      for await (const chunk of body) received += (chunk as Buffer).length;
    })(),
  ).rejects.toThrow();
  return received;
}

describe('fault injection', () => {
  it('fail rate 1 answers every dump request with one of the configured statuses', async () => {
    const s = await sandboxWith({ faults: { failRate: 1, failStatuses: [500, 503], retryAfterSeconds: 2, seed: 5 } });
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await get(s);
      statuses.push(res.status);
      expect(JSON.parse(res.text).error).toBe('injected_fault');
      if (res.status === 503) expect(res.headers['retry-after']).toBe('2');
    }
    expect(new Set(statuses)).toEqual(new Set([500, 503]));
    expect(s.stats().injectedFailures).toBe(12);
    // Same fault seed, same sequence.
    s.setFaults({ seed: 5 });
    const again: number[] = [];
    for (let i = 0; i < 12; i++) again.push((await get(s)).status);
    expect(again).toEqual(statuses);
    // Admin endpoints are never faulted; turning faults off restores service.
    expect((await request(`${s.url}/_admin/health`)).statusCode).toBe(200);
    s.setFaults({ failRate: 0 });
    expect((await get(s)).status).toBe(200);
  });

  it('a fraction of requests fails when the fail rate is below 1', async () => {
    const s = await sandboxWith({ faults: { failRate: 0.5, failStatuses: [503], seed: 9 } });
    const statuses = [];
    for (let i = 0; i < 20; i++) statuses.push((await get(s)).status);
    expect(statuses).toContain(200);
    expect(statuses).toContain(503);
  });

  it('drop-after-bytes cuts the connection mid-body', async () => {
    const s = await sandboxWith({ faults: { dropAfterBytes: 1000 } });
    const full = s.dump('training', 'jsonl');
    const res = await request(`${s.url}/public/v1/report/training/dump.jsonl`, { headers: { authorization: 'Bearer demo-token' } });
    expect(res.statusCode).toBe(200);
    const received = await bytesBeforeCut(res.body);
    expect(received).toBe(1000);
    expect(received).toBeLessThan(Buffer.byteLength(full));
    expect(s.stats().dropped).toBe(1);
  });

  it('drop rate and byte ranges are drawn from the fault PRNG; gzip bodies are cut too', async () => {
    const s = await sandboxWith({ faults: { dropAfterBytes: [100, 200], dropRate: 1 } });
    const res = await request(`${s.url}/public/v1/report/phishing/dump.csv`, {
      headers: { authorization: 'Bearer demo-token', 'accept-encoding': 'gzip' },
    });
    let received = 0;
    await expect(
      (async () => {
        for await (const chunk of res.body) received += (chunk as Buffer).length;
      })(),
    ).rejects.toThrow();
    expect(received).toBeGreaterThanOrEqual(100);
    expect(received).toBeLessThanOrEqual(200);
    s.setFaults({ dropRate: 0 });
    expect((await get(s, '/public/v1/report/phishing/dump.csv')).text).toBe(s.dump('phishing', 'csv'));
  });

  it('latency and slow bodies still deliver the whole dump', async () => {
    const s = await sandboxWith({ trainingRecords: 20, faults: { latencyMs: 20, bodyBytesPerSecond: 200_000 } });
    const res = await get(s);
    expect(res.status).toBe(200);
    expect(res.text).toBe(s.dump('training', 'jsonl'));
  });

  it('rejects invalid settings', async () => {
    const s = await sandboxWith({});
    expect(() => s.setFaults({ failRate: 1.5 })).toThrow();
    expect(() => s.setFaults({ failStatuses: [200] })).toThrow();
    expect(() => s.setFaults({ dropAfterBytes: [5, 1] })).toThrow();
  });
});

describe('rate limiting', () => {
  it('answers 429 with Retry-After once a credential exceeds its budget', async () => {
    const s = await sandboxWith({
      rateLimit: { requests: 3, windowSeconds: 30 },
      tokens: [
        { token: 'a', scopes: ['report:training:read'] },
        { token: 'b', scopes: ['report:training:read'] },
      ],
    });
    const as = async (token: string) => get(s, '/public/v1/report/training/dump.csv', { authorization: `Bearer ${token}` });
    for (let i = 0; i < 3; i++) expect((await as('a')).status).toBe(200);
    const limited = await as('a');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(30);
    expect(JSON.parse(limited.text)).toMatchObject({ error: 'rate_limited' });
    expect((await as('b')).status).toBe(200);
    expect((await request(`${s.url}/_admin/health`)).statusCode).toBe(200);
  });
});

describe('pre-rendered mode', () => {
  it('serves the same bytes from files, with Content-Length, and re-renders after changes', async () => {
    const s = await sandboxWith({ prerender: true, prerenderGzip: true });
    const plain = await get(s, '/public/v1/report/training/dump.csv');
    expect(plain.text).toBe(s.dump('training', 'csv'));
    expect(Number(plain.headers['content-length'])).toBe(plain.body.length);
    const zipped = await get(s, '/public/v1/report/training/dump.csv', { 'accept-encoding': 'gzip' });
    expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);
    s.append('training', 5);
    const after = await get(s, '/public/v1/report/training/dump.csv');
    expect(after.text).toBe(s.dump('training', 'csv'));
    expect(after.body.length).toBeGreaterThan(plain.body.length);
    const filteredRes = await get(s, '/public/v1/report/training/dump.jsonl?filter[completed]=true');
    expect(filteredRes.text).toBe(s.dump('training', 'jsonl', { completed: 'true' }));
  });
});

describe('pre-rendered files over a real socket', () => {
  const path = '/public/v1/report/training/dump.jsonl';
  const open = (s: Sandbox) => request(s.url + path, { headers: { authorization: 'Bearer demo-token' } });

  it('a reader slower than the file is fed as it reads (the body waits for drain), byte for byte', async () => {
    // ~9 MB: more than loopback socket buffers hold, so the sandbox must wait for the reader.
    const s = await sandboxWith({ trainingRecords: 20_000, prerender: true });
    const res = await open(s);
    const chunks: Buffer[] = [];
    let reads = 0;
    for await (const chunk of res.body) {
      chunks.push(chunk as Buffer);
      if (++reads % 16 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const body = Buffer.concat(chunks);
    expect(Number(res.headers['content-length'])).toBe(body.length);
    expect(body.toString('utf8')).toBe(s.dump('training', 'jsonl'));
  });

  it('body faults still apply to a pre-rendered file: the connection is cut after the set bytes', async () => {
    const s = await sandboxWith({ prerender: true, faults: { dropAfterBytes: 1000 } });
    expect(await bytesBeforeCut((await open(s)).body)).toBe(1000);
    expect(s.stats().dropped).toBe(1);
  });

  it('a client gone mid-body ends that response only: the next request gets the whole file', async () => {
    const s = await sandboxWith({ trainingRecords: 20_000, prerender: true });
    const first = await open(s);
    for await (const chunk of first.body) {
      expect((chunk as Buffer).length).toBeGreaterThan(0);
      break;
    }
    const again = await get(s, path);
    expect(again.status).toBe(200);
    expect(again.text).toBe(s.dump('training', 'jsonl'));
  });
});

describe('tolerance knobs', () => {
  it('dateOffset writes the same instants with another offset', async () => {
    const utc = await sandboxWith({ seed: 4 });
    const shifted = await sandboxWith({ seed: 4, dateOffset: '+02:00' });
    const a = [...utc.records('phishing')];
    const b = [...shifted.records('phishing')];
    expect(b[0].sentAt).toMatch(/\+02:00$/);
    for (let i = 0; i < a.length; i++) {
      for (const f of ['sentAt', 'openedAt', 'clickedAt', 'submittedDataAt', 'reportedAt']) {
        if (a[i][f] === null) expect(b[i][f]).toBeNull();
        else expect(Date.parse(b[i][f] as string)).toBe(Date.parse(a[i][f] as string));
      }
    }
    // Filters still compare instants.
    const value = a[10].sentAt as string;
    expect([...shifted.records('phishing', { sentAt: `>=${value}` })].length).toBe(
      [...utc.records('phishing', { sentAt: `>=${value}` })].length,
    );
  });

  it('extraFields adds an undeclared department field in both formats', async () => {
    const s = await sandboxWith({ extraFields: true });
    const line = JSON.parse((await get(s)).text.split('\n')[0]) as Record<string, unknown>;
    expect(typeof line.department).toBe('string');
    expect(Object.keys(line).indexOf('department')).toBe(Object.keys(line).indexOf('groupId') + 1);
    const header = (await get(s, '/public/v1/report/phishing/dump.csv')).text.split('\r\n')[0];
    expect(header.split(',')).toContain('department');
  });
});

describe('helpers', () => {
  it('parses token specs: value before the first colon, scopes split by commas', () => {
    expect(parseTokenSpec('tok1:report:training:read,report:phishing:read')).toEqual({
      token: 'tok1',
      scopes: ['report:training:read', 'report:phishing:read'],
    });
    expect(parseTokenList(' a:report:training:read ; b:report:phishing:read;')).toEqual([
      { token: 'a', scopes: ['report:training:read'] },
      { token: 'b', scopes: ['report:phishing:read'] },
    ]);
    expect(parseTokenSpec('c:')).toEqual({ token: 'c', scopes: [] });
    expect(() => parseTokenSpec('nocolon')).toThrow();
  });

  it('recognises loopback peers only', () => {
    for (const a of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1']) expect(isLoopback(a)).toBe(true);
    for (const a of ['10.0.0.1', '192.168.1.2', '::ffff:10.1.1.1', 'fe80::1', undefined]) expect(isLoopback(a)).toBe(false);
  });
});
