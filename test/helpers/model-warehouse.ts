import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import type { JsonObject } from './messages.js';
import { keyOf } from './records.js';

/**
 * A warehouse that loads a tap's messages as real Singer targets do, to check
 * what a warehouse ends up holding (facts from ../shared/design.md, and seen
 * with MeltanoLabs target-postgres 0.0.8 and pipelinewise-target-postgres
 * 2.1.2 run by hand):
 * - RECORD upserts by the stream's key properties, keeping the message's
 *   `version` as the row's table version (null without one), and a row that
 *   arrives again is no longer deleted;
 * - ACTIVATE_VERSION, the moment it arrives (records received before it are
 *   not flushed first): `hard` deletes rows whose version is <= it or null;
 *   `soft` marks deleted the rows whose version is < it, or null and not
 *   marked yet; `ignore` (pipelinewise) does nothing;
 * - BATCH loads its files' records as RECORDs without a version;
 * - a delete record (a RECORD whose `_sdc_deleted_at` is set): `remove`
 *   (pipelinewise-target-postgres with hard_delete) deletes the row; `mark`
 *   (MeltanoLabs target-postgres, pipelinewise without hard_delete) keeps it,
 *   its fields null but the key, the marker set: a query filters it out;
 * - SCHEMA gives the key properties; STATE is not the warehouse's.
 * `rows()` is what a query sees: rows not marked deleted either way.
 * An Airbyte destination dedups otherwise: see airbyte-dedup.ts.
 */

export type Deletes = 'hard' | 'soft' | 'ignore';

/** What the target does with a delete record. */
export type DeletedRows = 'remove' | 'mark';

const DELETED_AT = '_sdc_deleted_at';

interface Row {
  record: JsonObject;
  version: number | null;
  deleted: boolean;
}

interface SingerLine {
  type: string;
  stream?: string;
  key_properties?: string[];
  record?: JsonObject;
  version?: number;
  manifest?: string[];
  encoding?: { compression: string };
}

export class ModelWarehouse {
  private readonly tables = new Map<string, Map<string, Row>>();
  private readonly keys = new Map<string, readonly string[]>();
  activations = 0;

  constructor(
    /** What ACTIVATE_VERSION does. */
    private readonly deletes: Deletes,
    /** What a delete record does. */
    private readonly deletedRows: DeletedRows = 'mark',
  ) {}

  /** Loads a run's stdout, one message a line. */
  load(stdout: string): void {
    for (const line of stdout.split('\n')) if (line !== '') this.message(JSON.parse(line) as SingerLine);
  }

  private message(m: SingerLine): void {
    switch (m.type) {
      case 'SCHEMA':
        this.keys.set(m.stream!, m.key_properties!);
        return;
      case 'RECORD':
        return this.upsert(m.stream!, m.record!, m.version ?? null);
      case 'ACTIVATE_VERSION':
        this.activations++;
        return this.activate(m.stream!, m.version!);
      case 'BATCH':
        for (const url of m.manifest!) this.loadFile(m.stream!, url, m.encoding?.compression === 'gzip');
        return;
      default:
    }
  }

  private table(stream: string): Map<string, Row> {
    let table = this.tables.get(stream);
    if (table === undefined) this.tables.set(stream, (table = new Map()));
    return table;
  }

  private upsert(stream: string, record: JsonObject, version: number | null): void {
    const keys = this.keys.get(stream);
    if (keys === undefined) throw new Error(`a RECORD of ${stream} before its key properties`);
    const key = keyOf(record, keys);
    const gone = record[DELETED_AT] !== undefined && record[DELETED_AT] !== null;
    if (gone && this.deletedRows === 'remove') this.table(stream).delete(key);
    else this.table(stream).set(key, { record, version, deleted: gone });
  }

  private activate(stream: string, version: number): void {
    const table = this.table(stream);
    for (const [key, row] of table) {
      if (this.deletes === 'hard' && (row.version === null || row.version <= version)) table.delete(key);
      else if (this.deletes === 'soft' && ((row.version !== null && row.version < version) || (row.version === null && !row.deleted))) row.deleted = true;
    }
  }

  private loadFile(stream: string, url: string, gzip: boolean): void {
    const bytes = readFileSync(fileURLToPath(url));
    for (const line of (gzip ? gunzipSync(bytes) : bytes).toString('utf8').split('\n')) if (line !== '') this.upsert(stream, JSON.parse(line) as JsonObject, null);
  }

  /** The rows a query sees: live ones (not marked deleted), by key. */
  rows(stream: string): Map<string, JsonObject> {
    return new Map([...this.table(stream)].filter(([, row]) => !row.deleted).map(([key, row]) => [key, row.record]));
  }
}
