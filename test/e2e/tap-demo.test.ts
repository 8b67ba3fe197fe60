import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { runTap, type TapRun } from '../helpers/cli.js';
import { activationsOf, lastState, recordMessages, schemasOf, statesOf } from '../helpers/messages.js';
import { STREAM_NAMES } from '../helpers/sandbox.js';

/** What `npm start` runs (`node dist/src/cli.js demo`), with a small dataset. */
describe('demo', () => {
  let run: TapRun;

  beforeAll(async () => {
    await ensureBuilt();
    run = await runTap(['demo', '--records', '50']);
  });

  it('exits 0', () => {
    expect(run.code, run.stderr).toBe(0);
  });

  it('prints SCHEMA, ACTIVATE_VERSION (a first run is a full pass), 50 RECORDs and a STATE for each stream, and nothing else, on stdout', () => {
    for (const stream of STREAM_NAMES) {
      expect(schemasOf(run.messages, stream)).toHaveLength(1);
      expect(activationsOf(run.messages, stream)).toHaveLength(1);
      expect(recordMessages(run.messages, stream)).toHaveLength(50);
    }
    expect(statesOf(run.messages)).toHaveLength(2);
    expect(run.messages).toHaveLength(2 * (1 + 1 + 50) + 2);
    const final = lastState(run.messages);
    for (const stream of STREAM_NAMES) expect(final.bookmarks?.[stream]?.replication_key_value).toEqual(expect.any(String));
  });

  it('writes a summary to stderr: the sandbox URL, a line per stream and the total', () => {
    expect(run.stderr).toMatch(/sandbox serving at http:\/\/127\.0\.0\.1:\d+ with 50 records per stream in the packaged layout/);
    for (const stream of STREAM_NAMES) expect(run.stderr).toMatch(new RegExp(`${stream}: 50 records`));
    expect(run.stderr).toMatch(/done, 100 RECORD messages/);
    expect(run.stderr).not.toMatch(/error/i);
  });
});

describe('demo --layout epoch', () => {
  it('discovers the layout live with the settings such a tenant sets, and syncs both streams with a bookmark each', async () => {
    await ensureBuilt();
    const run = await runTap(['demo', '--records', '40', '--layout', 'epoch']);
    expect(run.code, run.stderr).toBe(0);
    for (const stream of STREAM_NAMES) expect(recordMessages(run.messages, stream)).toHaveLength(40);
    expect(schemasOf(run.messages, 'training')[0].key_properties).toEqual(['learner', 'course', 'lesson']);
    const final = lastState(run.messages);
    expect([final.bookmarks?.training?.replication_key, final.bookmarks?.phishing?.replication_key]).toEqual(['finished', 'delivered']);
    for (const stream of STREAM_NAMES) expect(final.bookmarks?.[stream]?.replication_key_value).toMatch(/^20\d\d-\d\d-\d\dT.*Z$/);
  });
});
