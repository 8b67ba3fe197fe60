import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { FIXED_ANCHOR } from '../../sandbox/placement.js';
import type { StreamName } from '../../src/catalog/reports.js';

/**
 * The epoch layout over HTTP: key and replication fields under names that do
 * not normalise to the documented ones, training dates as epoch milliseconds
 * (JSON numbers), phishing dates as epoch seconds (digit strings), Y/N
 * booleans and pipe-delimited CSV; the same records as the packaged layout;
 * date filters in RFC 3339 or Unix time, seconds or milliseconds, alike.
 */

type Rec = Record<string, unknown>;
let epoch: Sandbox;
let packaged: Sandbox;

beforeAll(async () => {
  const options = { anchor: FIXED_ANCHOR, seed: 9, trainingRecords: 300, phishingRecords: 300, log: () => undefined };
  [epoch, packaged] = await Promise.all([startSandbox({ ...options, layout: 'epoch' }), startSandbox(options)]);
});

afterAll(async () => {
  await Promise.all([epoch.close(), packaged.close()]);
});

async function get(sandbox: Sandbox, stream: StreamName, format: 'jsonl' | 'csv', query = ''): Promise<{ status: number; text: string }> {
  const res = await request(`${sandbox.url}/public/v1/report/${stream}/dump.${format}${query}`, { headers: { authorization: 'Bearer demo-token' } });
  return { status: res.statusCode, text: await res.body.text() };
}

const lines = (text: string): Rec[] => text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Rec);
const seconds = (rfc3339: unknown): number | null => (rfc3339 === null ? null : Date.parse(rfc3339 as string) / 1000);

describe('the epoch layout', () => {
  it('serves the packaged records under its own names, dates as Unix time, booleans as Y/N', async () => {
    const training = lines((await get(epoch, 'training', 'jsonl')).text);
    const truth = lines((await get(packaged, 'training', 'jsonl')).text);
    expect(Object.keys(training[0])).toEqual(['learner', 'email', 'firstName', 'lastName', 'employeeNumber', 'groupId', 'course', 'programName', 'lesson', 'moduleName', 'availableFrom', 'done', 'finished', 'progress', 'score', 'timeSpentSeconds', 'lastActivityAt']);
    training.forEach((record, i) => {
      expect(record.learner).toBe(truth[i].userId);
      expect(record.finished).toBe(truth[i].completedAt === null ? null : seconds(truth[i].completedAt)! * 1000);
      expect(record.done).toBe(truth[i].completed === null ? null : truth[i].completed ? 'Y' : 'N');
    });
    const phishing = lines((await get(epoch, 'phishing', 'jsonl')).text);
    const sent = lines((await get(packaged, 'phishing', 'jsonl')).text);
    expect(Object.keys(phishing[0]).slice(0, 6)).toEqual(['recipient', 'email', 'employeeNumber', 'groupId', 'campaignRef', 'campaignName']);
    phishing.forEach((record, i) => expect(record.delivered).toBe(sent[i].sentAt === null ? null : String(seconds(sent[i].sentAt))));
  });

  it('writes CSV with pipes and the same Unix times', async () => {
    const [header, first] = (await get(epoch, 'phishing', 'csv')).text.split('\r\n');
    expect(header.split('|').slice(0, 5)).toEqual(['recipient', 'email', 'employeeNumber', 'groupId', 'campaignRef']);
    const sent = lines((await get(packaged, 'phishing', 'jsonl')).text)[0].sentAt;
    expect(first.split('|')[header.split('|').indexOf('delivered')]).toBe(String(seconds(sent)));
  });

  it('takes date filters in RFC 3339, epoch seconds and epoch milliseconds alike (a fraction of a second excludes the second itself)', async () => {
    const bound = '2025-06-01T00:00:00Z';
    const asRfc = lines((await get(epoch, 'training', 'jsonl', `?filter%5BcompletedAt%5D=%3E%3D${encodeURIComponent(bound)}`)).text);
    const asSeconds = lines((await get(epoch, 'training', 'jsonl', `?filter%5BcompletedAt%5D=%3E%3D${seconds(bound)}`)).text);
    const asMillis = lines((await get(epoch, 'training', 'jsonl', `?filter%5BcompletedAt%5D=%3E%3D${seconds(bound)! * 1000}`)).text);
    expect(asRfc.length).toBeGreaterThan(0);
    expect(asSeconds).toEqual(asRfc);
    expect(asMillis).toEqual(asRfc);
    const at = asRfc.map((r) => r.finished as number).sort((a, b) => a - b)[0];
    const after = lines((await get(epoch, 'training', 'jsonl', `?filter%5BcompletedAt%5D=%3E%3D${at + 1}`)).text);
    expect(after.every((r) => (r.finished as number) > at)).toBe(true);
  });

  it('refuses Unix time in the other layouts, which write RFC 3339 (400 naming the filter)', async () => {
    const res = await get(packaged, 'training', 'jsonl', '?filter%5BcompletedAt%5D=%3E%3D1748736000');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({ error: 'invalid_filter', parameter: 'filter[completedAt]' });
  });
});
