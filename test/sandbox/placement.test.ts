import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../sandbox/server.js';
import { FIXED_ANCHOR } from '../../sandbox/placement.js';
import { REPORTS, type StreamName } from '../../src/catalog/reports.js';

/**
 * Where the sandbox's dates lie: by default they end just before its clock,
 * so that a client running now meets recent data; with an anchor they are
 * pinned, and `FIXED_ANCHOR` gives the dates every sandbox served before.
 */

const DAY = 86_400_000;
const sandboxes: Sandbox[] = [];

afterAll(async () => {
  await Promise.all(sandboxes.map((s) => s.close()));
});

async function sandbox(options: Partial<SandboxOptions>): Promise<Sandbox> {
  const started = await startSandbox({ log: () => undefined, ...options });
  sandboxes.push(started);
  return started;
}

type Rec = Record<string, unknown>;
const DATE_FIELDS: Record<StreamName, string[]> = {
  training: ['availableFrom', 'completedAt', 'lastActivityAt'],
  phishing: ['sentAt', 'openedAt', 'clickedAt', 'submittedDataAt', 'reportedAt'],
};
const REPLICATION_KEY = Object.fromEntries(REPORTS.map((r) => [r.name, r.replicationKey])) as Record<StreamName, string>;
const STREAMS: StreamName[] = ['training', 'phishing'];

/** Every date of the records, in milliseconds. */
function datesOf(records: Iterable<Rec>, fields: readonly string[]): number[] {
  const out: number[] = [];
  for (const r of records) for (const f of fields) if (typeof r[f] === 'string') out.push(Date.parse(r[f] as string));
  return out;
}

const newest = (dates: readonly number[]): number => dates.reduce((a, b) => Math.max(a, b), -Infinity);

describe('the sandbox without an anchor', () => {
  it.each([
    [1, 2000, '2026-11-22T15:30:00Z'],
    [1, 400, '2026-11-22T00:00:05Z'],
    [5, 800, '2027-03-01T23:59:59Z'],
    [11, 300, '2025-06-15T09:00:00Z'],
  ])('seed %i with %i records at %s: its newest dates lie within days before its clock, none after it', async (seed, records, clock) => {
    const now = Date.parse(clock);
    const s = await sandbox({ seed, trainingRecords: records, phishingRecords: records, now: new Date(now) });
    for (const stream of STREAMS) {
      const all = datesOf(s.records(stream), DATE_FIELDS[stream]);
      const rk = datesOf(s.records(stream), [REPLICATION_KEY[stream]]);
      expect(newest(all), `${stream}: no date after the clock`).toBeLessThanOrEqual(now);
      expect(newest(all), `${stream}: the newest date of any field, within two days before the clock`).toBeGreaterThan(now - 2 * DAY);
      // A phishing send's events follow it for up to three days and may not pass the clock, so the newest send lies up to about five days back.
      expect(newest(rk), `${stream}: the newest ${REPLICATION_KEY[stream]}, within days before the clock`).toBeGreaterThan(now - (stream === 'phishing' ? 5.5 : 2) * DAY);
      expect(s.lastModified(stream).getTime(), `${stream}: Last-Modified after every date, not after the clock`).toBeGreaterThanOrEqual(newest(all));
      expect(s.lastModified(stream).getTime()).toBeLessThanOrEqual(now);
    }
  });

  it('takes the wall clock when given none', async () => {
    const before = Date.now();
    const s = await sandbox({ trainingRecords: 400, phishingRecords: 400 });
    const after = Date.now();
    for (const stream of STREAMS) {
      const all = datesOf(s.records(stream), DATE_FIELDS[stream]);
      expect(newest(all)).toBeLessThanOrEqual(after);
      expect(newest(all)).toBeGreaterThan(before - 2 * DAY);
    }
  });

  it('keeps the records of the fixed anchor, every date moved by the same whole number of days (one per stream), so a seed keeps its shape', async () => {
    const options = { seed: 3, trainingRecords: 500, phishingRecords: 500 };
    const [moved, fixed] = await Promise.all([sandbox({ ...options, now: new Date('2026-11-22T15:30:00Z') }), sandbox({ ...options, anchor: FIXED_ANCHOR })]);
    for (const stream of STREAMS) {
      const a = [...moved.records(stream)];
      const b = [...fixed.records(stream)];
      expect(a).toHaveLength(b.length);
      const shift = Date.parse(a[0][REPLICATION_KEY[stream]] as string) - Date.parse(b[0][REPLICATION_KEY[stream]] as string);
      expect(shift % DAY, `${stream}: whole days`).toBe(0);
      expect(shift, `${stream}: later`).toBeGreaterThan(0);
      a.forEach((r, i) => {
        const back = { ...r };
        for (const f of DATE_FIELDS[stream]) if (typeof r[f] === 'string') back[f] = new Date(Date.parse(r[f] as string) - shift).toISOString().replace('.000Z', 'Z');
        expect(back, `${stream} record ${i}`).toEqual(b[i]);
      });
    }
  });

  it('gives the same bytes and Last-Modified for the same seed and day of its clock', async () => {
    const options = { seed: 4, trainingRecords: 300, phishingRecords: 300 };
    const [morning, evening] = await Promise.all([sandbox({ ...options, now: new Date('2026-11-22T00:00:01Z') }), sandbox({ ...options, now: new Date('2026-11-22T23:59:59Z') })]);
    for (const stream of STREAMS) {
      expect(evening.dump(stream, 'csv')).toBe(morning.dump(stream, 'csv'));
      expect(evening.lastModified(stream)).toEqual(morning.lastModified(stream));
    }
  });

  it('serves pre-rendered bytes and Last-Modified of the moved dates, even before 2026', async () => {
    const now = Date.parse('2025-06-15T09:00:00Z');
    const s = await sandbox({ seed: 2, trainingRecords: 300, phishingRecords: 300, now: new Date(now), prerender: true });
    for (const stream of STREAMS) {
      const res = await request(`${s.url}/public/v1/report/${stream}/dump.jsonl`, { headers: { authorization: 'Bearer demo-token' } });
      const body = await res.body.text();
      expect(body).toBe(s.dump(stream, 'jsonl'));
      const dates = datesOf(body.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Rec), DATE_FIELDS[stream]);
      const lastModified = Date.parse(String(res.headers['last-modified']));
      expect(newest(dates)).toBeLessThanOrEqual(lastModified);
      expect(lastModified).toBeLessThanOrEqual(now);
    }
  });

  it('writes appended rows after every date, and places the simulated days of its start to end the day before its clock', async () => {
    const now = Date.parse('2026-11-22T15:30:00Z');
    const s = await sandbox({ seed: 5, trainingRecords: 800, phishingRecords: 800, now: new Date(now), simulateDays: 3 });
    const training = datesOf(s.records('training'), DATE_FIELDS.training);
    expect(newest(training)).toBeLessThanOrEqual(Date.parse('2026-11-21T23:59:59Z'));
    expect(newest(training)).toBeGreaterThanOrEqual(Date.parse('2026-11-21T00:00:00Z'));
    expect(newest(datesOf(s.records('phishing'), DATE_FIELDS.phishing))).toBeLessThanOrEqual(now);
    const [next] = s.simulateDays(1);
    expect(next.day).toBe('2026-11-22');
    expect(Date.parse(s.append('training', 1).instant)).toBeGreaterThan(Date.parse('2026-11-22T23:59:59Z'));
  });
});

describe('the sandbox with the fixed anchor', () => {
  it('serves the dates, Last-Modified, appended instants and simulated days of before, whatever its clock', async () => {
    const s = await sandbox({ seed: 1, trainingRecords: 400, phishingRecords: 400, anchor: FIXED_ANCHOR, now: new Date('2026-11-22T15:30:00Z') });
    const training = [...s.records('training')];
    const phishing = [...s.records('phishing')];
    expect(training[0]).toMatchObject({ userId: 'usr-0000000', availableFrom: '2025-01-19T00:00:00Z', completedAt: '2025-04-24T12:20:00Z', lastActivityAt: '2025-04-24T12:20:00Z' });
    expect(training[17]).toMatchObject({ userId: 'usr-0000002', availableFrom: '2024-02-22T00:00:00Z', completedAt: null, lastActivityAt: '2024-04-30T16:06:09Z' });
    expect(phishing[1]).toMatchObject({ userId: 'usr-0000001', sentAt: '2025-10-21T10:00:00Z', openedAt: '2025-10-21T12:52:00Z', clickedAt: null });
    expect(newest(datesOf(training, ['completedAt']))).toBe(Date.parse('2025-10-17T10:15:00Z'));
    expect(newest(datesOf(phishing, ['sentAt']))).toBe(Date.parse('2025-10-21T10:05:00Z'));
    expect(newest(datesOf(phishing, DATE_FIELDS.phishing))).toBe(Date.parse('2025-10-24T10:52:00Z'));
    expect(s.lastModified('training').toUTCString()).toBe('Thu, 01 Jan 2026 10:37:20 GMT');
    expect(s.append('training', 2).instant).toBe('2026-01-01T01:00:00Z');
    expect(s.simulateDays(1)[0].day).toBe('2026-01-02');
  });

  it('moves every date by whole days with another anchor', async () => {
    const s = await sandbox({ seed: 1, trainingRecords: 400, phishingRecords: 400, anchor: '2026-01-11' });
    expect([...s.records('training')][0]).toMatchObject({ availableFrom: '2025-01-29T00:00:00Z', completedAt: '2025-05-04T12:20:00Z' });
    expect(s.append('phishing', 1).instant).toBe('2026-01-11T01:00:00Z');
  });

  it('refuses an anchor that is not a day, saying the form', async () => {
    await expect(startSandbox({ anchor: '2026-02-30', log: () => undefined })).rejects.toThrow('anchor must be a day YYYY-MM-DD (the synthetic history ends before it), got "2026-02-30"');
    await expect(startSandbox({ anchor: '2026-01-01T00:00:00Z', log: () => undefined })).rejects.toThrow(/anchor must be a day YYYY-MM-DD/);
  });
});
