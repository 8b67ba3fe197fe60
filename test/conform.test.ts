import { describe, expect, it } from 'vitest';
import { fieldSpecs, InvalidRecordError, RecordConformer } from '../src/records/fields.js';
import { loadSchema } from '../src/catalog/schemas.js';

function trainingConformer(warnings: string[] = []) {
  const schema = loadSchema('training.json');
  return new RecordConformer(fieldSpecs(schema), {
    declaredFields: new Set(Object.keys(schema.properties ?? {})),
    keyProperties: ['userId', 'programId', 'moduleId'],
    replicationKey: 'completedAt',
    onUndeclaredField: (f) => warnings.push(f),
  });
}

const header = ['userId', 'programId', 'moduleId', 'completed', 'completedAt', 'progress', 'score', 'timeSpentSeconds', 'lastName'];

describe('CSV values are coerced by the schema', () => {
  it('turns text into booleans, integers, numbers, UTC dates and empty cells into null', () => {
    const toRecord = trainingConformer().csvColumns(header);
    expect(toRecord(['u1', 'p1', 'm1', 'true', '2024-05-01T10:00:00+02:00', '100', '87.5', '3600', 'Müller, "Jr."'])).toEqual({
      userId: 'u1', programId: 'p1', moduleId: 'm1', completed: true, completedAt: '2024-05-01T08:00:00Z', progress: 100, score: 87.5, timeSpentSeconds: 3600, lastName: 'Müller, "Jr."',
    });
    expect(toRecord(['u1', 'p1', 'm1', 'FALSE', '', '0', '', '', ''])).toEqual({
      userId: 'u1', programId: 'p1', moduleId: 'm1', completed: false, completedAt: null, progress: 0, score: null, timeSpentSeconds: null, lastName: null,
    });
  });

  it('reports the replication instant of the last record', () => {
    const conformer = trainingConformer();
    const toRecord = conformer.csvColumns(header);
    toRecord(['u1', 'p1', 'm1', 'true', '2024-05-01T10:00:00+02:00', '100', '1', '1', 'x']);
    expect(conformer.replicationMs).toBe(Date.UTC(2024, 4, 1, 8));
    toRecord(['u1', 'p1', 'm1', 'false', '', '1', '', '1', 'x']);
    expect(conformer.replicationMs).toBeNaN();
    expect(conformer.replicationValue).toBeNull();
  });

  it('rejects values that are not of the declared type, and rows without a key', () => {
    const toRecord = trainingConformer().csvColumns(header);
    const row = ['u1', 'p1', 'm1', 'true', '2024-05-01T10:00:00Z', '100', '1', '1', 'x'];
    const bad = (index: number, value: string) => () => toRecord(row.map((v, i) => (i === index ? value : v)));
    expect(bad(3, 'yes')).toThrow(/completed is not a boolean/);
    expect(bad(4, '05/01/2024')).toThrow(/completedAt is not an RFC 3339 date/);
    expect(bad(5, '12.5')).toThrow(/progress is not an integer/);
    expect(bad(6, 'n/a')).toThrow(/score is not a number/);
    expect(bad(0, '')).toThrow(/key property userId is missing/);
    expect(bad(5, '150')).toThrow(/progress is 150, outside 0\.\.100/);
    expect(bad(5, '-3')).toThrow(/outside/);
    expect(() => toRecord(row.slice(1))).toThrow(InvalidRecordError);
  });

  it('drops undeclared columns and warns once per field', () => {
    const warnings: string[] = [];
    const toRecord = trainingConformer(warnings).csvColumns([...header, 'department']);
    const record = toRecord(['u1', 'p1', 'm1', 'true', '2024-05-01T10:00:00Z', '100', '1', '1', 'x', 'Sales']);
    expect(record).not.toHaveProperty('department');
    expect(warnings).toEqual(['department']);
  });
});

describe('JSON records conform to the selected schema', () => {
  it('marks a record that needs no change as unchanged, so its original text can be written', () => {
    const conformer = trainingConformer();
    const input = { userId: 'u1', programId: 'p1', moduleId: 'm1', completedAt: '2024-05-01T08:00:00Z', score: null };
    const record = conformer.fromJson(input);
    expect(conformer.unchanged).toBe(true);
    expect(record).toBe(input);
    expect(record).toEqual({ userId: 'u1', programId: 'p1', moduleId: 'm1', completedAt: '2024-05-01T08:00:00Z', score: null });
  });

  it('normalises offsets, coerces numeric strings and drops undeclared fields, warning once', () => {
    const warnings: string[] = [];
    const conformer = trainingConformer(warnings);
    for (let i = 0; i < 3; i++) {
      const record = conformer.fromJson({ userId: 'u1', programId: 'p1', moduleId: 'm1', completedAt: '2024-05-01T10:00:00+02:00', progress: '50', department: 'Sales' });
      expect(conformer.unchanged).toBe(false);
      expect(record).toEqual({ userId: 'u1', programId: 'p1', moduleId: 'm1', completedAt: '2024-05-01T08:00:00Z', progress: 50 });
    }
    expect(warnings).toEqual(['department']);
  });

  it('keeps the original key order', () => {
    const record = trainingConformer().fromJson({ moduleId: 'm1', userId: 'u1', programId: 'p1', department: 'x' });
    expect(Object.keys(record)).toEqual(['moduleId', 'userId', 'programId']);
  });

  it('rejects non-objects, null keys and wrong types', () => {
    const conformer = trainingConformer();
    expect(() => conformer.fromJson([1])).toThrow(/not a JSON object/);
    expect(() => conformer.fromJson({ userId: null, programId: 'p', moduleId: 'm' })).toThrow(/key property userId is missing/);
    expect(() => conformer.fromJson({ userId: 'u', programId: 'p' })).toThrow(/moduleId is missing/);
    expect(() => conformer.fromJson({ userId: 'u', programId: 'p', moduleId: 'm', completed: {} })).toThrow(/completed has a object/);
    expect(() => conformer.fromJson(JSON.parse('{"userId":"u","programId":"p","moduleId":"m","score":1e400}'))).toThrow(/score/);
    expect(() => conformer.fromJson({ userId: 'u', programId: 'p', moduleId: 'm', progress: 101 })).toThrow(/progress is 101/);
  });
});
