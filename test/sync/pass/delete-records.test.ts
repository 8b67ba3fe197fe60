import { describe, expect, it } from 'vitest';
import { DeleteRecords, withDeletionMember, withoutDeletionMember } from '../../../src/sync/pass/delete-records.js';

/** A delete record: the key as stored, every other field null, the deletion's instant. */

const schema = { type: 'object', properties: { userId: { type: 'string' }, email: { type: ['null', 'string'] }, programId: { type: 'string' }, score: { type: ['null', 'integer'] } } };

describe('delete records', () => {
  it('carry the key values as stored (in the schema\'s order), null in every other field, and the deletion member last', () => {
    const records = new DeleteRecords(withDeletionMember(schema, '_sdc_deleted_at'), ['userId', 'programId'], '_sdc_deleted_at');
    expect(JSON.parse(records.json(Buffer.from('["usr-1","prog-01"]'), '2026-06-15T12:00:00Z'))).toEqual({ userId: 'usr-1', email: null, programId: 'prog-01', score: null, _sdc_deleted_at: '2026-06-15T12:00:00Z' });
    expect(records.json(Buffer.from('["usr-1","prog-01"]'), '2026-06-15T12:00:00Z')).toBe('{"userId":"usr-1","email":null,"programId":"prog-01","score":null,"_sdc_deleted_at":"2026-06-15T12:00:00Z"}');
  });

  it('keep a key value\'s JSON type (a number stays a number) and the Airbyte member', () => {
    const records = new DeleteRecords(schema, ['userId', 'score'], '_ab_cdc_deleted_at');
    expect(JSON.parse(records.json(Buffer.from('["a\\"b",7]'), '2026-06-15T12:00:00Z'))).toMatchObject({ userId: 'a"b', score: 7, _ab_cdc_deleted_at: '2026-06-15T12:00:00Z' });
  });

  it('carry a numeric key beyond 2^53 with every digit it was stored with, and any key value\'s text as stored (escapes, spaces between values)', () => {
    const records = new DeleteRecords(schema, ['userId', 'score'], '_sdc_deleted_at');
    expect(records.json(Buffer.from('["u\\u00e9, \\"x\\"" , 12345678901234567802]'), '2026-06-15T12:00:00Z')).toBe(
      '{"userId":"u\\u00e9, \\"x\\"","email":null,"programId":null,"score":12345678901234567802,"_sdc_deleted_at":"2026-06-15T12:00:00Z"}',
    );
    // A key stored from a view into a larger buffer (as the store reads its keys).
    const block = Buffer.from('xx["a",-1.50e3]yy');
    expect(JSON.parse(records.json(block.subarray(2, 15), '2026-06-15T12:00:00Z'))).toMatchObject({ userId: 'a', score: -1500 });
    expect(records.json(block.subarray(2, 15), '2026-06-15T12:00:00Z')).toContain('"score":-1.50e3');
  });

  it('refuse a stored key that is not one value per key property', () => {
    const records = new DeleteRecords(schema, ['userId', 'programId'], '_sdc_deleted_at');
    expect(() => records.json(Buffer.from('["usr-1"]'), '2026-06-15T12:00:00Z')).toThrow(/one value per key property/);
    for (const bad of ['"usr-1","p"', '["usr-1","p"', '["usr-1" "p"]', '["usr-1",]', '["usr-1","p"]x']) expect(() => records.json(Buffer.from(bad), '2026-06-15T12:00:00Z'), bad).toThrow(/one value per key property/);
  });

  it('are declared in the schema as a nullable date-time, once, last, however often the member is added', () => {
    expect(withDeletionMember(schema, '_sdc_deleted_at').properties!._sdc_deleted_at).toMatchObject({ type: ['null', 'string'], format: 'date-time' });
    const twice = withDeletionMember(withDeletionMember(schema, '_sdc_deleted_at'), '_sdc_deleted_at');
    expect(Object.keys(twice.properties!)).toEqual(['userId', 'email', 'programId', 'score', '_sdc_deleted_at']);
  });

  it('are not a field the engine reads: a configured schema (an Airbyte catalog) loses the member, in its properties and its required list, and is left as it is without one', () => {
    const configured = { ...withDeletionMember(schema, '_ab_cdc_deleted_at'), required: ['userId', '_ab_cdc_deleted_at'] };
    expect(withoutDeletionMember(configured, '_ab_cdc_deleted_at')).toEqual({ ...schema, required: ['userId'] });
    expect(withoutDeletionMember(schema, '_ab_cdc_deleted_at')).toBe(schema);
    expect(withoutDeletionMember(withDeletionMember(schema, '_ab_cdc_deleted_at'), '_ab_cdc_deleted_at')).toEqual(schema);
  });
});
