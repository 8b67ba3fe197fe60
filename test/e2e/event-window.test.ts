import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { syncOk } from '../helpers/cli.js';
import { type JsonObject, lastState, recordsOf } from '../helpers/messages.js';
import { catalogOf } from '../helpers/resilience-util.js';
import { startTenantServer } from '../helpers/tenant-server.js';
import type { FakeServer } from '../helpers/fake-server.js';
import { type Sandbox, sandboxRecords, startTestSandbox, tapConfig } from '../helpers/sandbox.js';

/**
 * The phishing event window by default, end to end: without event_window_days
 * an incremental phishing run reads every send of the last 14 days again (its
 * late opens, clicks and reports), asks the service from there, and leaves
 * the bookmark where the newest send is. The tenant server ignores date
 * filters, so the tap's own bound decides what is emitted.
 */

const servers: Array<FakeServer | Sandbox> = [];

beforeAll(async () => {
  await ensureBuilt();
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

const DAY = 86_400_000;
/** RFC 3339 UTC to the second, as the service writes dates. */
const iso = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000', '');

describe('without event_window_days, an incremental phishing run', () => {
  it('emits every send of the last 14 days again and none before, asks from 14 days before its start, and keeps the bookmark at the newest send', async () => {
    const started = Date.now();
    const sent = (user: string, daysAgo: number): JsonObject => ({ userId: user, campaignId: 'c-1', sentAt: iso(started - daysAgo * DAY), openedAt: null });
    // Hours of margin around the window's start, whenever the run starts within them.
    const beforeWindow = [sent('u-1', 30), sent('u-2', 14.25)];
    const inWindow = [sent('u-3', 13.75), { ...sent('u-4', 5), openedAt: iso(started - DAY) }, sent('u-5', 2)];
    const server = await startTenantServer({ training: [], phishing: [...beforeWindow, ...inWindow] });
    servers.push(server);
    const bookmark = iso(started - 2 * DAY);
    const state = { bookmarks: { phishing: { replication_key: 'sentAt', replication_key_value: bookmark, full_pass: { at: new Date(started).toISOString(), version: 1, rows: 5 } } } };
    // The event window as it reads, from a state made by hand: without the change store (which would not trust it, and would send only changes).
    const run = await syncOk({ config: { base_url: server.url, access_token: 'tok-anything', discovery: 'packaged', send_changes_only: false }, catalog: catalogOf(['phishing']), state });
    const finished = Date.now();

    expect(recordsOf(run.messages, 'phishing').map((r) => r.userId)).toEqual(['u-3', 'u-4', 'u-5']);
    const [request] = server.requests;
    expect(server.requests).toHaveLength(1);
    const from = new URLSearchParams(request.query).get('filter[sentAt]');
    expect(from).toMatch(/^>=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    const fromMs = Date.parse(from!.slice(2));
    expect(fromMs).toBeGreaterThanOrEqual(started - 14 * DAY);
    expect(fromMs).toBeLessThanOrEqual(finished - 14 * DAY);
    expect(lastState(run.messages).bookmarks!.phishing.replication_key_value).toBe(bookmark);
  });
});

describe('against a sandbox whose dates end before its clock (its default)', () => {
  it('a second run reads again the sends of the last 14 days, from before the bookmark: the event window meets its data', async () => {
    const sandbox = await startTestSandbox({ anchor: null });
    servers.push(sandbox);
    const config = tapConfig(sandbox, { discovery: 'packaged', send_changes_only: false });
    const catalog = catalogOf(['phishing']);
    const first = await syncOk({ config, catalog });
    const bookmark = Date.parse(lastState(first.messages).bookmarks!.phishing.replication_key_value as string);
    // A new send, so that the dump changed and the second run reads it (unchanged, it would answer 304).
    sandbox.append('phishing', 1);
    const second = await syncOk({ config, catalog, state: lastState(first.messages) });

    const read = sandbox.requestsSeen().at(-1)!;
    expect(read.stream).toBe('phishing');
    const from = read.filters.sentAt;
    expect(from, 'the event window asks from 14 days back').toMatch(/^>=/);
    const reread = sandboxRecords(sandbox, 'phishing', { sentAt: from }).filter((r) => Date.parse(r.sentAt as string) < bookmark);
    expect(reread.length, 'sends before the bookmark, in the window').toBeGreaterThan(0);
    const emitted = recordsOf(second.messages, 'phishing');
    expect(emitted).toEqual(sandboxRecords(sandbox, 'phishing', { sentAt: from }));
    expect(second.stderr).toMatch(new RegExp(`phishing: ${emitted.length} records in`));
  });
});
