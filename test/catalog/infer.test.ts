import { describe, expect, it } from 'vitest';
import { inferField, looksLikeDateName, sampledInstantMs } from '../../src/catalog/infer.js';
import { DateDialect } from '../../src/records/date-dialect.js';

const utc = new DateDialect('UTC');
const json = { fromCsv: false, dates: utc, key: false };
const csv = { fromCsv: true, dates: utc, key: false };

describe('a field the packaged schema knows', () => {
  const score = { type: ['number', 'null'], description: 'Score.' };
  const completedAt = { type: ['string', 'null'], format: 'date-time', description: 'When.' };

  it('keeps its packaged type where every sampled value fits it, also in another notation', () => {
    expect(inferField('score', [87.5, null, '90'], score, json)).toBe(score);
    expect(inferField('completed_at', ['2025-01-10 10:00:00', null, 1_736_503_200], completedAt, json)).toBe(completedAt);
    expect(inferField('Completed At', ['2025-01-10T10:00:00+02:00', ''], completedAt, csv)).toBe(completedAt);
  });

  it('keeps its packaged type when the sample holds only nulls (a sorted dump, nulls first)', () => {
    expect(inferField('completedAt', [null, null, null], completedAt, json)).toBe(completedAt);
    expect(inferField('score', ['', '', ''], score, csv)).toBe(score);
  });

  it('takes the sampled type, with the packaged description, where the sample disagrees', () => {
    expect(inferField('score', ['A+', 'B'], score, csv)).toEqual({ type: ['string', 'null'], description: 'Score.' });
  });
});

describe('a field the packaged schema does not know', () => {
  it.each([
    ['booleans', [true, false, null], { type: ['boolean', 'null'] }],
    ['integers', [1, 2, 30], { type: ['integer', 'null'] }],
    ['numbers', [1, 2.5], { type: ['number', 'null'] }],
    ['dates', ['2025-01-10T10:00:00Z', '2025-01-10 11:00:00', '2025-01-11'], { type: ['string', 'null'], format: 'date-time' }],
    ['text', ['Sales', 'R&D'], { type: ['string', 'null'] }],
    ['numeric text (JSON keeps strings strings)', ['42', '7'], { type: ['string', 'null'] }],
    ['objects, passed through', [{ a: 1 }], { type: ['object', 'null'] }],
    ['arrays, passed through', [[1, 2]], { type: ['array', 'null'] }],
    ['mixed types, any value', [1, 'x'], {}],
  ])('JSONL %s', (_label, values, schema) => {
    expect(inferField('extra', values, undefined, json)).toEqual(schema);
  });

  it.each([
    ['yes/no, y/n, t/f and true/false words', ['yes', 'No', 'Y', 'f', 'TRUE'], { type: ['boolean', 'null'] }],
    ['0 and 1 (integers, not booleans)', ['0', '1'], { type: ['integer', 'null'] }],
    ['integers', ['12', '-3', '0'], { type: ['integer', 'null'] }],
    ['IDs with leading zeros (text)', ['00123', '00456'], { type: ['string', 'null'] }],
    ['decimals', ['1.5', '2'], { type: ['number', 'null'] }],
    ['dates', ['2025-01-10 10:00:00', '2025-01-11'], { type: ['string', 'null'], format: 'date-time' }],
    ['text', ['Sales', '42'], { type: ['string', 'null'] }],
  ])('CSV %s', (_label, values, schema) => {
    expect(inferField('extra', values, undefined, csv)).toEqual(schema);
  });

  it.each([
    ['Y and N', ['Y', 'N', 'Y'], { type: ['boolean', 'null'] }],
    ['yes and no in any case', ['Yes', 'no', 'YES'], { type: ['boolean', 'null'] }],
    ['true and false as strings', ['true', 'false'], { type: ['boolean', 'null'] }],
    ['t and f', ['t', 'F'], { type: ['boolean', 'null'] }],
    ['one word of a family only (an initial may be Y)', ['Y', 'Y'], { type: ['string', 'null'] }],
    ['words of two families', ['yes', 'N'], { type: ['string', 'null'] }],
    ['0 and 1 as strings', ['0', '1'], { type: ['string', 'null'] }],
    ['a boolean word among other text', ['Y', 'N', 'maybe'], { type: ['string', 'null'] }],
  ])('JSONL strings of %s', (_label, values, schema) => {
    expect(inferField('extra', values, undefined, json)).toEqual(schema);
  });

  it('is a nullable string when the sample holds only nulls, or a date-time when its name says so', () => {
    expect(inferField('department', [null, ''], undefined, json)).toEqual({ type: ['string', 'null'] });
    for (const name of ['updatedAt', 'updated_at', 'Updated At', 'due_date', 'Due Date', 'dueDate', 'timestamp']) {
      expect(inferField(name, [null], undefined, json), name).toEqual({ type: ['string', 'null'], format: 'date-time' });
    }
    for (const name of ['format', 'candidate', 'heat', 'update']) expect(looksLikeDateName(name), name).toBe(false);
  });

  it('reads epoch seconds or milliseconds under a date-like name as a date-time', () => {
    expect(inferField('createdAt', [1_736_503_200, 1_736_589_600], undefined, json)).toEqual({ type: ['string', 'null'], format: 'date-time' });
    expect(inferField('created_at', ['1736503200123'], undefined, csv)).toEqual({ type: ['string', 'null'], format: 'date-time' });
    expect(inferField('count', [1_736_503_200], undefined, json)).toEqual({ type: ['integer', 'null'] });
  });

  it('is never null when it is a key property', () => {
    expect(inferField('ticketId', ['t-1'], undefined, { ...json, key: true })).toEqual({ type: 'string' });
  });
});

describe('a sampled value read as an instant (for the replication key)', () => {
  it.each([
    ['RFC 3339', '2025-01-10T10:00:00+02:00', Date.UTC(2025, 0, 10, 8)],
    ['ISO 8601 without a zone', '2025-01-10 10:00:00', Date.UTC(2025, 0, 10, 10)],
    ['a date alone', '2025-01-10', Date.UTC(2025, 0, 10)],
    ['epoch seconds', 1_736_503_200, 1_736_503_200_000],
    ['epoch milliseconds', 1_736_503_200_123, 1_736_503_200_123],
    ['epoch seconds as digits', '1736503200', 1_736_503_200_000],
    ['epoch milliseconds as digits', '1736503200123', 1_736_503_200_123],
  ])('%s', (_label, value, ms) => {
    expect(sampledInstantMs(value, utc)).toBe(ms);
  });

  it.each([['a count', 42], ['a short digit string', '12345'], ['a long ID', '12345678901234567'], ['text', 'yesterday'], ['a boolean', true], ['an object', { at: 1 }]])('not %s', (_label, value) => {
    expect(sampledInstantMs(value, utc)).toBeNaN();
  });
});
