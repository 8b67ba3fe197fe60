import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { runTap, syncOk } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { type JsonObject, lastState, recordsOf } from '../helpers/messages.js';
import { REPLICATION_KEY, type Sandbox, startTestSandbox, STREAM_NAMES, tapConfig } from '../helpers/sandbox.js';
import { layoutFor, type LayoutName } from '../../sandbox/layout.js';
import { afterBookmark, expectRenamedRecords, lastIncrementalRequest } from '../helpers/incremental.js';
import { airbyteBookmark, airbyteBookmarkField, airbyteMessages, airbyteRecords, airbyteStates, discoveredStreams, incrementalCatalog } from '../helpers/airbyte.js';
import { PHISHING, TRAINING } from '../../src/catalog/reports.js';

/**
 * Layouts the packaged schemas do not use, end to end: the sandbox serves the
 * same records as snake_case with dates without a zone (in Europe/Berlin), or
 * as Title Case with yes/no booleans and semicolon CSV. Live discovery learns
 * names, types, keys and the replication key; a full sync gives every field
 * of every record with the values of a second sandbox serving the packaged
 * layout (dates as UTC instants); an incremental run after the admin changes
 * gives exactly the changed records and asks with the documented >= filter;
 * a third run gets HTTP 304. In both protocols, in JSONL and CSV.
 */

const TIME_ZONE = 'Europe/Berlin';
const sandboxes: Sandbox[] = [];

beforeAll(async () => {
  await ensureBuilt();
});

afterAll(async () => {
  await Promise.all(sandboxes.map((s) => s.close()));
});

interface Pair {
  /** Serves the layout under test. */
  served: Sandbox;
  /** Serves the same records in the packaged layout: the truth to compare with. */
  truth: Sandbox;
  layout: LayoutName;
  /** A packaged field's name in the layout: the truth's records under these names are what the tap must emit (dates already UTC with Z, booleans as booleans). */
  servedName: (field: string) => string;
}

async function pair(layout: LayoutName, timeZone = TIME_ZONE): Promise<Pair> {
  const options = { trainingRecords: 160, phishingRecords: 160, seed: 7 };
  const [served, truth] = await Promise.all([startTestSandbox({ ...options, layout, layoutTimeZone: timeZone }), startTestSandbox(options)]);
  sandboxes.push(served, truth);
  return { served, truth, layout, servedName: layoutFor(layout, { offsetMinutes: 0, timeZone }).fieldName };
}

/** Changes both sandboxes alike: training rows appended and completed, phishing sends appended. */
function mutate({ served, truth }: Pair): void {
  for (const sandbox of [served, truth]) {
    sandbox.append('training', 6);
    sandbox.update('training', 4);
    sandbox.append('phishing', 30);
  }
}

const configFor = (p: Pair, format: 'jsonl' | 'csv'): JsonObject => tapConfig(p.served, { format, ...(p.layout === 'snake' ? { source_timezone: TIME_ZONE } : {}) });

const cases = (['snake', 'title'] as const).flatMap((layout) => (['jsonl', 'csv'] as const).map((format) => [layout, format] as const));

describe.concurrent('Singer, on layouts the packaged schemas do not use', () => {
  it.each(cases)('%s %s: live discovery, a full sync equal to the packaged truth, an exact incremental run with the >= filter, then 304', async (layout, format) => {
    const p = await pair(layout);
    const config = writeTempJson(configFor(p, format));
    const discovered = await runTap(['discover', '--config', config]);
    expect(discovered.code, discovered.stderr).toBe(0);
    const catalog = JSON.parse(discovered.stdout) as { streams: Array<{ stream: string; key_properties: string[]; replication_key: string; schema: { properties: Record<string, JsonObject> } }> };
    for (const [stream, descriptor] of [['training', TRAINING], ['phishing', PHISHING]] as const) {
      const entry = catalog.streams.find((s) => s.stream === stream)!;
      expect(entry.key_properties).toEqual(descriptor.keyProperties.map(p.servedName));
      expect(entry.replication_key).toBe(p.servedName(descriptor.replicationKey));
      const properties = entry.schema.properties;
      expect(properties[p.servedName(descriptor.replicationKey)]).toMatchObject({ format: 'date-time' });
      expect(Object.keys(properties)).toEqual(Object.keys([...p.truth.records(stream)][0]).map(p.servedName));
    }
    expect(catalog.streams[0].schema.properties[p.servedName('completed')]).toMatchObject({ type: ['boolean', 'null'] });
    const catalogPath = writeTempJson(catalog);

    const first = await syncOk({ config: configFor(p, format), catalog });
    for (const stream of STREAM_NAMES) expectRenamedRecords(recordsOf(first.messages, stream), p.truth, stream, p.servedName);
    const s1 = lastState(first.messages);
    expect(s1.bookmarks!.training.replication_key).toBe(p.servedName('completedAt'));

    mutate(p);
    const second = await runTap(['sync', '--config', config, '--catalog', catalogPath, '--state', writeTempJson(s1)]);
    expect(second.code, second.stderr).toBe(0);
    for (const stream of STREAM_NAMES) {
      const bookmark = s1.bookmarks![stream].replication_key_value as string;
      expectRenamedRecords(recordsOf(second.messages, stream), p.truth, stream, p.servedName, afterBookmark(stream, bookmark));
      const asked = lastIncrementalRequest(p.served, stream)!;
      expect(asked.filters).toEqual({ [REPLICATION_KEY[stream]]: `>=${bookmark}` });
    }

    const third = await runTap(['sync', '--config', config, '--catalog', catalogPath, '--state', writeTempJson(lastState(second.messages))]);
    expect(third.code, third.stderr).toBe(0);
    expect(recordsOf(third.messages, 'training')).toEqual([]);
    expect(third.stderr).toMatch(/training: dump unchanged since .* \(HTTP 304\)/);
  });
});

describe.concurrent('Airbyte, on layouts the packaged schemas do not use', () => {
  it.each(cases)('%s %s: discover names the primary key as served, the bookmark keeps to the replication key as served; read gives the packaged truth; an incremental read gives the changes', async (layout, format) => {
    const p = await pair(layout);
    const config = writeTempJson(configFor(p, format));
    const streams = discoveredStreams((await runTap(['airbyte', 'discover', '--config', config])).stdout);
    const training = streams.find((s) => s.name === 'training')!;
    expect(training.default_cursor_field).toEqual(['_ab_extracted_at']);
    expect(training.source_defined_primary_key).toEqual(TRAINING.keyProperties.map((k) => [p.servedName(k)]));
    const configured = writeTempJson(incrementalCatalog(streams));

    const read = await runTap(['airbyte', 'read', '--config', config, '--catalog', configured]);
    expect(read.code, read.stdout.slice(-2000)).toBe(0);
    const first = airbyteMessages(read.stdout);
    for (const stream of STREAM_NAMES) expectRenamedRecords(airbyteRecords(first, stream), p.truth, stream, p.servedName);
    const states = airbyteStates(first);
    expect(airbyteBookmarkField(states, 'training')).toBe(p.servedName('completedAt'));

    mutate(p);
    const again = airbyteMessages((await runTap(['airbyte', 'read', '--config', config, '--catalog', configured, '--state', writeTempJson(states)])).stdout);
    for (const stream of STREAM_NAMES) expectRenamedRecords(airbyteRecords(again, stream), p.truth, stream, p.servedName, afterBookmark(stream, airbyteBookmark(states, stream)));
  });
});

describe.concurrent('naming and dialect settings', () => {
  it('field_names snake_case renames consistently in the catalog, SCHEMA, RECORD, key properties and the bookmark', async () => {
    const p = await pair('title');
    const config = { ...configFor(p, 'jsonl'), field_names: 'snake_case' };
    const run = await syncOk({ config });
    const schema = run.messages.find((m) => m.type === 'SCHEMA' && m.stream === 'training') as { key_properties: string[]; bookmark_properties: string[]; schema: { properties: JsonObject } };
    expect(schema.key_properties).toEqual(['user_id', 'program_id', 'module_id']);
    expect(schema.bookmark_properties).toEqual(['completed_at']);
    expect(Object.keys(schema.schema.properties)).toContain('e_mail');
    const snake = (field: string): string => p.servedName(field).toLowerCase().replace(/[^a-z0-9]+/g, '_');
    expectRenamedRecords(recordsOf(run.messages, 'training'), p.truth, 'training', snake);
    expect(lastState(run.messages).bookmarks!.training.replication_key).toBe('completed_at');
  });

  it('filter_date_format date sends the day that contains the bound; the records are still exactly those after it', async () => {
    const p = await pair('packaged');
    const config = { ...configFor(p, 'jsonl'), filter_date_format: 'date', discovery: 'packaged' };
    const first = await syncOk({ config });
    const s1 = lastState(first.messages);
    mutate(p);
    const second = await syncOk({ config, state: s1 });
    for (const stream of STREAM_NAMES) {
      const bookmark = s1.bookmarks![stream].replication_key_value as string;
      expect(lastIncrementalRequest(p.served, stream)!.filters).toEqual({ [REPLICATION_KEY[stream]]: `>=${bookmark.slice(0, 10)}` });
      expectRenamedRecords(recordsOf(second.messages, stream), p.truth, stream, (f) => f, afterBookmark(stream, bookmark));
    }
  });

  it('filter_date_format date west of UTC: a bookmark in the local evening asks from its local day, so the rows before local midnight are emitted', async () => {
    // The sandboxes write appended rows an hour apart from 2026-01-01T01:00Z on: 17:00 on 31 December in Los Angeles, whose midnight is 08:00Z.
    const zone = 'America/Los_Angeles';
    const p = await pair('snake', zone);
    const appendEach = (): void => {
      for (const sandbox of [p.served, p.truth]) for (const stream of STREAM_NAMES) sandbox.append(stream, 1);
    };
    appendEach();
    const config = tapConfig(p.served, { source_timezone: zone, filter_date_format: 'date' });
    const s1 = lastState((await syncOk({ config })).messages);
    // Six rows in the evening, 18:00 to 23:00 local, and one at local midnight.
    for (let hour = 2; hour <= 8; hour++) appendEach();
    const second = await syncOk({ config, state: s1 });
    for (const stream of STREAM_NAMES) {
      const bookmark = s1.bookmarks![stream].replication_key_value as string;
      expect(bookmark).toBe('2026-01-01T01:00:00Z');
      expect(lastIncrementalRequest(p.served, stream)!.filters).toEqual({ [REPLICATION_KEY[stream]]: '>=2025-12-31' });
      expectRenamedRecords(recordsOf(second.messages, stream), p.truth, stream, p.servedName, afterBookmark(stream, bookmark));
      expect(lastState(second.messages).bookmarks![stream].replication_key_value).toBe('2026-01-01T08:00:00Z');
    }
  });

  it('schema_drift fail stops the run on a field the catalog does not declare, naming it', async () => {
    const plain = await startTestSandbox({ trainingRecords: 20, phishingRecords: 20 });
    const drifted = await startTestSandbox({ trainingRecords: 20, phishingRecords: 20, extraFields: true });
    sandboxes.push(plain, drifted);
    const catalog = JSON.parse((await runTap(['discover', '--config', writeTempJson(tapConfig(plain))])).stdout) as JsonObject;
    const run = await runTap(['sync', '--config', writeTempJson(tapConfig(drifted, { schema_drift: 'fail' })), '--catalog', writeTempJson(catalog)]);
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n').at(-1)).toBe(
      'tap-report-dump: error: training: the service sends field "department", which the catalog does not declare (schema_drift: fail). Run discover again to take it in, or set schema_drift to warn.',
    );
    // Live discovery of the drifted service takes the field in.
    const live = await syncOk({ config: tapConfig(drifted) });
    expect(recordsOf(live.messages, 'training')[0]).toHaveProperty('department');
  });
});

describe.concurrent('live discovery falls back to the packaged schema', () => {
  it('for a stream the token may not read (403), and for an empty dump, with one warning each', async () => {
    const sandbox = await startTestSandbox({
      trainingRecords: 0,
      phishingRecords: 20,
      layout: 'snake',
      tokens: [{ token: 'training-only-1234', scopes: [TRAINING.scope] }],
    });
    sandboxes.push(sandbox);
    const run = await runTap(['discover', '--config', writeTempJson({ base_url: sandbox.url, access_token: 'training-only-1234' })]);
    expect(run.code, run.stderr).toBe(0);
    const catalog = JSON.parse(run.stdout) as { streams: Array<{ stream: string; key_properties: string[] }> };
    expect(catalog.streams.map((s) => s.key_properties)).toEqual([TRAINING.keyProperties, PHISHING.keyProperties]);
    expect(run.stderr).toMatch(/training: the dump has no records to learn its layout from \(with the configured filters\), so its packaged schema is used/);
    expect(run.stderr).toMatch(/phishing: the token may not read this dump \(HTTP 403\), so its packaged schema is used; grant the scope report:phishing:read/);
  });

  it('never samples with discovery: packaged', async () => {
    const p = await pair('packaged');
    const run = await runTap(['discover', '--config', writeTempJson({ ...configFor(p, 'jsonl'), discovery: 'packaged' })]);
    expect(run.code).toBe(0);
    expect(p.served.stats().requests).toBe(0);
  });
});
