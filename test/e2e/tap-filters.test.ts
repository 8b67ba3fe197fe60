import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { runTap, syncOk } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { tapSettingsFor } from '../../sandbox/layout.js';
import { type JsonObject, lastState, recordMessages, recordsOf } from '../helpers/messages.js';
import { instant } from '../helpers/records.js';
import { type Sandbox, sandboxRecords, startTestSandbox, tapConfig } from '../helpers/sandbox.js';

describe.concurrent('config filters narrow what the dump returns', () => {
  let sandbox: Sandbox;
  let config: JsonObject;

  beforeAll(async () => {
    await ensureBuilt();
    sandbox = await startTestSandbox({ trainingRecords: 400, phishingRecords: 400 });
    config = tapConfig(sandbox);
  });

  afterAll(async () => {
    // No test here may make the service answer 400 (a badly encoded filter would).
    expect(sandbox.stats().byStatus['400']).toBeUndefined();
    await sandbox?.close();
  });

  /** Records the filter should give, checked to be a real, non-trivial subset. */
  function subset(stream: 'training' | 'phishing', filters: Record<string, string>, from: Sandbox = sandbox): JsonObject[] {
    const expected = sandboxRecords(from, stream, filters);
    expect(expected.length, `${JSON.stringify(filters)} matches nothing`).toBeGreaterThan(0);
    expect(expected.length, `${JSON.stringify(filters)} matches everything`).toBeLessThan(from.recordCount(stream));
    return expected;
  }

  it('a string filter (program) gives exactly the matching records, for that stream only', async () => {
    const program = String(sandboxRecords(sandbox, 'training')[17].programId);
    const expected = subset('training', { program });
    const run = await syncOk({ config: { ...config, filters: { training: { program } } } });
    const records = recordsOf(run.messages, 'training');
    expect(records).toEqual(expected);
    expect(records.every((r) => r.programId === program)).toBe(true);
    expect(recordsOf(run.messages, 'phishing')).toEqual(sandboxRecords(sandbox, 'phishing'));
  });

  it('completed: false gives the incomplete rows (with null completedAt) on a first run', async () => {
    const expected = subset('training', { completed: 'false' });
    expect(expected.every((r) => r.completedAt === null)).toBe(true);
    const run = await syncOk({ config: { ...config, filters: { training: { completed: false } } } });
    expect(recordsOf(run.messages, 'training')).toEqual(expected);
    // Nothing with a replication key was emitted: no bookmark value to write.
    expect(lastState(run.messages).bookmarks!.training.replication_key_value ?? null).toBeNull();
  });

  it('a date filter with >= on availableFrom; a campaign filter on phishing', async () => {
    const expected = subset('training', { availableFrom: '>=2025-01-01' });
    const campaign = String(sandboxRecords(sandbox, 'phishing')[150].campaignId);
    const run = await syncOk({ config: { ...config, filters: { training: { availableFrom: '>=2025-01-01' }, phishing: { campaign } } } });
    expect(recordsOf(run.messages, 'training')).toEqual(expected);
    expect(recordsOf(run.messages, 'phishing')).toEqual(subset('phishing', { campaign }));
    expect(recordsOf(run.messages, 'training').every((r) => instant(r.availableFrom) >= Date.parse('2025-01-01T00:00:00Z'))).toBe(true);
  });

  it('combines with the incremental bookmark: only new matching records on the next run', async () => {
    // Its own sandbox: the change must not reach the other (concurrent) tests.
    const own = await startTestSandbox({ trainingRecords: 400, phishingRecords: 20 });
    try {
      const program = 'prog-01';
      const filtered = { ...tapConfig(own), filters: { training: { program } } };
      const first = await syncOk({ config: filtered });
      expect(recordsOf(first.messages, 'training')).toEqual(subset('training', { program }, own));
      const bookmark = lastState(first.messages).bookmarks!.training.replication_key_value!;
      // The bookmark is the newest completedAt of the filtered records, not of the whole stream.
      const newest = Math.max(...subset('training', { program }, own).filter((r) => r.completedAt !== null).map((r) => instant(r.completedAt)));
      expect(instant(bookmark)).toBe(newest);

      own.append('training', 40);
      own.update('training', 20);
      const second = await syncOk({ config: filtered, state: lastState(first.messages) });
      const alreadySent = new Set(recordsOf(first.messages, 'training').map((r) => JSON.stringify(r)));
      const expected = sandboxRecords(own, 'training', { program, completedAt: `>=${bookmark}` }).filter((r) => !alreadySent.has(JSON.stringify(r)));
      expect(expected.length).toBeGreaterThan(0);
      // The open rows are read with the same filter too; unchanged since the first run, none is sent again (the change store).
      expect(sandboxRecords(own, 'training', { program, completed: 'false' }).length).toBeGreaterThan(0);
      expect(recordsOf(second.messages, 'training')).toEqual(expected);
      expect(recordsOf(second.messages, 'training').every((r) => r.programId === program && (r.completedAt === null || instant(r.completedAt) > instant(bookmark)))).toBe(true);
      expect(own.requestsSeen().filter((r) => r.stream === 'training').at(-1)!.filters).toEqual({ program, completed: 'false' });
    } finally {
      await own.close();
    }
  });

  describe('a filter on the replication key combined with a bookmark', () => {
    const bookmark = '2025-05-01T00:00:00Z';
    // A recent full pass: these runs are incremental. A configured completedAt filter selects completed rows: no open rows are read.
    const state = { bookmarks: { training: { replication_key: 'completedAt', replication_key_value: bookmark, full_pass: { at: new Date().toISOString() } } } };

    /** What the incremental read asks and takes, from a state made by hand (without the change store, which would not trust it and make a full pass). */
    function trainingOnly(filters: JsonObject): JsonObject {
      return { ...config, send_changes_only: false, filters: { training: filters, phishing: { sentAt: '>=9999-01-01' } } };
    }

    it('a later >= filter wins over the bookmark', async () => {
      const run = await syncOk({ config: trainingOnly({ completedAt: '>=2025-08-01' }), state });
      expect(recordsOf(run.messages, 'training')).toEqual(subset('training', { completedAt: '>=2025-08-01' }));
      expect(recordMessages(run.messages, 'phishing')).toHaveLength(0);
    });

    it('an earlier >= filter gives way to the bookmark', async () => {
      const run = await syncOk({ config: trainingOnly({ completedAt: '>=2024-02-01' }), state });
      expect(recordsOf(run.messages, 'training')).toEqual(subset('training', { completedAt: `>=${bookmark}` }));
    });

    it('a <= filter keeps applying together with the bookmark', async () => {
      const run = await syncOk({ config: trainingOnly({ completedAt: '<=2025-09-01' }), state });
      const expected = subset('training', { completedAt: '<=2025-09-01' }).filter((r) => instant(r.completedAt) >= Date.parse(bookmark));
      expect(expected.length).toBeGreaterThan(0);
      expect(recordsOf(run.messages, 'training')).toEqual(expected);
    });
  });

  describe('filter values that need URL encoding', () => {
    it('an e-mail address with + is sent correctly and matches its records', async () => {
      const withPlus = sandboxRecords(sandbox, 'training').find((r) => typeof r.email === 'string' && r.email.includes('+'));
      expect(withPlus).toBeDefined();
      const email = String(withPlus!.email);
      const run = await syncOk({ config: { ...config, filters: { training: { email }, phishing: { email } } } });
      expect(recordsOf(run.messages, 'training')).toEqual(subset('training', { email }));
      expect(recordsOf(run.messages, 'phishing')).toEqual(subset('phishing', { email }));
    });

    it('a value with &, =, %, # and spaces, or non-ASCII, is one parameter: HTTP 200 and no record, not HTTP 400', async () => {
      // Sent unencoded, this would add the parameters b and filter[email] (HTTP 400), a bad %-escape and a fragment.
      const email = 'a&b=1&filter[email]=x %zz #c+d@example.com';
      const run = await syncOk({ config: { ...config, filters: { training: { email }, phishing: { email: 'søren.schröder@例え.jp' } } } });
      expect(recordMessages(run.messages)).toHaveLength(0);
      // Both dumps were answered (200, empty): each stream wrote its bookmark entry.
      expect(Object.keys(lastState(run.messages).bookmarks ?? {}).sort()).toEqual(['phishing', 'training']);
      expect(lastState(run.messages).bookmarks!.training.last_modified).toBe(sandbox.lastModified('training').toUTCString());
    });
  });
});

describe('filter_date_format in Unix time', () => {
  it('writes a configured date filter in Unix time in discovery\'s sample requests too, as the sync sends it', async () => {
    await ensureBuilt();
    const epoch = await startTestSandbox({ trainingRecords: 60, phishingRecords: 60, layout: 'epoch' });
    try {
      const settings = { ...tapConfig(epoch), ...tapSettingsFor('epoch'), filter_date_format: 'epoch_seconds', filters: { phishing: { sentAt: '>=2025-01-01' } } };
      const discovered = await runTap(['discover', '--config', writeTempJson(settings)]);
      expect(discovered.code, discovered.stderr).toBe(0);
      const sampled = epoch.requestsSeen().filter((r) => r.stream === 'phishing');
      expect(sampled.map((r) => r.filters)).toEqual([{ sentAt: '>=1735689600' }]);
    } finally {
      await epoch.close();
    }
  });
});
