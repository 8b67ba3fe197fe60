import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from '../helpers/build.js';
import { runTap, type TapRun } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { type JsonObject, lastState, parseMessages } from '../helpers/messages.js';
import { KEY_PROPERTIES, REPLICATION_KEY, type Sandbox, startTestSandbox, type Stream, STREAM_NAMES, tapConfig } from '../helpers/sandbox.js';

/**
 * Conformance of the tap's output to the Singer specification
 * (singer-io/getting-started docs/SPEC.md), checked on real syncs through the
 * CLI against the sandbox: every stdout line is one Singer message matching
 * test/fixtures/singer-messages.schema.json, records follow their stream's
 * SCHEMA, keys and bookmarks name schema properties, STATE is cumulative, and
 * the discover catalog has the Singer catalog shape.
 */

const MESSAGE_SCHEMA_ID = 'https://tap-report-dump.test/singer-messages.schema.json';
const messageSchema = JSON.parse(readFileSync(join(ROOT, 'test', 'fixtures', 'singer-messages.schema.json'), 'utf8')) as JsonObject;

/** RFC 3339 date-time in UTC, strictly: `T` separator, `Z` zone, a real calendar instant. */
const RFC3339_UTC = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?Z$/;
function isRfc3339Utc(value: string): boolean {
  const m = RFC3339_UTC.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return false;
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** Ajv with ajv-formats, `date-time` tightened to RFC 3339 UTC with `Z` (ajv-formats alone accepts offsets and a space). */
function strictAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false });
  (addFormatsModule as unknown as (a: Ajv) => Ajv)(ajv);
  ajv.addFormat('date-time', { type: 'string', validate: isRfc3339Utc });
  return ajv;
}

const ajv = strictAjv();
ajv.addSchema(messageSchema);
const validateMessage = ajv.getSchema(MESSAGE_SCHEMA_ID) as ValidateFunction;
const validateCatalog = ajv.getSchema(`${MESSAGE_SCHEMA_ID}#/definitions/catalog`) as ValidateFunction;

function errorsOf(validate: ValidateFunction): string {
  return ajv.errorsText(validate.errors, { separator: '; ' });
}

interface Msg {
  type: string;
  stream?: string;
  schema?: { properties?: Record<string, JsonObject>; [key: string]: unknown };
  key_properties?: string[];
  bookmark_properties?: string[];
  record?: JsonObject;
  time_extracted?: string;
  value?: { bookmarks?: Record<string, JsonObject>; [key: string]: unknown };
}

interface Checked {
  messages: Msg[];
  records: Record<string, JsonObject[]>;
  schemas: Record<string, Msg>;
  states: Msg[];
}

interface TimedRun extends TapRun {
  startedAt: number;
  endedAt: number;
}

async function timedSync(config: JsonObject, options: { catalog?: unknown; state?: unknown } = {}): Promise<TimedRun> {
  const args = ['--config', writeTempJson(config, 'config.json')];
  if (options.catalog !== undefined) args.push('--catalog', writeTempJson(options.catalog, 'catalog.json'));
  if (options.state !== undefined) args.push('--state', writeTempJson(options.state, 'state.json'));
  const startedAt = Date.now();
  const run = await runTap(args);
  const endedAt = Date.now();
  expect(run.code, `tap exited with ${run.code}; stderr:\n${run.stderr.slice(-3000)}`).toBe(0);
  return Object.assign(run, { startedAt, endedAt });
}

/**
 * Checks one sync's stdout against the Singer spec and returns its messages.
 * `inputState` is the state the run started from: its streams count as synced.
 */
function checkSingerOutput(run: TimedRun, inputState?: { bookmarks?: Record<string, unknown> }): Checked {
  const { stdout } = run;
  expect(stdout.length, 'stdout is empty').toBeGreaterThan(0);
  expect(stdout.endsWith('\n'), 'the last message ends with a newline').toBe(true);
  expect(stdout.includes('\r'), 'no carriage return on stdout').toBe(false);
  expect(stdout.charCodeAt(0), 'no byte-order mark').not.toBe(0xfeff);

  const lines = stdout.slice(0, -1).split('\n');
  const messages: Msg[] = [];
  const schemas: Record<string, Msg> = {};
  const recordValidators: Record<string, ValidateFunction> = {};
  const records: Record<string, JsonObject[]> = {};
  const states: Msg[] = [];
  const synced = new Set<string>(Object.keys(inputState?.bookmarks ?? {}));

  lines.forEach((line, index) => {
    const where = `stdout line ${index + 1}`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new Error(`${where} is not JSON (a log line on stdout?): ${line.slice(0, 200)}`);
    }
    if (!validateMessage(parsed)) throw new Error(`${where} is not a valid Singer message: ${errorsOf(validateMessage)}\n${line.slice(0, 300)}`);
    const message = parsed as Msg;
    messages.push(message);

    if (message.type === 'SCHEMA') {
      const stream = message.stream!;
      const properties = message.schema!.properties ?? {};
      expect(ajv.validateSchema(message.schema!), `${where}: the ${stream} schema is not a valid JSON Schema: ${ajv.errorsText(ajv.errors)}`).toBe(true);
      expect(['object', ['object'], ['null', 'object'], ['object', 'null']], `${where}: the ${stream} schema describes objects`).toContainEqual(message.schema!.type);
      expect(message.key_properties!.length, `${where}: ${stream} has key properties`).toBeGreaterThan(0);
      for (const key of message.key_properties!) expect(Object.keys(properties), `${where}: key property ${key} is a top-level property of the ${stream} schema`).toContain(key);
      for (const key of message.bookmark_properties ?? []) expect(Object.keys(properties), `${where}: bookmark property ${key} is a top-level property of the ${stream} schema`).toContain(key);
      schemas[stream] = message;
      recordValidators[stream] = ajv.compile(message.schema!);
    } else if (message.type === 'RECORD') {
      const stream = message.stream!;
      const validate = recordValidators[stream];
      if (!validate) throw new Error(`${where}: RECORD of stream ${stream} before any SCHEMA of that stream`);
      if (!validate(message.record)) throw new Error(`${where}: the ${stream} record does not match its SCHEMA: ${errorsOf(validate)}\n${line.slice(0, 400)}`);
      for (const key of schemas[stream].key_properties!) {
        expect(message.record![key], `${where}: key property ${key} has a value`).not.toBeNull();
        expect(message.record![key], `${where}: key property ${key} has a value`).not.toBeUndefined();
      }
      if (message.time_extracted !== undefined) {
        const at = Date.parse(message.time_extracted);
        expect(at, `${where}: time_extracted ${message.time_extracted} lies within the run`).toBeGreaterThanOrEqual(run.startedAt - 1000);
        expect(at, `${where}: time_extracted ${message.time_extracted} lies within the run`).toBeLessThanOrEqual(run.endedAt + 1000);
      }
      (records[stream] ??= []).push(message.record!);
    } else if (message.type === 'STATE') {
      for (const stream of Object.keys(schemas)) synced.add(stream);
      const bookmarks = message.value!.bookmarks ?? {};
      for (const stream of synced) {
        expect(Object.keys(bookmarks), `${where}: the STATE carries the bookmark of ${stream}, synced before it (STATE must be cumulative)`).toContain(stream);
      }
      states.push(message);
    }
  });

  expect(states.length, 'at least one STATE').toBeGreaterThan(0);
  expect(messages.at(-1)!.type, 'the output ends with a STATE').toBe('STATE');
  return { messages, records, schemas, states };
}

/** Discover's catalog with every stream FULL_TABLE, in `order`, and `deselect` fields left out. */
function fullTableCatalog(catalog: { streams: JsonObject[] }, order: Stream[], deselect: Partial<Record<Stream, string[]>>): unknown {
  const byName = new Map(catalog.streams.map((s) => [s.tap_stream_id as string, structuredClone(s)]));
  return {
    streams: order.map((name) => {
      const entry = byName.get(name)!;
      entry.replication_method = 'FULL_TABLE';
      for (const m of entry.metadata as Array<{ breadcrumb: string[]; metadata: JsonObject }>) {
        if (m.breadcrumb.length === 0) {
          m.metadata.selected = true;
          m.metadata['replication-method'] = 'FULL_TABLE';
        } else if (deselect[name]?.includes(m.breadcrumb[1])) {
          m.metadata.selected = false;
        }
      }
      return entry;
    }),
  };
}

describe('Singer specification conformance', () => {
  let sandbox: Sandbox;
  let zoned: Sandbox;
  let config: JsonObject;
  let catalog: { streams: JsonObject[] };
  let discoverRun: TapRun;
  let jsonl: TimedRun;

  /** The first run's final state, read without the checks (each test checks its own run). */
  const firstState = (): { bookmarks?: Record<string, JsonObject> } => lastState(parseMessages(jsonl.stdout)) as { bookmarks?: Record<string, JsonObject> };

  beforeAll(async () => {
    await ensureBuilt();
    [sandbox, zoned] = await Promise.all([
      startTestSandbox({ trainingRecords: 300, phishingRecords: 300 }),
      // Same instants written with an offset: the tap must still emit UTC with Z.
      startTestSandbox({ trainingRecords: 150, phishingRecords: 150, seed: 7, dateOffset: '+05:30' }),
    ]);
    config = tapConfig(sandbox);
    discoverRun = await runTap(['--config', writeTempJson(config, 'config.json'), '--discover']);
    catalog = JSON.parse(discoverRun.stdout) as { streams: JsonObject[] };
    jsonl = await timedSync(config);
  });

  afterAll(async () => {
    await Promise.all([sandbox?.close(), zoned?.close()]);
  });

  it('the message schema is a valid draft-07 schema that rejects what the spec rejects', () => {
    expect(ajv.validateSchema(messageSchema), ajv.errorsText(ajv.errors)).toBe(true);
    const good = [
      { type: 'SCHEMA', stream: 's', schema: { type: 'object', properties: {} }, key_properties: [] },
      { type: 'SCHEMA', stream: 's', schema: {}, key_properties: ['id'], bookmark_properties: ['at'] },
      { type: 'RECORD', stream: 's', record: { id: 1 } },
      { type: 'RECORD', stream: 's', record: {}, time_extracted: '2017-11-20T16:45:33.000Z', version: 3 },
      { type: 'STATE', value: {} },
      { type: 'ACTIVATE_VERSION', stream: 's', version: 1 },
    ];
    for (const m of good) expect(validateMessage(m), `${JSON.stringify(m)}: ${errorsOf(validateMessage)}`).toBe(true);
    const bad = [
      { type: 'SCHEMA', stream: 's', schema: {} }, // key_properties is required
      { type: 'SCHEMA', stream: 's', schema: {}, key_properties: 'id' },
      { type: 'SCHEMA', stream: 's', schema: {}, key_properties: [1] },
      { type: 'SCHEMA', stream: 's', schema: [], key_properties: [] },
      { type: 'SCHEMA', stream: 's', schema: {}, key_properties: [], extra: 1 },
      { type: 'RECORD', record: { id: 1 } }, // stream is required
      { type: 'RECORD', stream: 's', record: [1] },
      { type: 'RECORD', stream: '', record: {} },
      { type: 'RECORD', stream: 's', record: {}, time_extracted: '2017-11-20T16:45:33+02:00' },
      { type: 'RECORD', stream: 's', record: {}, time_extracted: '2017-11-20 16:45:33Z' },
      { type: 'RECORD', stream: 's', record: {}, time_extracted: '2017-02-30T16:45:33Z' },
      { type: 'RECORD', stream: 's', record: {}, emitted_at: 1 },
      { type: 'STATE' },
      { type: 'STATE', value: 'x' },
      { type: 'STATE', value: {}, stream: 's' },
      { type: 'LOG', message: 'x' },
      { stream: 's', record: {} },
    ];
    for (const m of bad) expect(validateMessage(m), `${JSON.stringify(m)} must be rejected`).toBe(false);
  });

  it('JSONL incremental sync without state: only Singer messages on stdout, records valid against their SCHEMA', () => {
    const jsonlChecked = checkSingerOutput(jsonl);
    const { schemas, records, states } = jsonlChecked;
    expect(Object.keys(schemas)).toEqual([...STREAM_NAMES]);
    for (const stream of STREAM_NAMES) {
      expect(schemas[stream].key_properties).toEqual(KEY_PROPERTIES[stream]);
      expect(schemas[stream].bookmark_properties).toEqual([REPLICATION_KEY[stream]]);
      expect(records[stream]?.length ?? 0).toBe(sandbox.recordCount(stream));
    }
    // One STATE per stream, each after the stream's records.
    expect(states).toHaveLength(STREAM_NAMES.length);
    const types = jsonlChecked.messages.map((m) => `${m.type}:${m.stream ?? ''}`);
    expect(types.lastIndexOf('RECORD:training')).toBeLessThan(types.indexOf('STATE:'));
    expect(jsonl.stderr, 'logs go to stderr').toMatch(/INFO/);
  });

  it('CSV incremental sync from a partial state: valid messages, the input bookmark is carried in every STATE', async () => {
    // The state knows phishing only: training runs from scratch, phishing from its bookmark.
    const first = firstState();
    const partial = { bookmarks: { phishing: first.bookmarks!.phishing } };
    sandbox.append('phishing', 4);
    sandbox.update('training', 2);
    const run = await timedSync({ ...config, format: 'csv' }, { state: partial });
    const checked = checkSingerOutput(run, partial);
    expect(Object.keys(checked.schemas)).toEqual([...STREAM_NAMES]);
    expect(checked.records.training?.length ?? 0).toBe(sandbox.recordCount('training'));
    expect(checked.records.phishing?.length ?? 0, 'phishing emits the appended records').toBeGreaterThanOrEqual(4);
    expect(checked.records.phishing.length).toBeLessThan(sandbox.recordCount('phishing'));
    // The first STATE (after training) already carries the phishing bookmark from the input state.
    expect(Object.keys(checked.states[0].value!.bookmarks!).sort()).toEqual(['phishing', 'training']);
  });

  it('FULL_TABLE sync via a catalog (streams reordered, a field deselected): valid messages, narrowed schema', async () => {
    const full = fullTableCatalog(catalog, ['phishing', 'training'], { training: ['email', 'firstName'] });
    const state = firstState();
    const run = await timedSync(config, { catalog: full, state });
    const checked = checkSingerOutput(run, state);
    expect(Object.keys(checked.schemas)).toEqual(['phishing', 'training']);
    for (const stream of STREAM_NAMES) {
      expect(checked.records[stream]?.length ?? 0, `${stream}: FULL_TABLE emits every record`).toBe(sandbox.recordCount(stream));
      expect(checked.schemas[stream].key_properties).toEqual(KEY_PROPERTIES[stream]);
    }
    const trainingProps = Object.keys(checked.schemas.training.schema!.properties ?? {});
    expect(trainingProps).not.toContain('email');
    expect(trainingProps).not.toContain('firstName');
    for (const record of checked.records.training) {
      expect(record).not.toHaveProperty('email');
      expect(record).not.toHaveProperty('firstName');
    }
  });

  it('dates written with an offset by the service come out as RFC 3339 UTC with Z (JSONL and CSV)', async () => {
    const zconfig = tapConfig(zoned);
    const [a, b] = await Promise.all([timedSync(zconfig), timedSync({ ...zconfig, format: 'csv' })]);
    for (const run of [a, b]) {
      const checked = checkSingerOutput(run);
      for (const stream of STREAM_NAMES) {
        expect(checked.records[stream]?.length ?? 0).toBe(zoned.recordCount(stream));
        // At least one date-time value actually went through the check.
        const dated = checked.records[stream].filter((r) => typeof r[REPLICATION_KEY[stream]] === 'string');
        expect(dated.length).toBeGreaterThan(0);
        for (const r of dated) expect(r[REPLICATION_KEY[stream]]).toMatch(/Z$/);
      }
      // Bookmarks in STATE are UTC too.
      const bookmarks = checked.states.at(-1)!.value!.bookmarks!;
      for (const stream of STREAM_NAMES) expect(isRfc3339Utc(String(bookmarks[stream].replication_key_value))).toBe(true);
    }
  });

  it('--discover prints a Singer catalog', () => {
    expect(discoverRun.code, discoverRun.stderr).toBe(0);
    expect(validateCatalog(catalog), errorsOf(validateCatalog)).toBe(true);
    expect(catalog.streams.map((s) => s.tap_stream_id)).toEqual([...STREAM_NAMES]);
    for (const entry of catalog.streams) {
      const name = entry.tap_stream_id as Stream;
      const schema = entry.schema as { properties: Record<string, unknown> };
      const fields = Object.keys(schema.properties);
      expect(ajv.validateSchema(schema), `${name}: ${ajv.errorsText(ajv.errors)}`).toBe(true);
      expect(entry.stream).toBe(name);
      const metadata = entry.metadata as Array<{ breadcrumb: string[]; metadata: JsonObject }>;
      const top = metadata.filter((m) => m.breadcrumb.length === 0);
      expect(top, `${name}: exactly one stream-level metadata entry`).toHaveLength(1);
      const keys = top[0].metadata['table-key-properties'] as string[];
      expect(keys).toEqual(KEY_PROPERTIES[name]);
      for (const key of keys) expect(fields).toContain(key);
      for (const key of (top[0].metadata['valid-replication-keys'] as string[] | undefined) ?? []) expect(fields).toContain(key);
      // Every field has exactly one ['properties', field] entry; keys and the replication key are automatic.
      const fieldEntries = metadata.filter((m) => m.breadcrumb.length > 0);
      for (const m of fieldEntries) {
        expect(m.breadcrumb).toHaveLength(2);
        expect(m.breadcrumb[0]).toBe('properties');
        expect(fields).toContain(m.breadcrumb[1]);
      }
      expect(fieldEntries.map((m) => m.breadcrumb[1]).sort()).toEqual([...fields].sort());
      for (const field of [...keys, REPLICATION_KEY[name]]) {
        expect(fieldEntries.find((m) => m.breadcrumb[1] === field)!.metadata.inclusion, `${name}.${field} is automatic`).toBe('automatic');
      }
    }
  });
});
