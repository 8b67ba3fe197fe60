import type { JsonObject } from './messages.js';

/** Comparing records: instants, keys, canonical JSON. */

/** Milliseconds of an RFC 3339 instant (any offset). */
export function instant(value: unknown): number {
  if (typeof value !== 'string') throw new Error(`not a date string: ${JSON.stringify(value)}`);
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new Error(`not a date: ${value}`);
  return ms;
}

/** Greatest replication-key instant among records (ignoring nulls). */
export function maxInstant(records: readonly JsonObject[], field: string): number {
  let max = Number.NEGATIVE_INFINITY;
  for (const r of records) if (r[field] !== null && r[field] !== undefined) max = Math.max(max, instant(r[field]));
  return max;
}

export function keyOf(record: JsonObject, keys: readonly string[]): string {
  return JSON.stringify(keys.map((k) => record[k]));
}

export function keySet(records: readonly JsonObject[], keys: readonly string[]): Set<string> {
  return new Set(records.map((r) => keyOf(r, keys)));
}

/** Canonical JSON with sorted keys: equal records (whatever the key order) give equal text. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as JsonObject)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as JsonObject)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

export function withoutFields(record: JsonObject, fields: readonly string[]): JsonObject {
  const copy = { ...record };
  for (const f of fields) delete copy[f];
  return copy;
}
