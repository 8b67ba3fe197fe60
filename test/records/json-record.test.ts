import { describe, expect, it } from 'vitest';
import { JsonRecordConformer } from '../../src/records/json-record.js';
import { FieldTable } from '../../src/records/fields.js';
import { trainingTable } from '../helpers/fields.js';

function trainingConformer(warnings: string[] = []): JsonRecordConformer {
  return new JsonRecordConformer(trainingTable(warnings));
}

describe('JSON records conform to the selected schema', () => {
  it('marks a record that needs no change as unchanged, so its original text can be written', () => {
    const conformer = trainingConformer();
    const input = { userId: 'u1', programId: 'p1', moduleId: 'm1', completedAt: '2024-05-01T08:00:00Z', score: null };
    const record = conformer.conform(input);
    expect(conformer.unchanged).toBe(true);
    expect(record).toBe(input);
    expect(record).toEqual({ userId: 'u1', programId: 'p1', moduleId: 'm1', completedAt: '2024-05-01T08:00:00Z', score: null });
  });

  it('normalises offsets, coerces numeric strings and drops undeclared fields, warning once', () => {
    const warnings: string[] = [];
    const conformer = trainingConformer(warnings);
    for (let i = 0; i < 3; i++) {
      const record = conformer.conform({ userId: 'u1', programId: 'p1', moduleId: 'm1', completedAt: '2024-05-01T10:00:00+02:00', progress: '50', department: 'Sales' });
      expect(conformer.unchanged).toBe(false);
      expect(record).toEqual({ userId: 'u1', programId: 'p1', moduleId: 'm1', completedAt: '2024-05-01T08:00:00Z', progress: 50 });
    }
    expect(warnings).toEqual(['department']);
  });

  it('keeps the original key order', () => {
    const record = trainingConformer().conform({ moduleId: 'm1', userId: 'u1', programId: 'p1', department: 'x' });
    expect(Object.keys(record)).toEqual(['moduleId', 'userId', 'programId']);
  });

  it('rejects non-objects, null keys and wrong types', () => {
    const conformer = trainingConformer();
    expect(() => conformer.conform([1])).toThrow(/not a JSON object/);
    expect(() => conformer.conform({ userId: null, programId: 'p', moduleId: 'm' })).toThrow(/key property userId is missing/);
    expect(() => conformer.conform({ userId: 'u', programId: 'p' })).toThrow(/moduleId is missing/);
    expect(() => conformer.conform({ userId: 'u', programId: 'p', moduleId: 'm', completed: {} })).toThrow(/completed has a object/);
    expect(() => conformer.conform(JSON.parse('{"userId":"u","programId":"p","moduleId":"m","score":1e400}'))).toThrow(/score/);
    expect(() => conformer.conform({ userId: 'u', programId: 'p', moduleId: 'm', progress: 101 })).toThrow(/progress is 101/);
  });

  it('reads a key property named like an Object.prototype member as data: a record without it is invalid, fitting or rebuilt', () => {
    const table = new FieldTable(
      { type: 'object', properties: { constructor: { type: ['string', 'null'] }, at: { type: ['string', 'null'], format: 'date-time' } } },
      { declaredFields: new Set(['constructor', 'at']), keyProperties: ['constructor'], replicationKey: 'at', onUndeclaredField: () => undefined },
    );
    const conformer = new JsonRecordConformer(table);
    expect(() => conformer.conform(JSON.parse('{"at":"2024-05-01T08:00:00Z"}'))).toThrow(/key property constructor is missing/);
    expect(() => conformer.conform(JSON.parse('{"at":"2024-05-01T10:00:00+02:00"}'))).toThrow(/key property constructor is missing/);
    expect(conformer.conform(JSON.parse('{"constructor":"c1","at":"2024-05-01T08:00:00Z"}'))).toEqual({ constructor: 'c1', at: '2024-05-01T08:00:00Z' });
  });

  it('reports the replication instant and its value as written', () => {
    const conformer = trainingConformer();
    conformer.conform({ userId: 'u', programId: 'p', moduleId: 'm', completedAt: '2024-05-01T10:00:00+02:00' });
    expect(conformer.replicationMs).toBe(Date.UTC(2024, 4, 1, 8));
    expect(conformer.replicationValue).toBe('2024-05-01T08:00:00Z');
    conformer.conform({ userId: 'u', programId: 'p', moduleId: 'm', completedAt: null });
    expect(conformer.replicationMs).toBeNaN();
    expect(conformer.replicationValue).toBeNull();
  });
});
