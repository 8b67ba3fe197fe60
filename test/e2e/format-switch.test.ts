import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { syncOk } from '../helpers/cli.js';
import { lastState, recordsOf, type JsonObject } from '../helpers/messages.js';
import { startTenantServer } from '../helpers/tenant-server.js';
import type { FakeServer } from '../helpers/fake-server.js';

/**
 * Changing `format` between runs at a bookmark emits nothing twice: the
 * boundary records' hashes are of the record as conformed to its schema, so
 * a JSONL line that leaves out a member (a null it does not write) and the
 * CSV row that writes it as an empty cell hash alike. The service here is a
 * purpose-built one: the sandbox writes every null in JSONL.
 */

const servers: FakeServer[] = [];

beforeAll(async () => {
  await ensureBuilt();
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

/** Three records at the newest instant (the boundary), some with null fields, and older ones. */
const TRAINING: JsonObject[] = [0, 1, 2, 3, 4].map((i) => ({
  userId: `u-${i}`,
  email: i === 1 ? null : `person.${i}@example.com`,
  programId: 'p-1',
  moduleId: 'm-1',
  completed: true,
  completedAt: i < 3 ? '2025-06-01T10:00:00Z' : `2025-05-0${i}T10:00:00Z`,
  progress: 100,
  score: i % 2 === 0 ? null : 90 + i,
}));
const PHISHING: JsonObject[] = [0, 1].map((i) => ({ userId: `u-${i}`, campaignId: 'c-1', sentAt: '2025-06-02T09:00:00Z', openedAt: i === 0 ? null : '2025-06-03T09:00:00Z' }));

describe.concurrent('a change of format at a bookmark', () => {
  it.each([
    ['jsonl', 'csv'],
    ['csv', 'jsonl'],
  ] as const)('%s, then %s with the state: the boundary records are not emitted again, and the bookmark stays', async (before, after) => {
    const server = await startTenantServer({ training: TRAINING, phishing: PHISHING, omitNulls: true });
    servers.push(server);
    const config = { base_url: server.url, access_token: 'tok-anything', discovery: 'packaged' };
    const first = await syncOk({ config: { ...config, format: before } });
    expect(recordsOf(first.messages, 'training')).toHaveLength(5);
    const state = lastState(first.messages);
    expect(state.bookmarks!.training.boundary_hashes).toHaveLength(3);

    const second = await syncOk({ config: { ...config, format: after }, state });
    expect(recordsOf(second.messages, 'training')).toEqual([]);
    expect(recordsOf(second.messages, 'phishing')).toEqual([]);
    expect(lastState(second.messages).bookmarks!.training).toMatchObject({ replication_key_value: '2025-06-01T10:00:00Z', boundary_hashes: state.bookmarks!.training.boundary_hashes });
  });
});
