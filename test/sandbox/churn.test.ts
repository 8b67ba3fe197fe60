import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { FIXED_ANCHOR } from '../../sandbox/placement.js';
import { LATE_EVENT_DAYS } from '../../sandbox/churn.js';
import { keyOf } from '../helpers/records.js';
import { KEY_PROPERTIES, rowsByKey } from '../helpers/sandbox.js';

/**
 * Simulated days: an organisation that churns as a real tenant's does, over
 * HTTP and in process. Each kind of change is checked against the records
 * before and after one day.
 */

const sandboxes: Sandbox[] = [];

afterAll(async () => {
  await Promise.all(sandboxes.map((s) => s.close()));
});

async function sandbox(options: { simulateDays?: number } = {}): Promise<Sandbox> {
  const started = await startSandbox({ anchor: FIXED_ANCHOR, seed: 5, trainingRecords: 800, phishingRecords: 800, log: () => undefined, ...options });
  sandboxes.push(started);
  return started;
}

const ms = (v: unknown): number => Date.parse(v as string);

describe('a simulated day', () => {
  it('brings joiners, progress, completions, corrections, reassignments, a phishing wave, late events and leavers, on the next calendar day', async () => {
    const s = await sandbox();
    // A first day sends a wave; the second gets late events on it.
    const [first] = s.simulateDays(1);
    expect(first.phishing.events).toBe(0);
    const before = { training: rowsByKey(s, 'training'), phishing: rowsByKey(s, 'phishing'), modified: s.lastModified('training').getTime() };
    const [day] = s.simulateDays(1);
    const after = { training: rowsByKey(s, 'training'), phishing: rowsByKey(s, 'phishing') };
    expect([first.day, day.day]).toEqual(['2026-01-02', '2026-01-03']);
    expect(day.now).toBe('2026-01-03T23:59:59Z');
    const start = Date.parse('2026-01-03T00:00:00Z');

    // Joiners: users new to both reports, 8 open assignments each, available from the day.
    const joined = [...after.training.values()].filter((r) => !before.training.has(keyOf(r, KEY_PROPERTIES.training)));
    expect(joined).toHaveLength(day.training.joined);
    expect(day.training.joined % 8).toBe(0);
    for (const r of joined) expect(r).toMatchObject({ completed: false, completedAt: null, progress: 0, score: null, availableFrom: '2026-01-03T00:00:00Z' });

    // Changes to rows that were there: each of a kind the day reports.
    const changed = [...before.training].filter(([k, r]) => after.training.has(k) && JSON.stringify(after.training.get(k)) !== JSON.stringify(r));
    const kinds = { progressed: 0, completed: 0, corrected: 0, reassigned: 0 };
    for (const [k, was] of changed) {
      const now = after.training.get(k)!;
      if (was.completed === false && now.completed === true) {
        kinds.completed++;
        expect(ms(now.completedAt)).toBeGreaterThanOrEqual(start);
      } else if (was.completed === true && now.completed === false) {
        kinds.reassigned++;
        expect([now.completedAt, now.score, now.progress]).toEqual([null, null, 0]);
      } else if (was.completed === true) {
        kinds.corrected++;
        expect(now.completedAt).toBe(was.completedAt);
        expect(now.score).not.toBe(was.score);
      } else {
        kinds.progressed++;
        expect(now.progress as number).toBeGreaterThan(was.progress as number);
      }
    }
    // A row changes in one way a day at most.
    expect(kinds.completed).toBe(day.training.completed);
    expect(kinds.progressed).toBe(day.training.progressed);
    expect(kinds.corrected).toBe(day.training.corrected);
    expect(kinds.reassigned).toBe(day.training.reassigned);
    expect(day.corrected).toHaveLength(day.training.corrected);
    expect(Object.values(day.training).every((n) => n > 0)).toBe(true);

    // Leavers are gone from both reports, every row of theirs.
    expect(day.leavers.length).toBeGreaterThan(0);
    for (const stream of ['training', 'phishing'] as const) {
      expect([...after[stream].values()].some((r) => day.leavers.includes(r.userId as string)), stream).toBe(false);
      expect([...before[stream].values()].some((r) => day.leavers.includes(r.userId as string)), stream).toBe(true);
    }
    expect(s.recordCount('training')).toBe(after.training.size);

    // A wave of sends on the day, and late events on sends of the last days only (sentAt unchanged).
    const sent = [...after.phishing.values()].filter((r) => !before.phishing.has(keyOf(r, KEY_PROPERTIES.phishing)));
    expect(sent.length).toBe(day.phishing.sent);
    for (const r of sent) expect(ms(r.sentAt)).toBeGreaterThanOrEqual(start);
    const opened = [...before.phishing].filter(([k, r]) => r.openedAt === null && after.phishing.get(k)?.openedAt != null);
    expect(opened.length).toBe(day.phishing.events);
    for (const [k, was] of opened) {
      expect(after.phishing.get(k)!.sentAt).toBe(was.sentAt);
      expect(ms(was.sentAt)).toBeGreaterThanOrEqual(start - LATE_EVENT_DAYS * 86_400_000);
    }
    expect(s.lastModified('training').getTime()).toBeGreaterThan(before.modified);
  });

  it('is the same for the same seed and days: in process, with simulateDays at start, and over the admin endpoint', async () => {
    const [inProcess, atStart, overHttp] = await Promise.all([sandbox(), sandbox({ simulateDays: 3 }), sandbox()]);
    inProcess.simulateDays(3);
    const res = await request(`${overHttp.url}/_admin/simulate?days=3`, { method: 'POST' });
    expect(res.statusCode).toBe(200);
    const body = (await res.body.json()) as { days: Array<{ day: string; now: string }> };
    expect(body.days.map((d) => d.day)).toEqual(['2026-01-02', '2026-01-03', '2026-01-04']);
    for (const stream of ['training', 'phishing'] as const) {
      const expected = inProcess.dump(stream, 'jsonl');
      expect(atStart.dump(stream, 'jsonl'), stream).toBe(expected);
      expect(overHttp.dump(stream, 'jsonl'), stream).toBe(expected);
    }
  });

  it('refuses a days parameter that is no count (400 naming it)', async () => {
    const s = await sandbox();
    const res = await request(`${s.url}/_admin/simulate?days=many`, { method: 'POST' });
    expect(res.statusCode).toBe(400);
    expect(await res.body.json()).toMatchObject({ error: 'invalid_parameter', parameter: 'days' });
  });
});
