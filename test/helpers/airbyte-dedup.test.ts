import { describe, expect, it } from 'vitest';
import { AirbyteDedupTable } from './airbyte-dedup.js';
import type { JsonObject } from './messages.js';

/** The model the Airbyte end-to-end tests trust: it must dedup as Destinations v2 do, not as a Singer upsert does. */

function record(emittedAt: number, data: JsonObject): string {
  return JSON.stringify({ type: 'RECORD', record: { stream: 'training', emitted_at: emittedAt, data } });
}

function finalRow(cursor: string | undefined, ...lines: string[]): JsonObject | undefined {
  const table = new AirbyteDedupTable({ training: { primaryKey: ['userId'], cursor } });
  table.load(lines.join('\n'));
  return table.rows('training').get('["u1"]');
}

describe('the model of an append_dedup final table', () => {
  it('keeps the record with the latest cursor, whatever arrived later: a null cursor loses to a date (nulls last)', () => {
    const completed = { userId: 'u1', completedAt: '2026-01-01T10:00:00Z' };
    const reopened = { userId: 'u1', completedAt: null };
    expect(finalRow('completedAt', record(1, completed), record(2, reopened))).toEqual(completed);
    // Instants compare as instants (09:00Z is before 10:00Z), not as text.
    expect(finalRow('completedAt', record(1, completed), record(2, { userId: 'u1', completedAt: '2026-01-01T11:00:00+02:00' }))).toEqual(completed);
  });

  it('breaks a tie of cursors by extraction time, and a tie of both by what it loaded first', () => {
    expect(finalRow('completedAt', record(2, { userId: 'u1', completedAt: null, v: 2 }), record(1, { userId: 'u1', completedAt: null, v: 1 }))).toMatchObject({ v: 2 });
    expect(finalRow(undefined, record(1, { userId: 'u1', v: 1 }), record(2, { userId: 'u1', v: 2 }))).toMatchObject({ v: 2 });
    expect(finalRow(undefined, record(1, { userId: 'u1', v: 1 }), record(1, { userId: 'u1', v: 2 }))).toMatchObject({ v: 1 });
  });

  it('has no row for a key whose winning record carries _ab_cdc_deleted_at', () => {
    expect(finalRow(undefined, record(1, { userId: 'u1' }), record(2, { userId: 'u1', _ab_cdc_deleted_at: '2026-01-01T00:00:00Z' }))).toBeUndefined();
  });
});
