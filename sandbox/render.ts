import { EXTRA_FIELD, type FieldSpec, type RawRecord, type RawValue } from './model.js';
import { formatInstant } from './time.js';
import type { DumpFormat } from '../src/catalog/reports.js';

export interface RenderOptions {
  /** Minutes east of UTC used to write dates (same instants). */
  readonly offsetMinutes: number;
  /** Adds the undeclared field `department` (after `groupId`). */
  readonly extraFields: boolean;
}

/** CSV rows end with CRLF, as RFC 4180 asks; line breaks inside quoted values are kept as they are. */
export const CSV_EOL = '\r\n';

const NEEDS_QUOTES = /[",\r\n]/;

export function csvField(value: string): string {
  // An empty string is quoted so that it differs from null (an empty unquoted field).
  if (value === '' || NEEDS_QUOTES.test(value)) return `"${value.replace(/"/g, '""')}"`;
  return value;
}

/** Turns raw records into the objects, JSONL lines and CSV rows a client receives. */
export class RecordRenderer {
  readonly fields: readonly FieldSpec[];

  constructor(schemaFields: readonly FieldSpec[], private readonly options: RenderOptions) {
    if (options.extraFields) {
      const at = schemaFields.findIndex((f) => f.name === 'groupId') + 1;
      this.fields = [...schemaFields.slice(0, at), { name: EXTRA_FIELD, kind: 'string' }, ...schemaFields.slice(at)];
    } else {
      this.fields = schemaFields;
    }
  }

  private value(field: FieldSpec, raw: RawValue): string | number | boolean | null {
    if (raw === null || raw === undefined) return null;
    return field.kind === 'date' ? formatInstant(raw as number, this.options.offsetMinutes) : raw;
  }

  /** The record as the JSONL line carries it, keys in schema order. */
  toObject(record: RawRecord): Record<string, string | number | boolean | null> {
    const out: Record<string, string | number | boolean | null> = {};
    for (const f of this.fields) out[f.name] = this.value(f, record[f.name]);
    return out;
  }

  jsonLine(record: RawRecord): string {
    return JSON.stringify(this.toObject(record)) + '\n';
  }

  csvHeader(): string {
    return this.fields.map((f) => csvField(f.name)).join(',') + CSV_EOL;
  }

  csvRow(record: RawRecord): string {
    let line = '';
    for (let i = 0; i < this.fields.length; i++) {
      const f = this.fields[i];
      const v = this.value(f, record[f.name]);
      if (i > 0) line += ',';
      if (v === null) continue;
      line += typeof v === 'string' ? csvField(v) : String(v);
    }
    return line + CSV_EOL;
  }

  /** Text before the first record. */
  preamble(format: DumpFormat): string {
    return format === 'csv' ? this.csvHeader() : '';
  }

  line(format: DumpFormat, record: RawRecord): string {
    return format === 'csv' ? this.csvRow(record) : this.jsonLine(record);
  }
}
