import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { runTap, syncOk } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { type JsonObject, lastState, recordMessages, recordsOf, schemasOf, type SingerMessage, statesOf, recordFields } from '../helpers/messages.js';
import { instant, maxInstant, withoutFields } from '../helpers/records.js';
import { REPLICATION_KEY, type Sandbox, sandboxRecords, startTestSandbox, tapConfig } from '../helpers/sandbox.js';

interface Catalog {
  streams: Array<{ tap_stream_id: string; metadata: Array<{ breadcrumb: string[]; metadata: Record<string, unknown> }>; [key: string]: unknown }>;
}

function setMetadata(catalog: Catalog, stream: string, breadcrumb: string[], values: Record<string, unknown>): Catalog {
  const copy = structuredClone(catalog);
  const entry = copy.streams.find((s) => s.tap_stream_id === stream)!;
  const meta = entry.metadata.find((m) => JSON.stringify(m.breadcrumb) === JSON.stringify(breadcrumb));
  if (!meta) throw new Error(`no metadata ${JSON.stringify(breadcrumb)} in ${stream}`);
  Object.assign(meta.metadata, values);
  return copy;
}

/** Messages without time_extracted, for comparing two runs. */
/** Messages but for what the clock writes: time_extracted, and the table version of a full pass (its start), when it ran and fell due. */
function comparable(messages: SingerMessage[]): unknown[] {
  return messages.map((m) => {
    if (m.type === 'RECORD') return { ...m, time_extracted: undefined, version: typeof m.version };
    if (m.type === 'ACTIVATE_VERSION') return { ...m, version: typeof m.version };
    if (m.type !== 'STATE') return m;
    const value = structuredClone(m.value);
    for (const bookmark of Object.values(value.bookmarks ?? {})) {
      if (bookmark.full_pass) bookmark.full_pass = { ...bookmark.full_pass, at: '-', due: '-', version: -1 };
      // Each run writes a change store generation of its own.
      if (bookmark.store) bookmark.store = { ...bookmark.store, generation: '-' };
    }
    return { ...m, value };
  });
}

describe.concurrent('stream and field selection through the catalog', () => {
  let sandbox: Sandbox;
  let config: JsonObject;
  let catalog: Catalog;

  beforeAll(async () => {
    await ensureBuilt();
    sandbox = await startTestSandbox({ trainingRecords: 300, phishingRecords: 300 });
    config = tapConfig(sandbox);
    const discovered = await runTap(['--discover']);
    expect(discovered.code).toBe(0);
    catalog = JSON.parse(discovered.stdout) as Catalog;
  });

  afterAll(async () => {
    await sandbox?.close();
  });

  it('the discovered catalog, unchanged, syncs both streams fully', async () => {
    const run = await syncOk({ config, catalog });
    expect(recordsOf(run.messages, 'training')).toEqual(sandboxRecords(sandbox, 'training'));
    expect(recordsOf(run.messages, 'phishing')).toEqual(sandboxRecords(sandbox, 'phishing'));
  });

  it('a deselected stream gets no SCHEMA, RECORD or bookmark and is not requested', async () => {
    const deselected = setMetadata(catalog, 'phishing', [], { selected: false });
    // Its own sandbox: the request count must not see the other (concurrent) tests.
    const own = await startTestSandbox({ trainingRecords: 50, phishingRecords: 50 });
    try {
      const run = await syncOk({ config: tapConfig(own), catalog: deselected });
      expect(run.messages.filter((m) => m.type !== 'STATE' && m.stream === 'phishing')).toEqual([]);
      expect(schemasOf(run.messages).map((m) => m.stream)).toEqual(['training']);
      expect(recordsOf(run.messages, 'training')).toEqual(sandboxRecords(own, 'training'));
      expect(lastState(run.messages).bookmarks?.phishing).toBeUndefined();
      expect(own.stats().requests).toBe(1);
    } finally {
      await own.close();
    }
  });

  it('a deselected field is absent from the SCHEMA and every RECORD; automatic fields (keys, replication key) stay', async () => {
    let narrowed = catalog;
    for (const field of ['email', 'score', 'userId', 'moduleId', 'completedAt']) {
      narrowed = setMetadata(narrowed, 'training', ['properties', field], { selected: false });
    }
    for (const field of ['templateName', 'campaignId', 'sentAt']) {
      narrowed = setMetadata(narrowed, 'phishing', ['properties', field], { selected: false });
    }
    const run = await syncOk({ config, catalog: narrowed });

    const training = recordFields(schemasOf(run.messages, 'training')[0]);
    expect(training).not.toContain('email');
    expect(training).not.toContain('score');
    for (const field of ['userId', 'programId', 'moduleId', 'completedAt', 'firstName']) expect(training).toContain(field);
    const phishing = recordFields(schemasOf(run.messages, 'phishing')[0]);
    expect(phishing).not.toContain('templateName');
    for (const field of ['userId', 'campaignId', 'sentAt', 'email']) expect(phishing).toContain(field);
    expect(schemasOf(run.messages, 'phishing')[0].key_properties).toEqual(['userId', 'campaignId']);

    const trainingRecords = recordsOf(run.messages, 'training');
    expect(trainingRecords).toEqual(sandboxRecords(sandbox, 'training').map((r) => withoutFields(r, ['email', 'score'])));
    for (const r of trainingRecords) {
      expect(r).not.toHaveProperty('email');
      expect(r).not.toHaveProperty('score');
    }
    expect(recordsOf(run.messages, 'phishing')).toEqual(sandboxRecords(sandbox, 'phishing').map((r) => withoutFields(r, ['templateName'])));
    // The bookmarks are still written from the (automatic) replication keys.
    const state = lastState(run.messages);
    expect(instant(state.bookmarks!.training.replication_key_value)).toBe(maxInstant(sandboxRecords(sandbox, 'training'), 'completedAt'));
    expect(instant(state.bookmarks!.phishing.replication_key_value)).toBe(maxInstant(sandboxRecords(sandbox, 'phishing'), 'sentAt'));
  });

  it('--properties works like --catalog', async () => {
    const narrowed = setMetadata(setMetadata(catalog, 'phishing', [], { selected: false }), 'training', ['properties', 'lastName'], { selected: false });
    const configPath = writeTempJson(config);
    const catalogPath = writeTempJson(narrowed);
    const [viaCatalog, viaProperties] = await Promise.all([
      runTap(['--config', configPath, '--catalog', catalogPath]),
      runTap(['--config', configPath, '--properties', catalogPath]),
    ]);
    expect(viaCatalog.code).toBe(0);
    expect(viaProperties.code).toBe(0);
    expect(recordsOf(viaProperties.messages, 'training')).toHaveLength(300);
    expect(recordsOf(viaProperties.messages, 'training')[0]).not.toHaveProperty('lastName');
    expect(recordMessages(viaProperties.messages, 'phishing')).toHaveLength(0);
    expect(comparable(viaProperties.messages)).toEqual(comparable(viaCatalog.messages));
  });

  describe('FULL_TABLE through replication-method in the catalog', () => {
    let fullTable: Catalog;

    beforeAll(() => {
      fullTable = setMetadata(catalog, 'training', [], { 'replication-method': 'FULL_TABLE' });
    });

    it('emits every record, including those with a null replication key, without bookmark properties', async () => {
      const run = await syncOk({ config, catalog: fullTable });
      const all = sandboxRecords(sandbox, 'training');
      expect(all.some((r) => r.completedAt === null)).toBe(true);
      expect(recordsOf(run.messages, 'training')).toEqual(all);
      expect(schemasOf(run.messages, 'training')[0].bookmark_properties).toEqual([]);
      expect(lastState(run.messages).bookmarks?.training?.replication_key_value).toBeUndefined();
      // The other stream stays incremental.
      expect(schemasOf(run.messages, 'phishing')[0].bookmark_properties).toEqual(['sentAt']);
    });

    it('ignores an incremental bookmark and start_date: every run emits the whole table', async () => {
      const state = {
        bookmarks: {
          training: { replication_key: 'completedAt', replication_key_value: '2025-09-01T00:00:00Z' },
          // A recent full pass: the incremental stream's run is not one.
          phishing: { replication_key: 'sentAt', replication_key_value: '2025-09-01T00:00:00Z', full_pass: { at: new Date().toISOString() } },
        },
      };
      // A state made by hand: without the change store, which would not trust it and make the incremental stream's run a full pass.
      const run = await syncOk({ config: { ...config, start_date: '2025-06-01T00:00:00Z', send_changes_only: false }, catalog: fullTable, state });
      expect(recordsOf(run.messages, 'training')).toEqual(sandboxRecords(sandbox, 'training'));
      // ...while the incremental stream only sends what is new.
      const newer = sandboxRecords(sandbox, 'phishing', { sentAt: '>=2025-09-01T00:00:00Z' });
      expect(newer.length).toBeLessThan(300);
      expect(recordsOf(run.messages, 'phishing')).toEqual(newer);
    });

    it('after a change, the next run emits the whole table again, not just the change', async () => {
      // Its own sandbox: the change must not reach the other (concurrent) tests.
      const own = await startTestSandbox({ trainingRecords: 100, phishingRecords: 10 });
      try {
        const first = await syncOk({ config: tapConfig(own), catalog: fullTable });
        own.append('training', 4);
        own.update('training', 2);
        const second = await syncOk({ config: tapConfig(own), catalog: fullTable, state: lastState(first.messages) });
        const all = sandboxRecords(own, 'training');
        expect(all).toHaveLength(104);
        expect(recordsOf(second.messages, 'training')).toEqual(all);
        for (const m of statesOf(second.messages)) expect(m.value.bookmarks?.training?.replication_key_value).toBeUndefined();
      } finally {
        await own.close();
      }
    });

    // A FULL_TABLE run answered 304 would send a SCHEMA and no record: a target
    // with load_method overwrite (Meltano SDK SQL targets recreate the table at
    // SCHEMA) would be left empty. So FULL_TABLE never sends If-Modified-Since.
    it('reads an unchanged dump whole again given the last run\'s state (no If-Modified-Since in FULL_TABLE), and a changed one too', async () => {
      const first = await syncOk({ config, catalog: fullTable });
      const unchanged = await syncOk({ config, catalog: fullTable, state: lastState(first.messages) });
      expect(recordsOf(unchanged.messages, 'training')).toEqual(sandboxRecords(sandbox, 'training'));
      expect(unchanged.stderr).not.toMatch(/training: unchanged \(HTTP 304\)/);
      expect(unchanged.stderr).toMatch(/phishing: unchanged \(HTTP 304\)/);
      sandbox.append('training', 1);
      const changed = await syncOk({ config, catalog: fullTable, state: lastState(unchanged.messages) });
      expect(recordsOf(changed.messages, 'training')).toEqual(sandboxRecords(sandbox, 'training'));
    });
  });

  it('rejects a catalog with an unsupported replication key with exit 2', async () => {
    const badKey = setMetadata(catalog, 'training', [], { 'replication-key': 'lastActivityAt' });
    const run2 = await runTap(['--config', writeTempJson(config), '--catalog', writeTempJson(badKey)]);
    expect(run2.code).toBe(2);
    expect(run2.stderr).toMatch(new RegExp(`lastActivityAt.*${REPLICATION_KEY.training}`));
    expect(run2.stdout).toBe('');
  });
});
