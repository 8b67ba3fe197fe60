import { createHmac } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { runSource, runTap, syncOk, syncTap } from '../helpers/cli.js';
import { tempFolder, writeTempJson } from '../helpers/files.js';
import { type FakeServer, sendDump, startFakeServer } from '../helpers/fake-server.js';
import { batchesOf, type JsonObject, lastState, recordsOf, schemasOf } from '../helpers/messages.js';
import { keyOf } from '../helpers/records.js';
import { DEMO_TOKEN, KEY_PROPERTIES, rowsByKey, type Sandbox, startTestSandbox, type Stream, STREAM_NAMES } from '../helpers/sandbox.js';

/**
 * The personal_data policies end to end, over real HTTP against the sandbox,
 * in JSONL and CSV, in both protocols and in BATCH files: plain e-mail addresses appear nowhere
 * the tap writes, each pseudonym is the HMAC-SHA256 the test computes, one
 * person's pseudonym is the same in both reports, dropped fields are gone and
 * redacted ones null, and the key is a secret.
 */

const KEY = 'test-pseudonymisation-key-0123456789abcdef';
const OTHER_KEY = 'another-pseudonymisation-key-0123456789ab';
const POLICIES = [
  { field: 'email', policy: 'hash' },
  { field: 'firstName', policy: 'drop' },
  { field: 'lastName', policy: 'drop' },
  { field: 'employeeNumber', policy: 'redact', stream: 'phishing' },
];
/** The same policies in the deprecated object form, which still works with a warning. */
const OBJECT_FORM = { '*': { email: 'hash', firstName: 'drop', lastName: 'drop' }, phishing: { employeeNumber: 'redact' } };
const DEPRECATED = /Setting personal_data is written in the deprecated object form/g;

const closers: Array<{ close(): Promise<void> }> = [];
let sandbox: Sandbox;

beforeAll(async () => {
  await ensureBuilt();
  sandbox = await startTestSandbox({ trainingRecords: 120, phishingRecords: 120, seed: 11 });
  closers.push(sandbox);
});

afterAll(async () => {
  await Promise.all(closers.map((c) => c.close()));
});

const hmac = (key: string, text: string): string => createHmac('sha256', key).update(text, 'utf8').digest('hex');
const pseudonymOf = (key: string, email: unknown): string | null => (typeof email === 'string' && email !== '' ? hmac(key, email.trim().toLowerCase()) : null);

function configOf(format: 'jsonl' | 'csv', extra: JsonObject = {}): JsonObject {
  return { base_url: sandbox.url, access_token: DEMO_TOKEN, format, personal_data: POLICIES, pseudonymisation_key: KEY, ...extra };
}

function plainEmails(): string[] {
  const emails = STREAM_NAMES.flatMap((stream) => [...sandbox.records(stream)].map((r) => (r as JsonObject).email)).filter((e): e is string => typeof e === 'string');
  expect(emails.length).toBeGreaterThan(100);
  return [...new Set(emails)];
}

/** Checks the policies' effect on one stream's records against the sandbox's truth. */
function expectPolicies(records: readonly JsonObject[], stream: Stream, key: string): void {
  const truth = rowsByKey(sandbox, stream);
  expect(records.length).toBe(truth.size);
  for (const record of records) {
    const original = truth.get(keyOf(record, KEY_PROPERTIES[stream]))!;
    expect(original, 'every record is one of the sandbox').toBeDefined();
    expect(record.email).toBe(pseudonymOf(key, original.email));
    expect(record).not.toHaveProperty('firstName');
    expect(record).not.toHaveProperty('lastName');
    if (stream === 'phishing') expect(record.employeeNumber).toBeNull();
    else expect(record.employeeNumber).toBe(original.employeeNumber);
  }
}

/** userId → pseudonymised email, from one stream's records. */
const emailByUser = (records: readonly JsonObject[]): Map<unknown, unknown> => new Map(records.filter((r) => r.email !== null).map((r) => [r.userId, r.email]));

describe.concurrent('Singer, with e-mail pseudonymised, names dropped and employee numbers redacted', () => {
  it.each(['jsonl', 'csv'] as const)('%s: discover shows the policies; sync emits only pseudonyms, the same for one person in both reports, then runs incrementally and gets 304', async (format) => {
    const config = writeTempJson(configOf(format));
    const discovered = await runTap(['discover', '--config', config]);
    expect(discovered.code, discovered.stderr).toBe(0);
    const catalog = JSON.parse(discovered.stdout) as { streams: Array<{ stream: string; schema: { properties: Record<string, JsonObject> } }> };
    const training = catalog.streams.find((s) => s.stream === 'training')!.schema.properties;
    expect(training.firstName).toBeUndefined();
    expect(training.email).toMatchObject({ type: ['string', 'null'] });

    const run = await runTap(['sync', '--config', config, '--catalog', writeTempJson(catalog)]);
    expect(run.code, run.stderr).toBe(0);
    for (const stream of STREAM_NAMES) {
      expectPolicies(recordsOf(run.messages, stream), stream, KEY);
      const schema = schemasOf(run.messages, stream)[0].schema.properties!;
      expect(schema).not.toHaveProperty('firstName');
      expect(schema.email.description).toMatch(/Pseudonymised/);
    }
    const everything = run.stdout + run.stderr;
    for (const email of plainEmails()) expect(everything.includes(email), email).toBe(false);

    const fromTraining = emailByUser(recordsOf(run.messages, 'training'));
    const shared = [...emailByUser(recordsOf(run.messages, 'phishing'))].filter(([user]) => fromTraining.has(user));
    expect(shared.length).toBeGreaterThan(10);
    for (const [user, email] of shared) expect(email, String(user)).toBe(fromTraining.get(user));

    // Incremental and 304 behave as without policies.
    const state = lastState(run.messages);
    const again = await runTap(['sync', '--config', config, '--catalog', writeTempJson(catalog), '--state', writeTempJson(state)]);
    expect(again.code, again.stderr).toBe(0);
    expect(recordsOf(again.messages, 'training')).toEqual([]);
    expect(again.stderr).toMatch(/training: dump unchanged since .* \(HTTP 304\)/);
  });

  it('another key gives other pseudonyms, and reads the dump again instead of taking a 304', async () => {
    const first = await syncOk({ config: configOf('jsonl') });
    const other = await syncOk({ config: configOf('jsonl', { pseudonymisation_key: OTHER_KEY }), state: lastState(first.messages) });
    expect(other.stderr).not.toMatch(/HTTP 304/);
    // Records at the bookmark come back too: their content (the pseudonyms) changed.
    const records = recordsOf(other.messages, 'training');
    expect(records.length).toBeGreaterThan(0);
    const truth = rowsByKey(sandbox, 'training');
    for (const record of records) expect(record.email).toBe(pseudonymOf(OTHER_KEY, truth.get(keyOf(record, KEY_PROPERTIES.training))!.email));
  });

  it('hash_keep_domain keeps the domain; a hashed key property stays a unique key', async () => {
    const run = await syncOk({ config: configOf('csv', { personal_data: [{ field: 'email', policy: 'hash_keep_domain' }, { field: 'userId', policy: 'hash' }] }) });
    const records = recordsOf(run.messages, 'training');
    const truth = [...sandbox.records('training')] as JsonObject[];
    const withEmail = records.filter((r) => r.email !== null);
    expect(withEmail.length).toBeGreaterThan(50);
    for (const record of withEmail) expect(record.email).toMatch(/^[0-9a-f]{64}@example\.(com|org|net)$|^[0-9a-f]{64}@[a-z0-9.-]+$/);
    const keys = new Set(records.map((r) => `${r.userId}|${r.programId}|${r.moduleId}`));
    expect(keys.size).toBe(truth.length);
    expect(records.map((r) => r.userId)).toContain(hmac(KEY, String(truth[0].userId)));
  });
});

describe.concurrent('BATCH files, with every policy', () => {
  const BATCH_POLICIES = [
    { field: 'email', policy: 'hash', stream: 'training' },
    { field: 'firstName', policy: 'drop', stream: 'training' },
    { field: 'lastName', policy: 'redact', stream: 'training' },
    { field: 'email', policy: 'hash_keep_domain', stream: 'phishing' },
    { field: 'employeeNumber', policy: 'hash', stream: 'phishing' },
  ];

  /** The records of the batch files a stream's BATCH messages name, in order. */
  function batchRecords(messages: Parameters<typeof batchesOf>[0], stream: Stream): JsonObject[] {
    return batchesOf(messages, stream).flatMap((m) => m.manifest.map((url) => gunzipSync(readFileSync(fileURLToPath(url))).toString('utf8')).join('').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as JsonObject));
  }

  it.each(['jsonl', 'csv'] as const)('%s: the files hold drop, redact, hash and hash_keep_domain applied, the same records as RECORD mode, and no plain address', async (format) => {
    const directory = tempFolder('tap-batch-');
    const batch_config = { encoding: { format: 'jsonl', compression: 'gzip' }, storage: { root: pathToFileURL(directory).href }, batch_size: 50 };
    const [batched, plain] = await Promise.all([syncOk({ config: configOf(format, { personal_data: BATCH_POLICIES, batch_config }) }), syncOk({ config: configOf(format, { personal_data: BATCH_POLICIES }) })]);
    for (const stream of STREAM_NAMES) {
      const records = batchRecords(batched.messages, stream);
      const truth = rowsByKey(sandbox, stream);
      expect(records.length, stream).toBe(truth.size);
      for (const record of records) {
        const original = truth.get(keyOf(record, KEY_PROPERTIES[stream]))!;
        expect(original, 'every record is one of the sandbox').toBeDefined();
        if (stream === 'training') {
          expect(record.email).toBe(pseudonymOf(KEY, original.email));
          expect(record).not.toHaveProperty('firstName');
          expect(record.lastName).toBeNull();
          expect(record.employeeNumber).toBe(original.employeeNumber);
        } else {
          const email = original.email as string | null;
          expect(record.email).toBe(email === null ? null : `${pseudonymOf(KEY, email)}@${email.split('@')[1].toLowerCase()}`);
          expect(record.employeeNumber).toBe(typeof original.employeeNumber === 'string' ? hmac(KEY, original.employeeNumber.trim()) : null);
        }
        expect(record.userId).toBe(original.userId);
      }
      expect(records, stream).toEqual(recordsOf(plain.messages, stream));
    }
    const files = readdirSync(directory).map((name) => gunzipSync(readFileSync(join(directory, name))).toString('utf8')).join('');
    for (const email of plainEmails()) expect(files.includes(email) || batched.stdout.includes(email) || batched.stderr.includes(email), email).toBe(false);
  });
});

/** A read by `source-report-dump` of every stream discover offers: its messages and its run. */
async function airbyteRead(config: JsonObject): Promise<{ messages: JsonObject[]; discoveredStreams: Array<JsonObject & { json_schema: { properties: JsonObject } }>; stderr: string; stdout: string }> {
  const path = writeTempJson(config);
  const messages = (stdout: string): JsonObject[] => stdout.trim().split('\n').map((l) => JSON.parse(l) as JsonObject);
  const discovery = await runSource(['discover', '--config', path]);
  const discovered = messages(discovery.stdout).find((m) => m.type === 'CATALOG') as { catalog: { streams: Array<JsonObject & { json_schema: { properties: JsonObject } }> } };
  const configured = writeTempJson({ streams: discovered.catalog.streams.map((stream) => ({ stream, sync_mode: 'full_refresh', destination_sync_mode: 'overwrite' })) });
  const read = await runSource(['read', '--config', path, '--catalog', configured]);
  expect(read.code, read.stdout.slice(-2000)).toBe(0);
  return { messages: messages(read.stdout), discoveredStreams: discovered.catalog.streams, stderr: discovery.stderr + read.stderr, stdout: discovery.stdout + read.stdout };
}

const airbyteRecords = (messages: readonly JsonObject[], stream: Stream): JsonObject[] =>
  messages.filter((m) => m.type === 'RECORD' && (m.record as JsonObject).stream === stream).map((m) => (m.record as { data: JsonObject }).data);

describe.concurrent('Airbyte, with the same policies', () => {
  it('source-report-dump discover and read give pseudonyms and no plain address', async () => {
    const read = await airbyteRead(configOf('jsonl'));
    expect(read.discoveredStreams[0].json_schema.properties).not.toHaveProperty('firstName');
    for (const stream of STREAM_NAMES) expectPolicies(airbyteRecords(read.messages, stream), stream, KEY);
    for (const email of plainEmails()) expect(read.stdout.includes(email) || read.stderr.includes(email), email).toBe(false);
    expect(read.stderr).not.toMatch(DEPRECATED);
  });
});

describe.concurrent('the deprecated object form of personal_data', () => {
  it('Singer: hashes, drops and redacts as the list does, warning once per run with the list to write instead', async () => {
    const [list, object] = await Promise.all([syncOk({ config: configOf('jsonl') }), syncOk({ config: configOf('jsonl', { personal_data: OBJECT_FORM }) })]);
    for (const stream of STREAM_NAMES) {
      expectPolicies(recordsOf(object.messages, stream), stream, KEY);
      expect(recordsOf(object.messages, stream)).toEqual(recordsOf(list.messages, stream));
    }
    expect(object.stderr.match(DEPRECATED)).toHaveLength(1);
    expect(object.stderr).toContain(JSON.stringify(POLICIES));
    expect(list.stderr).not.toMatch(DEPRECATED);
    for (const email of plainEmails()) expect(object.stderr.includes(email), email).toBe(false);
  });

  it('Airbyte: source-report-dump read hashes, drops and redacts as the list does, warning once per command', async () => {
    const read = await airbyteRead(configOf('jsonl', { personal_data: OBJECT_FORM }));
    for (const stream of STREAM_NAMES) expectPolicies(airbyteRecords(read.messages, stream), stream, KEY);
    // One warning from discover, one from read.
    expect(read.stderr.match(DEPRECATED)).toHaveLength(2);
    expect(read.stderr).toContain(JSON.stringify(POLICIES));
  });
});

describe.concurrent('the pseudonymisation key is a secret', () => {
  it('a short key is a one-line config error (exit 2) that does not echo it', async () => {
    const short = 'short-but-secret-key';
    const run = await syncTap({ config: configOf('jsonl', { pseudonymisation_key: short }) });
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toEqual([
      'tap-report-dump: error: Invalid config: setting pseudonymisation_key must be a string of at least 32 characters. Fix the config file or TAP_REPORT_DUMP_* variable that sets it (tap-report-dump --about lists every setting).',
    ]);
    expect(run.stdout).toBe('');
  });

  it('pseudonymising without a key is a config error naming the setting and its variable', async () => {
    const { pseudonymisation_key: _omitted, ...config } = configOf('jsonl');
    const run = await syncTap({ config });
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n').at(-1)).toMatch(/pseudonymisation_key is not set; set it .* TAP_REPORT_DUMP_PSEUDONYMISATION_KEY\.$/);
  });

  it('a key from the environment works and appears nowhere, not even in debug logs', async () => {
    const { pseudonymisation_key: _fromEnv, ...config } = configOf('jsonl', { log_level: 'debug' });
    const run = await syncTap({ config, env: { TAP_REPORT_DUMP_PSEUDONYMISATION_KEY: KEY } });
    expect(run.code, run.stderr).toBe(0);
    expect(recordsOf(run.messages, 'training')[0].email).toMatch(/^[0-9a-f]{64}$|^null$/);
    expect(run.stdout.includes(KEY) || run.stderr.includes(KEY)).toBe(false);
  });

  it('a misspelt field name stops the run before any request', async () => {
    const run = await syncTap({ config: configOf('jsonl', { personal_data: [{ field: 'email', policy: 'hash' }, { field: 'emial', policy: 'hash' }] }) });
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n').at(-1)).toMatch(/^tap-report-dump: error: Setting personal_data\[1\]\.field is emial, which is not a field of any stream/);
  });
});

describe.concurrent('invalid records under on_invalid_record skip', () => {
  it('are logged by stream, line and field, never with a personal value, in text and JSON logs', async () => {
    const lines = [
      { userId: 'u-1', programId: 'p', moduleId: 'm', email: 'ann.secret@example.com', firstName: 'Annabelle', completedAt: '2025-01-01T00:00:00Z' },
      { programId: 'p', moduleId: 'm', email: 'bob.secret@example.com', lastName: 'Bobbington', completedAt: '2025-01-01T00:00:00Z' },
      { userId: 'u-3', programId: 'p', moduleId: 'm', email: 'x@example.com', firstName: 'Carlotta', completedAt: 'carl.secret@example.com' },
    ].map((r) => JSON.stringify(r));
    lines.push('{"userId":"u-4","email":"dora.secret@example.com","firstName":"Dorothea",');
    const server: FakeServer = await startFakeServer((_req, res) => sendDump(res, `${lines.join('\n')}\n`));
    closers.push(server);
    const catalog = JSON.parse((await runTap(['discover'])).stdout) as { streams: Array<{ stream: string; metadata: Array<{ breadcrumb: string[]; metadata: JsonObject }> }> };
    for (const stream of catalog.streams) stream.metadata.find((m) => m.breadcrumb.length === 0)!.metadata.selected = stream.stream === 'training';
    for (const log_format of ['text', 'json']) {
      const run = await syncTap({ config: { base_url: server.url, access_token: DEMO_TOKEN, on_invalid_record: 'skip', log_format, personal_data: POLICIES, pseudonymisation_key: KEY, discovery: 'packaged' }, catalog });
      expect(run.code, run.stderr).toBe(0);
      expect(recordsOf(run.messages, 'training')).toHaveLength(1);
      expect(run.stderr).toMatch(/line 2: key property userId is missing/);
      expect(run.stderr).toMatch(/line 3: field completedAt is not an RFC 3339 date \(the value is not shown/);
      expect(run.stderr).toMatch(/line 4: not valid JSON/);
      for (const personal of ['ann.secret', 'bob.secret', 'carl.secret', 'dora.secret', 'Annabelle', 'Bobbington', 'Carlotta', 'Dorothea']) {
        expect(run.stdout.includes(personal) || run.stderr.includes(personal), `${log_format}: ${personal}`).toBe(false);
      }
    }
  });
});
