import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { startTap, waitFor } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { catalogOf } from '../helpers/resilience-util.js';
import { sendDump, startFakeServer, type FakeServer } from '../helpers/fake-server.js';
import { DEMO_TOKEN, trainingDump, type Sandbox } from '../helpers/sandbox.js';

/**
 * The stop line counts what reached stdout, not what was read: records the
 * writer still held in its block when the signal came (thrown away by the
 * stop) are read, not written.
 */

let server: FakeServer;
const opened: Sandbox[] = [];

beforeAll(async () => {
  await ensureBuilt();
  // 300 records, far less than the writer's block: the first read's records wait there; the second read (the open rows) never gets an answer.
  const { body } = await trainingDump(opened, 300);
  server = await startFakeServer((_req, res, { nth }) => {
    if (nth === 1) sendDump(res, body);
  });
});

afterAll(async () => {
  await server.close();
  await Promise.all(opened.map((s) => s.close()));
});

describe('the stop line', () => {
  it('says how many records were read and that none was written to stdout while the writer held them', async () => {
    // A recent full pass and a bookmark before every record: an incremental read of every record, then the open rows.
    const state = { bookmarks: { training: { replication_key: 'completedAt', replication_key_value: '2000-01-01T00:00:00Z', full_pass: { at: new Date().toISOString() } } } };
    const config = { base_url: server.url, access_token: DEMO_TOKEN, discovery: 'packaged', send_changes_only: false, emit_activate_version_messages: false };
    const tap = startTap(['--config', writeTempJson(config), '--catalog', writeTempJson(catalogOf(['training'])), '--state', writeTempJson(state)]);
    await waitFor(() => server.requests.length >= 2, 'the second read is asked for');
    tap.kill('SIGTERM');
    const [code, signal] = await tap.closed;
    expect({ code, signal }, tap.stderr()).toEqual({ code: null, signal: 'SIGTERM' });
    expect(tap.stdout()).not.toContain('"type":"RECORD"');
    const stops = tap.stderr().split('\n').filter((line) => line.includes('stopping for'));
    expect(stops).toEqual([expect.stringMatching(/stopping for SIGTERM during training: \d+ records of it read so far, 0 of them written to stdout; the state was not advanced for training/)]);
    expect(Number(/: (\d+) records/.exec(stops[0])![1]), 'the first read\'s records were read').toBeGreaterThan(0);
  });
});
