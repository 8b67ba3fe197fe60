import { instantMs } from '../dates.js';
import { checkKeys, finishValue, fitsAsIs, fromJsonValue, type FieldTable, type Replicated } from './fields.js';
import { InvalidRecordError } from './invalid-record.js';
import { settledSnapshot, type RecordSnapshot } from './record-snapshot.js';
import { fieldRecord } from '../catalog/field-keys.js';

/**
 * A parsed JSONL line as the record to emit. Most records already fit their
 * schema: they are checked in place and returned as they are (`unchanged`, so
 * the caller may write the line's original bytes); only the others are rebuilt
 * field by field, which also drops fields the selection does not hold.
 */
export class JsonRecordConformer implements Replicated {
  replicationMs = Number.NaN;
  replicationValue: string | null = null;
  /** True when the last record is the input object itself, unchanged, so its original text may be written. */
  unchanged = true;
  private last: Record<string, unknown> = fieldRecord();

  constructor(private readonly table: FieldTable) {}

  /** Throws InvalidRecordError. */
  conform(input: unknown): Record<string, unknown> {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new InvalidRecordError('line is not a JSON object');
    const source = input as Record<string, unknown>;
    const fits = this.fits(source);
    const record = fits ? source : this.rebuild(source);
    this.unchanged = fits;
    checkKeys(this.table, record);
    const replication = record[this.table.replicationKey];
    this.replicationValue = typeof replication === 'string' ? replication : null;
    this.replicationMs = typeof replication === 'string' ? instantMs(replication) : Number.NaN;
    this.last = record;
    return record;
  }

  /** The last record conformed. */
  toObject(): Record<string, unknown> {
    return this.last;
  }

  snapshot(): RecordSnapshot {
    const record = this.last;
    return settledSnapshot(() => record);
  }

  private fits(source: Record<string, unknown>): boolean {
    if (this.table.renames) return false;
    for (const key in source) {
      const rule = this.table.rule(key);
      if (rule === undefined || !fitsAsIs(rule, source[key])) return false;
    }
    return true;
  }

  private rebuild(source: Record<string, unknown>): Record<string, unknown> {
    // Keyed by served names: `__proto__` or `constructor` is a field like any other.
    const record = fieldRecord<unknown>();
    for (const key in source) {
      const name = this.table.outputName(key);
      const rule = this.table.rule(name);
      if (rule === undefined) {
        this.table.unknownField(name);
        continue;
      }
      record[name] = finishValue(rule, fromJsonValue(rule, source[key]));
    }
    return record;
  }
}
