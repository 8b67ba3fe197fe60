import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { runTap } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { lastState, recordsOf, schemasOf, type JsonObject, recordFields } from '../helpers/messages.js';
import { canonical } from '../helpers/records.js';
import { pick, seeded } from '../helpers/random.js';
import { startTenantServer } from '../helpers/tenant-server.js';
import type { FakeServer } from '../helpers/fake-server.js';

/**
 * Field names that are JavaScript's own (`constructor`, `toString`,
 * `valueOf`, `hasOwnProperty`, `__proto__`) are data like any other name: a
 * seeded property test serves random sets of them, as plain fields, as a key
 * property and as the replication key, in JSONL and CSV, with field_names
 * service and snake_case and under personal_data policies, through discover
 * and a sync with the discovered catalog; the records are exactly the served
 * ones under their output names.
 */

const JS_NAMES = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__'] as const;
/** A Map: in an object literal, `__proto__:` would set the prototype, not a key. */
const SNAKE = new Map([
  ['userId', 'user_id'],
  ['programId', 'program_id'],
  ['moduleId', 'module_id'],
  ['email', 'email'],
  ['completedAt', 'completed_at'],
  ['constructor', 'constructor'],
  ['toString', 'to_string'],
  ['valueOf', 'value_of'],
  ['hasOwnProperty', 'has_own_property'],
  ['__proto__', 'proto'],
]);
const KEY = 'k'.repeat(40);
const servers: FakeServer[] = [];

beforeAll(async () => {
  await ensureBuilt();
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

interface Case {
  format: 'jsonl' | 'csv';
  naming: 'service' | 'snake_case';
  /** The JS names served, each a string field unless it is the date field. */
  names: string[];
  /** A JS name that is also a key property. */
  key?: string;
  /** A JS name that holds dates and is the replication key. */
  dates?: string;
  policy?: { field: string; policy: 'hash' | 'drop' | 'redact' };
}

function randomCase(random: () => number, format: Case['format'], naming: Case['naming']): Case {
  const names = JS_NAMES.filter(() => random() < 0.6);
  if (names.length === 0) names.push(pick(random, JS_NAMES));
  const dates = random() < 0.5 ? pick(random, names) : undefined;
  const others = names.filter((n) => n !== dates);
  const key = others.length > 0 && random() < 0.5 ? pick(random, others) : undefined;
  const candidates = others.filter((n) => n !== key);
  const policy = candidates.length > 0 && random() < 0.6 ? { field: pick(random, candidates), policy: pick(random, ['hash', 'drop', 'redact'] as const) } : undefined;
  return { format, naming, names, key, dates, policy };
}

/** Records with a computed key for each JS name, so none is left out by a JSON literal (`__proto__:` would set the prototype). */
function trainingRecords(c: Case): JsonObject[] {
  return Array.from({ length: 6 }, (_, i) => {
    const fields: Array<[string, unknown]> = [
      ['userId', `u-${i}`],
      ['programId', 'p-1'],
      ['moduleId', `m-${i % 2}`],
      ['email', `person.${i}@example.com`],
      // Every other record needs converting (an offset), so lines are rebuilt field by field as well as copied as they are.
      ['completedAt', i % 2 === 0 ? `2025-03-0${1 + i}T10:00:00Z` : `2025-03-0${1 + i}T12:00:00+02:00`],
      ...c.names.map((name): [string, unknown] => [name, name === c.dates ? `2025-04-0${1 + i}T08:30:00Z` : `${name} value ${i}`]),
    ];
    return Object.fromEntries(fields);
  });
}

const PHISHING = [0, 1, 2].map((i) => ({ userId: `u-${i}`, campaignId: 'c-1', email: `person.${i}@example.com`, sentAt: `2025-05-0${1 + i}T09:00:00Z` }));

function configOf(server: FakeServer, c: Case): JsonObject {
  const outName = (name: string): string => (c.naming === 'snake_case' ? SNAKE.get(name)! : name);
  return {
    base_url: server.url,
    access_token: 'tok-anything',
    format: c.format,
    field_names: c.naming,
    ...(c.key ? { key_properties: { training: ['userId', 'programId', 'moduleId', c.key] } } : {}),
    // Given in the catalog's naming half of the time: both must work.
    ...(c.dates ? { replication_key: { training: c.naming === 'snake_case' && c.names.length % 2 === 0 ? outName(c.dates) : c.dates } } : {}),
    ...(c.policy ? { personal_data: [{ field: c.policy.field, policy: c.policy.policy, stream: 'training' }], pseudonymisation_key: KEY } : {}),
  };
}

/** What the tap must emit for a served record: output names, policies applied, booleans and dates as served (all strings here). */
function expected(record: JsonObject, c: Case): JsonObject {
  const out: Array<[string, unknown]> = [];
  for (const [name, value] of Object.entries(record)) {
    const policy = c.policy?.field === name ? c.policy.policy : 'keep';
    if (policy === 'drop') continue;
    const converted = name === 'completedAt' ? (value as string).replace('T12:00:00+02:00', 'T10:00:00Z') : value;
    const written = policy === 'redact' ? null : policy === 'hash' ? createHmac('sha256', KEY).update(String(value).trim()).digest('hex') : converted;
    out.push([c.naming === 'snake_case' ? SNAKE.get(name)! : name, written]);
  }
  return Object.fromEntries(out);
}

describe.concurrent('field names that are JavaScript\'s own', () => {
  const random = seeded(22);
  // Two random cases for each format and naming.
  const cases = (['jsonl', 'csv'] as const).flatMap((format) => (['service', 'snake_case'] as const).flatMap((naming) => [randomCase(random, format, naming), randomCase(random, format, naming)]));
  it('covers every name, both formats, both namings, keys, replication keys and policies', () => {
    expect(new Set(cases.flatMap((c) => c.names))).toEqual(new Set(JS_NAMES));
    expect(new Set(cases.map((c) => `${c.format} ${c.naming}`)).size).toBe(4);
    expect(cases.some((c) => c.key) && cases.some((c) => c.dates) && cases.some((c) => c.policy)).toBe(true);
  });

  it.each(cases.map((c, i) => [i, JSON.stringify(c), c] as const))('case %i: %s: discover, then sync with its catalog, gives every served field', async (_i, _label, c) => {
    const records = trainingRecords(c);
    const server = await startTenantServer({ training: records, phishing: PHISHING });
    servers.push(server);
    const config = writeTempJson(configOf(server, c));
    const discovered = await runTap(['discover', '--config', config]);
    expect(discovered.code, discovered.stderr).toBe(0);
    const catalog = JSON.parse(discovered.stdout) as { streams: Array<{ stream: string; schema: { properties: JsonObject } }> };
    const training = catalog.streams.find((s) => s.stream === 'training')!;
    expect(Object.keys(training.schema.properties).sort()).toEqual(Object.keys(expected(records[0], c)).sort());

    const run = await runTap(['sync', '--config', config, '--catalog', writeTempJson(catalog)]);
    expect(run.code, run.stderr).toBe(0);
    expect(recordsOf(run.messages, 'training').map(canonical).sort()).toEqual(records.map((r) => canonical(expected(r, c))).sort());
    expect(recordFields(schemasOf(run.messages, 'training')[0]).sort()).toEqual(Object.keys(training.schema.properties).sort());
    const bookmark = lastState(run.messages).bookmarks!.training;
    expect(bookmark.replication_key_value).toBe(c.dates ? '2025-04-06T08:30:00Z' : '2025-03-06T10:00:00Z');
    expect(run.stderr).not.toMatch(/does not declare|two fields/);
  });
});
