import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { runTap } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { lastState, recordsOf, type JsonObject } from '../helpers/messages.js';
import { REPLICATION_KEY, type Sandbox, startTestSandbox, type Stream, STREAM_NAMES, tapConfig } from '../helpers/sandbox.js';
import { layoutFor } from '../../sandbox/layout.js';
import { toSnakeCase } from '../../src/catalog/field-names.js';
import { afterBookmark, expectRenamedRecords, lastIncrementalRequest } from '../helpers/incremental.js';
import { airbyteBookmark, airbyteBookmarkField, airbyteMessages, airbyteRecords, airbyteStates, discoveredStreams, incrementalCatalog } from '../helpers/airbyte.js';

/**
 * A tenant whose key and replication fields have names of their own (the
 * sandbox's epoch layout: training `learner`, `course`, `lesson`, `finished`
 * in epoch milliseconds, `done` as Y/N; phishing `recipient`, `campaignRef`,
 * `delivered` in epoch seconds as digit strings), named in the key_properties
 * and replication_key settings: discover, then sync with the discovered
 * catalog, as every scheduler does; the replication keys are date-times, the
 * bookmark moves and the next run asks with the >= filter and gets exactly
 * the changes; in JSONL and CSV, with field_names service and snake_case, the
 * overrides given in the service's naming or the catalog's, and filters in
 * RFC 3339 or Unix time. The Airbyte face the same.
 */

const sandboxes: Sandbox[] = [];
const epoch = layoutFor('epoch', { offsetMinutes: 0, timeZone: 'UTC' });

beforeAll(async () => {
  await ensureBuilt();
});

afterAll(async () => {
  await Promise.all(sandboxes.map((s) => s.close()));
});

interface Pair {
  served: Sandbox;
  truth: Sandbox;
}

async function pair(): Promise<Pair> {
  const options = { trainingRecords: 120, phishingRecords: 120, seed: 11 };
  const [served, truth] = await Promise.all([startTestSandbox({ ...options, layout: 'epoch' }), startTestSandbox(options)]);
  sandboxes.push(served, truth);
  return { served, truth };
}

function mutate({ served, truth }: Pair): void {
  for (const sandbox of [served, truth]) {
    sandbox.append('training', 5);
    sandbox.update('training', 3);
    sandbox.append('phishing', 30);
  }
}

type Naming = 'service' | 'snake_case';
const outName = (naming: Naming) => (field: string, stream: Stream): string => {
  const served = epoch.fieldName(field, stream);
  return naming === 'snake_case' ? toSnakeCase(served) : served;
};

/** The overrides, in the service's names or in the catalog's (snake_case) ones: both name the same fields. */
function overrides(inCatalogNaming: boolean): JsonObject {
  const name = (field: string, stream: Stream): string => (inCatalogNaming ? toSnakeCase(epoch.fieldName(field, stream)) : epoch.fieldName(field, stream));
  return {
    key_properties: { training: ['userId', 'programId', 'moduleId'].map((f) => name(f, 'training')), phishing: ['userId', 'campaignId'].map((f) => name(f, 'phishing')) },
    replication_key: { training: name('completedAt', 'training'), phishing: name('sentAt', 'phishing') },
  };
}

const cases = (['jsonl', 'csv'] as const).flatMap((format) =>
  (['service', 'snake_case'] as const).map((naming, i) => ({ format, naming, inCatalogNaming: naming === 'snake_case' && format === 'csv', filterDates: i === 0 ? 'rfc3339' : format === 'csv' ? 'epoch_seconds' : 'epoch_milliseconds' })),
);

describe.concurrent('Singer, key and replication fields named only in the settings', () => {
  it.each(cases)('$format, field_names $naming (overrides in the catalog naming: $inCatalogNaming), filters $filterDates: discover, sync with its catalog, an exact incremental run', async ({ format, naming, inCatalogNaming, filterDates }) => {
    const p = await pair();
    const settings = tapConfig(p.served, { format, field_names: naming, filter_date_format: filterDates, ...overrides(inCatalogNaming) });
    const config = writeTempJson(settings);
    const name = outName(naming);
    const discovered = await runTap(['discover', '--config', config]);
    expect(discovered.code, discovered.stderr).toBe(0);
    const catalog = JSON.parse(discovered.stdout) as { streams: Array<{ stream: Stream; key_properties: string[]; replication_key: string; schema: { properties: Record<string, JsonObject> } }> };
    const training = catalog.streams.find((s) => s.stream === 'training')!;
    expect(training.key_properties).toEqual(['userId', 'programId', 'moduleId'].map((f) => name(f, 'training')));
    expect(training.replication_key).toBe(name('completedAt', 'training'));
    expect(training.schema.properties[name('completedAt', 'training')]).toEqual({ type: ['string', 'null'], format: 'date-time' });
    // `done` is no documented name: Y/N words make it a boolean in both formats.
    expect(training.schema.properties.done).toEqual({ type: ['boolean', 'null'] });
    const phishing = catalog.streams.find((s) => s.stream === 'phishing')!;
    expect([phishing.key_properties, phishing.replication_key]).toEqual([['recipient', name('campaignId', 'phishing')], 'delivered']);
    expect(phishing.schema.properties.delivered).toEqual({ type: ['string', 'null'], format: 'date-time' });
    const catalogPath = writeTempJson(catalog);

    const first = await runTap(['sync', '--config', config, '--catalog', catalogPath]);
    expect(first.code, first.stderr).toBe(0);
    for (const stream of STREAM_NAMES) expectRenamedRecords(recordsOf(first.messages, stream), p.truth, stream, name);
    const state = lastState(first.messages);
    expect(state.bookmarks!.training).toMatchObject({ replication_key: name('completedAt', 'training'), replication_key_value: expect.stringMatching(/^20\d\d-.*Z$/) });
    expect(state.bookmarks!.phishing).toMatchObject({ replication_key: 'delivered', replication_key_value: expect.stringMatching(/^20\d\d-.*Z$/) });
    expect(first.stderr).not.toMatch(/bookmark none/);

    mutate(p);
    const second = await runTap(['sync', '--config', config, '--catalog', catalogPath, '--state', writeTempJson(state)]);
    expect(second.code, second.stderr).toBe(0);
    for (const stream of STREAM_NAMES) {
      const bookmark = state.bookmarks![stream].replication_key_value as string;
      expectRenamedRecords(recordsOf(second.messages, stream), p.truth, stream, name, afterBookmark(stream, bookmark));
      const ms = Date.parse(bookmark);
      const sent = filterDates === 'rfc3339' ? bookmark : filterDates === 'epoch_seconds' ? String(Math.floor(ms / 1000)) : String(ms);
      expect(lastIncrementalRequest(p.served, stream)!.filters).toEqual({ [REPLICATION_KEY[stream]]: `>=${sent}` });
    }
  });

  it('check with the overrides and the catalog reads both dumps', async () => {
    const p = await pair();
    const config = writeTempJson(tapConfig(p.served, { filter_date_format: 'epoch_seconds', ...overrides(false) }));
    const catalog = writeTempJson(JSON.parse((await runTap(['discover', '--config', config])).stdout));
    const run = await runTap(['check', '--config', config, '--catalog', catalog]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^training: OK/m);
    expect(p.served.requestsSeen().at(-1)!.filters).toEqual({ sentAt: '>=253402214400' });
  });
});

describe.concurrent('a replication key that cannot keep a bookmark is refused, never silently "bookmark none"', () => {
  it('discover stops with exit code 2 on a replication key whose values are not instants, showing a non-personal example', async () => {
    const p = await pair();
    const run = await runTap(['discover', '--config', writeTempJson(tapConfig(p.served, { ...overrides(false), replication_key: { training: 'moduleName', phishing: 'delivered' } }))]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n').at(-1)).toMatch(
      /^tap-report-dump: error: The training replication key "moduleName" holds values that are not dates or times, such as "[^"]+", so no bookmark could be kept\. Set replication_key\.training to the served field that holds completedAt \(an RFC 3339 or ISO 8601 date, or epoch seconds or milliseconds\), or sync the stream FULL_TABLE\.$/,
    );
    const personal = await runTap(['discover', '--config', writeTempJson(tapConfig(p.served, { ...overrides(false), replication_key: { training: 'email', phishing: 'delivered' } }))]);
    expect(personal.code).toBe(2);
    expect(personal.stderr).toContain('such as a value not shown here because it may be personal data');
    expect(personal.stderr).not.toMatch(/@example/);
  });

  it.each(['Singer', 'Airbyte'] as const)('%s: a catalog typing the replication key as anything but a date-time stops an incremental sync with exit code 2', async (face) => {
    const p = await pair();
    const config = writeTempJson(tapConfig(p.served, overrides(false)));
    const catalog = JSON.parse((await runTap(['discover', '--config', config])).stdout) as { streams: Array<{ stream: string; schema: { properties: Record<string, JsonObject> } }> };
    const training = catalog.streams.find((s) => s.stream === 'training')!;
    training.schema.properties.finished = { type: ['integer', 'null'] };
    if (face === 'Singer') {
      const run = await runTap(['sync', '--config', config, '--catalog', writeTempJson(catalog)]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('tap-report-dump: error: Catalog stream training: the replication key finished is typed ["integer","null"], not as a date-time, so an incremental sync could keep no bookmark.');
      expect(run.messages).toEqual([]);
      return;
    }
    const configured = { streams: catalog.streams.map((s) => ({ stream: { name: s.stream, json_schema: s.schema }, sync_mode: 'incremental', destination_sync_mode: 'append_dedup' })) };
    const run = await runTap(['airbyte', 'read', '--config', config, '--catalog', writeTempJson(configured)]);
    expect(run.code).toBe(2);
    expect(run.stdout).toContain('training: the replication key finished is typed [\\"integer\\",\\"null\\"], not as a date-time');
  });
});

describe.concurrent('Airbyte, key and replication fields named only in the settings', () => {
  it.each(['jsonl', 'csv'] as const)('%s: discover, read with the configured catalog, then an exact incremental read', async (format) => {
    const p = await pair();
    const config = writeTempJson(tapConfig(p.served, { format, ...overrides(false) }));
    const streams = discoveredStreams((await runTap(['airbyte', 'discover', '--config', config])).stdout);
    const training = streams.find((s) => s.name === 'training')!;
    expect([training.default_cursor_field, training.source_defined_primary_key]).toEqual([['_ab_extracted_at'], [['learner'], ['course'], ['lesson']]]);
    const configured = writeTempJson(incrementalCatalog(streams));
    const read = await runTap(['airbyte', 'read', '--config', config, '--catalog', configured]);
    expect(read.code, read.stdout.slice(-1500)).toBe(0);
    const first = airbyteMessages(read.stdout);
    const name = outName('service');
    for (const stream of STREAM_NAMES) expectRenamedRecords(airbyteRecords(first, stream), p.truth, stream, name);
    const states = airbyteStates(first);
    expect(airbyteBookmarkField(states, 'training')).toBe('finished');
    mutate(p);
    const again = airbyteMessages((await runTap(['airbyte', 'read', '--config', config, '--catalog', configured, '--state', writeTempJson(states)])).stdout);
    for (const stream of STREAM_NAMES) expectRenamedRecords(airbyteRecords(again, stream), p.truth, stream, name, afterBookmark(stream, airbyteBookmark(states, stream)));
  });
});
