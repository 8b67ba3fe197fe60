import type { JsonObject } from './messages.js';
import { keyOf } from './records.js';

/**
 * An Airbyte destination's `append_dedup` final table, as Destinations v2
 * build it (facts from ../shared/design.md): every RECORD is appended to the
 * raw table, and the final table holds, per primary key, the one record first
 * by the cursor descending with nulls last, then by `_airbyte_extracted_at`
 * (the RECORD's `emitted_at`) descending; a key whose winning record has a
 * non-null `_ab_cdc_deleted_at` has no row. Unlike a Singer target, a record
 * that arrives later does not win by arriving later: on a tie of cursor and
 * extraction time (SQL's ROW_NUMBER picks either) the model keeps the one it
 * loaded first, so no test passes by arrival order.
 */

/** How the destination dedups one stream: its primary key and cursor (a top-level field, or none), as the configured catalog names them. */
export interface DedupStream {
  primaryKey: readonly string[];
  cursor?: string;
}

interface Loaded {
  data: JsonObject;
  emittedAt: number;
}

interface AirbyteLine {
  type: string;
  record?: { stream: string; emitted_at: number; data: JsonObject };
}

/** A configured catalog's streams, as far as the destination's dedup reads them. */
export interface ConfiguredForDedup {
  streams: ReadonlyArray<{ stream: { name: string }; primary_key?: string[][]; cursor_field?: string[] }>;
}

/** How the destination dedups each stream of the configured catalog the platform hands it: by its primary_key and cursor_field (top-level fields). */
export function dedupOf(configured: ConfiguredForDedup): Record<string, DedupStream> {
  return Object.fromEntries(configured.streams.map((s) => [s.stream.name, { primaryKey: (s.primary_key ?? []).map(([field]) => field), cursor: s.cursor_field?.[0] }]));
}

/** Cursor values compare as the destination's typed column does: instants as instants, numbers as numbers. */
function cursorValue(value: unknown): number | string {
  if (typeof value === 'number') return value;
  const instant = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return Number.isNaN(instant) ? String(value) : instant;
}

/** Whether `candidate` outranks `current` in the dedup's ORDER BY: cursor DESC NULLS LAST, then extraction time DESC. */
function outranks(candidate: Loaded, current: Loaded, cursor: string | undefined): boolean {
  if (cursor !== undefined) {
    const a = candidate.data[cursor] ?? null;
    const b = current.data[cursor] ?? null;
    if (a !== null && b === null) return true;
    if (a === null && b !== null) return false;
    if (a !== null && b !== null) {
      const [x, y] = [cursorValue(a), cursorValue(b)];
      if (x !== y) return x > y;
    }
  }
  return candidate.emittedAt > current.emittedAt;
}

export class AirbyteDedupTable {
  private readonly winners = new Map<string, Map<string, Loaded>>();

  constructor(private readonly streams: Readonly<Record<string, DedupStream>>) {}

  /** Loads a read's stdout, one Airbyte message a line. */
  load(stdout: string): void {
    for (const line of stdout.split('\n')) {
      if (line === '') continue;
      const message = JSON.parse(line) as AirbyteLine;
      if (message.type === 'RECORD') this.append(message.record!.stream, { data: message.record!.data, emittedAt: message.record!.emitted_at });
    }
  }

  private append(stream: string, loaded: Loaded): void {
    const dedup = this.streams[stream];
    if (dedup === undefined) throw new Error(`a RECORD of ${stream}, which the configured catalog does not name`);
    let table = this.winners.get(stream);
    if (table === undefined) this.winners.set(stream, (table = new Map()));
    const key = keyOf(loaded.data, dedup.primaryKey);
    const current = table.get(key);
    if (current === undefined || outranks(loaded, current, dedup.cursor)) table.set(key, loaded);
  }

  /** The final table's rows, by key. */
  rows(stream: string): Map<string, JsonObject> {
    const live = [...(this.winners.get(stream) ?? [])].filter(([, row]) => (row.data._ab_cdc_deleted_at ?? null) === null);
    return new Map(live.map(([key, row]) => [key, row.data]));
  }
}
