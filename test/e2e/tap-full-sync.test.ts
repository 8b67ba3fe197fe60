import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { runTap, syncOk, type TapRun } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { schemaValidator } from '../helpers/json-schema.js';
import { recordMessages, recordsOf, schemasOf, statesOf } from '../helpers/messages.js';
import { instant, maxInstant } from '../helpers/records.js';
import { REPLICATION_KEY, type Sandbox, sandboxRecords, startTestSandbox, STREAM_NAMES, tapConfig } from '../helpers/sandbox.js';

describe.concurrent('full sync against the sandbox', () => {
  let sandbox: Sandbox;
  let run: TapRun;

  beforeAll(async () => {
    await ensureBuilt();
    sandbox = await startTestSandbox({ trainingRecords: 400, phishingRecords: 350 });
    run = await syncOk({ config: tapConfig(sandbox) });
  });

  afterAll(async () => {
    await sandbox?.close();
  });

  it('emits exactly the records of each stream, in dump order, with the same values', () => {
    for (const stream of STREAM_NAMES) {
      const expected = sandboxRecords(sandbox, stream);
      expect(expected.length).toBe(stream === 'training' ? 400 : 350);
      expect(recordsOf(run.messages, stream)).toEqual(expected);
    }
    expect(recordMessages(run.messages)).toHaveLength(750);
  });

  it('writes only Singer messages on stdout and a summary per stream on stderr', () => {
    expect(run.stdout.endsWith('\n')).toBe(true);
    expect(run.messages.length).toBe(run.stdout.trimEnd().split('\n').length);
    for (const stream of STREAM_NAMES) {
      expect(run.stderr).toMatch(new RegExp(`${stream}: ${stream === 'training' ? 400 : 350} records`));
    }
  });

  it('orders messages SCHEMA, then (a first run is a full pass) ACTIVATE_VERSION, then RECORDs, then STATE for each stream, one stream after the other', () => {
    const shape = run.messages.map((m) => `${m.type}:${m.type === 'STATE' ? '' : m.stream}`);
    // Collapse runs of identical entries.
    const collapsed = shape.filter((s, i) => i === 0 || s !== shape[i - 1]);
    expect(collapsed).toEqual(['SCHEMA:training', 'ACTIVATE_VERSION:training', 'RECORD:training', 'STATE:', 'SCHEMA:phishing', 'ACTIVATE_VERSION:phishing', 'RECORD:phishing', 'STATE:']);
    expect(schemasOf(run.messages)).toHaveLength(2);
  });

  it('gives every RECORD a time_extracted no later than now and no earlier than the run', () => {
    const now = Date.now();
    for (const m of recordMessages(run.messages)) {
      expect(typeof m.time_extracted).toBe('string');
      expect(m.time_extracted).toMatch(/Z$/);
      const t = instant(m.time_extracted);
      expect(t).toBeLessThanOrEqual(now);
      expect(t).toBeGreaterThan(now - 120_000);
    }
  });

  it('sends SCHEMA messages with key_properties and bookmark_properties, and records that validate against them', () => {
    for (const stream of STREAM_NAMES) {
      const [schema] = schemasOf(run.messages, stream);
      expect(schema.bookmark_properties).toEqual([REPLICATION_KEY[stream]]);
      expect(schema.key_properties.length).toBeGreaterThan(0);
      const validate = schemaValidator(schema.schema);
      for (const record of recordsOf(run.messages, stream)) {
        const ok = validate(record);
        expect(ok, `${stream} record ${JSON.stringify(record)}: ${JSON.stringify(validate.errors)}`).toBe(true);
        for (const key of schema.key_properties) expect(record[key], `key ${key}`).toEqual(expect.any(String));
        // Dates are UTC with Z.
        for (const [field, fieldSchema] of Object.entries(schema.schema.properties ?? {})) {
          // (A field a record leaves out: the deletion member, set on delete records only.)
          if (fieldSchema.format === 'date-time' && record[field] !== null && record[field] !== undefined) expect(record[field], field).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
        }
      }
    }
  });

  it('ends with a STATE whose bookmarks are the greatest completedAt / sentAt of the records', () => {
    const states = statesOf(run.messages);
    const final = states[states.length - 1].value;
    expect(Object.keys(final.bookmarks ?? {}).sort()).toEqual([...STREAM_NAMES].sort());
    for (const stream of STREAM_NAMES) {
      const bookmark = final.bookmarks![stream];
      expect(bookmark.replication_key).toBe(REPLICATION_KEY[stream]);
      const expected = maxInstant(sandboxRecords(sandbox, stream), REPLICATION_KEY[stream]);
      expect(Number.isFinite(expected)).toBe(true);
      expect(instant(bookmark.replication_key_value)).toBe(expected);
      expect(bookmark.replication_key_value).toMatch(/Z$/);
    }
  });

  it('makes every STATE cumulative: each carries the bookmarks of every stream synced before it', () => {
    const seen: string[] = [];
    for (const m of run.messages) {
      if (m.type === 'SCHEMA') seen.push(m.stream);
      if (m.type === 'STATE') {
        for (const stream of seen) {
          expect(m.value.bookmarks?.[stream]?.replication_key_value, `STATE after ${seen.join(',')} lacks ${stream}`).toEqual(expect.any(String));
        }
      }
    }
    const states = statesOf(run.messages);
    expect(states).toHaveLength(2);
    // The first stream's bookmark is unchanged by the second stream's STATE.
    expect(states[1].value.bookmarks!.training).toEqual(states[0].value.bookmarks!.training);
  });

  it('keeps state entries it does not own (other streams, other keys) in every STATE', async () => {
    const state = { bookmarks: { other_stream: { replication_key_value: '2020-01-01T00:00:00Z', custom: 1 } }, currently_syncing: null, extra: { a: 1 } };
    const again = await syncOk({ config: tapConfig(sandbox), state });
    for (const m of statesOf(again.messages)) {
      expect(m.value.bookmarks!.other_stream).toEqual(state.bookmarks.other_stream);
      expect(m.value.extra).toEqual({ a: 1 });
    }
  });

  it('accepts the sync subcommand and a STATE message as --state, like the Singer-standard form', async () => {
    const previous = statesOf(run.messages).at(-1)!;
    const viaSubcommand = await runTap(['sync', '--config', writeTempJson(tapConfig(sandbox)), '--state', writeTempJson(previous)]);
    expect(viaSubcommand.code).toBe(0);
    // Unchanged data and the state of the full run: no records, bookmarks kept.
    expect(recordMessages(viaSubcommand.messages)).toHaveLength(0);
    const final = statesOf(viaSubcommand.messages).at(-1)!.value;
    for (const stream of STREAM_NAMES) {
      expect(final.bookmarks![stream].replication_key_value).toBe(previous.value.bookmarks![stream].replication_key_value);
    }
  });
});
