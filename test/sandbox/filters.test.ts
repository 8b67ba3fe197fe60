import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FilterError, startSandbox, type Sandbox } from '../../sandbox/server.js';
import { FIXED_ANCHOR } from '../../sandbox/placement.js';
import type { StreamName } from '../../src/catalog/reports.js';

type Rec = Record<string, unknown>;
let sandbox: Sandbox;
const all: Record<StreamName, Rec[]> = { training: [], phishing: [] };

/** Sends the query string as given (so encoding can be tested) and parses the JSONL body. */
async function dump(stream: StreamName, query: string): Promise<{ status: number; records: Rec[]; body: Rec }> {
  const res = await request(`${sandbox.url}/public/v1/report/${stream}/dump.jsonl${query ? `?${query}` : ''}`, {
    headers: { authorization: 'Bearer demo-token' },
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) return { status: res.statusCode, records: [], body: JSON.parse(text) as Rec };
  return { status: 200, records: text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Rec), body: {} };
}

const enc = (name: string, value: string): string => `${encodeURIComponent(`filter[${name}]`)}=${encodeURIComponent(value)}`;

async function filtered(stream: StreamName, filters: Record<string, string>): Promise<Rec[]> {
  const query = Object.entries(filters).map(([k, v]) => enc(k, v)).join('&');
  const res = await dump(stream, query);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  // The in-process API must agree with HTTP.
  expect([...sandbox.records(stream, filters)]).toEqual(res.records);
  return res.records;
}

const ms = (v: unknown): number => Date.parse(v as string);

/** A value of `field` shared by several records: boundary tests need ties. */
function tiedInstant(stream: StreamName, field: string): string {
  const counts = new Map<string, number>();
  for (const r of all[stream]) if (r[field] !== null) counts.set(r[field] as string, (counts.get(r[field] as string) ?? 0) + 1);
  const [value] = [...counts].filter(([, n]) => n >= 2).sort((a, b) => b[1] - a[1])[Math.floor(counts.size / 50)] ?? [''];
  return value;
}

beforeAll(async () => {
  sandbox = await startSandbox({ anchor: FIXED_ANCHOR, seed: 3, trainingRecords: 800, phishingRecords: 700 });
  all.training = (await dump('training', '')).records;
  all.phishing = (await dump('phishing', '')).records;
});
afterAll(async () => {
  await sandbox.close();
});

describe('string and boolean filters', () => {
  const cases: [StreamName, string, string][] = [
    ['training', 'program', 'programId'],
    ['training', 'module', 'moduleId'],
    ['training', 'user', 'userId'],
    ['training', 'email', 'email'],
    ['training', 'group', 'groupId'],
    ['phishing', 'user', 'userId'],
    ['phishing', 'email', 'email'],
    ['phishing', 'employeeNumber', 'employeeNumber'],
    ['phishing', 'group', 'groupId'],
    ['phishing', 'campaign', 'campaignId'],
  ];
  it.each(cases)('%s filter[%s] matches %s exactly', async (stream, name, field) => {
    const value = all[stream].find((r, i) => i > 37 && r[field] !== null)![field] as string;
    const expected = all[stream].filter((r) => r[field] === value);
    expect(expected.length).toBeGreaterThan(0);
    expect(await filtered(stream, { [name]: value })).toEqual(expected);
    expect(await filtered(stream, { [name]: value + 'x' })).toEqual([]);
  });

  it('matches e-mail addresses with a plus sign when encoded', async () => {
    const value = all.training.find((r) => String(r.email).includes('+'))!.email as string;
    const expected = all.training.filter((r) => r.email === value);
    expect(expected.length).toBeGreaterThan(0);
    // Exactly that address's rows: not the address with the plus read as a space, nor any other.
    expect(await filtered('training', { email: value })).toEqual(expected);
    expect(await filtered('training', { email: value.replace('+', ' ') })).toEqual([]);
  });

  it('filter[completed] takes true or false', async () => {
    const done = await filtered('training', { completed: 'true' });
    const open = await filtered('training', { completed: 'false' });
    expect(done).toEqual(all.training.filter((r) => r.completed === true));
    expect(open).toEqual(all.training.filter((r) => r.completed === false));
    expect(done.length + open.length).toBe(all.training.length);
    expect(done.every((r) => r.completedAt !== null && r.progress === 100 && r.score !== null)).toBe(true);
    expect(open.every((r) => r.completedAt === null && r.score === null)).toBe(true);
  });

  it('combines filters with AND', async () => {
    const program = all.training[100].programId as string;
    const got = await filtered('training', { program, completed: 'true', completedAt: '>=2025-01-01' });
    expect(got).toEqual(
      all.training.filter((r) => r.programId === program && r.completed === true && ms(r.completedAt) >= Date.UTC(2025, 0, 1)),
    );
    expect(got.length).toBeGreaterThan(0);
  });
});

describe.each([
  ['training', 'completedAt'],
  ['training', 'availableFrom'],
  ['phishing', 'sentAt'],
] as const)('%s date filter %s', (stream, name) => {
  const field = name;
  const by = (pred: (t: number) => boolean) => all[stream].filter((r) => r[field] !== null && pred(ms(r[field])));

  it('>=, >, <=, < and equality at a tied instant', async () => {
    const value = tiedInstant(stream, field);
    const t = ms(value);
    expect(by((x) => x === t).length).toBeGreaterThan(1);
    expect(await filtered(stream, { [name]: `>=${value}` })).toEqual(by((x) => x >= t));
    expect(await filtered(stream, { [name]: `>${value}` })).toEqual(by((x) => x > t));
    expect(await filtered(stream, { [name]: `<=${value}` })).toEqual(by((x) => x <= t));
    expect(await filtered(stream, { [name]: `<${value}` })).toEqual(by((x) => x < t));
    expect(await filtered(stream, { [name]: value })).toEqual(by((x) => x === t));
  });

  it('date-only values: midnight UTC for operators, the whole day for equality', async () => {
    const day = tiedInstant(stream, field).slice(0, 10);
    const start = Date.parse(`${day}T00:00:00Z`);
    expect(await filtered(stream, { [name]: `>=${day}` })).toEqual(by((x) => x >= start));
    expect(await filtered(stream, { [name]: `<${day}` })).toEqual(by((x) => x < start));
    const sameDay = await filtered(stream, { [name]: day });
    expect(sameDay).toEqual(by((x) => x >= start && x < start + 86_400_000));
    expect(sameDay.length).toBeGreaterThan(0);
  });

  it('offsets and fractional seconds compare instants', async () => {
    const value = tiedInstant(stream, field);
    const t = ms(value);
    const plus2 = new Date(t + 7_200_000).toISOString().slice(0, 19) + '+02:00';
    expect(await filtered(stream, { [name]: `>=${plus2}` })).toEqual(by((x) => x >= t));
    const minus5 = new Date(t - 5.5 * 3_600_000).toISOString().slice(0, 19) + '-05:30';
    expect(await filtered(stream, { [name]: minus5 })).toEqual(by((x) => x === t));
    const frac = value.replace('Z', '.5Z');
    expect(await filtered(stream, { [name]: `>=${frac}` })).toEqual(by((x) => x > t));
    expect(await filtered(stream, { [name]: `<=${value.replace('Z', '.000Z')}` })).toEqual(by((x) => x <= t));
    expect(await filtered(stream, { [name]: `>=${value.toLowerCase()}` })).toEqual(by((x) => x >= t));
  });

  it('accepts unencoded brackets, operators and + in offsets', async () => {
    const value = tiedInstant(stream, field);
    const t = ms(value);
    const plus1 = new Date(t + 3_600_000).toISOString().slice(0, 19) + '+01:00';
    const res = await dump(stream, `filter[${name}]=>=${plus1}`);
    expect(res.status).toBe(200);
    expect(res.records).toEqual(by((x) => x >= t));
  });
});

describe('null dates never match', () => {
  it('completedAt with any operator skips rows without completion', async () => {
    const got = await filtered('training', { completedAt: '>1970-01-01' });
    expect(got).toEqual(all.training.filter((r) => r.completedAt !== null));
    expect(got.length).toBeLessThan(all.training.length);
    expect(await filtered('training', { completedAt: '<2999-01-01' })).toEqual(got);
  });
});

describe('invalid requests get 400 naming the parameter', () => {
  const cases: [string, StreamName, string, string][] = [
    ['unknown filter', 'training', enc('campaign', 'x'), 'filter[campaign]'],
    ['filter of the other report', 'phishing', enc('completed', 'true'), 'filter[completed]'],
    ['operator =>', 'training', enc('completedAt', '=>2024-05-01'), 'filter[completedAt]'],
    ['operator !=', 'training', enc('completedAt', '!=2024-05-01'), 'filter[completedAt]'],
    ['operator >>', 'phishing', enc('sentAt', '>>2024-05-01'), 'filter[sentAt]'],
    ['operator ==', 'phishing', enc('sentAt', '==2024-05-01'), 'filter[sentAt]'],
    ['impossible month', 'training', enc('availableFrom', '2024-13-01'), 'filter[availableFrom]'],
    ['impossible day', 'training', enc('availableFrom', '>=2023-02-29'), 'filter[availableFrom]'],
    ['hour 25', 'phishing', enc('sentAt', '2024-05-01T25:00:00Z'), 'filter[sentAt]'],
    ['no seconds', 'phishing', enc('sentAt', '2024-05-01T10:00Z'), 'filter[sentAt]'],
    ['no zone', 'phishing', enc('sentAt', '2024-05-01T10:00:00'), 'filter[sentAt]'],
    ['not a date', 'phishing', enc('sentAt', 'yesterday'), 'filter[sentAt]'],
    ['bad boolean', 'training', enc('completed', 'yes'), 'filter[completed]'],
    ['empty value', 'training', enc('program', ''), 'filter[program]'],
    ['repeated filter', 'training', `${enc('program', 'a')}&${enc('program', 'b')}`, 'filter[program]'],
    ['repeated, mixed encoding', 'training', `filter[user]=a&${enc('user', 'a')}`, 'filter[user]'],
    ['non-filter parameter', 'training', 'page=2', 'page'],
    ['bad percent-encoding', 'training', 'filter%5Bprogram%5D=%ZZ', 'filter[program]'],
  ];
  it.each(cases)('%s', async (_label, stream, query, parameter) => {
    const res = await dump(stream, query);
    expect(res.status).toBe(400);
    expect(res.body.parameter).toBe(parameter);
    expect(typeof res.body.error).toBe('string');
    expect(String(res.body.message)).toContain(parameter);
  });

  it('the in-process API throws FilterError', () => {
    expect(() => [...sandbox.records('training', { 'filter[completedAt]': '=>2024-01-01' })]).toThrow(FilterError);
  });
});
