import { EXTRA_FIELD, type FieldSpec, type RawRecord, type RawValue } from './model.js';
import type { Layout } from './layout.js';
import type { DumpFormat } from '../src/catalog/reports.js';

export interface RenderOptions {
  /** The stream rendered: a layout may name and write its fields its own way. */
  readonly stream: string;
  /** Names, dates, booleans and the CSV delimiter as served. */
  readonly layout: Layout;
  /** Adds the undeclared field `department` (after `groupId`). */
  readonly extraFields: boolean;
}

/** CSV rows end with CRLF, as RFC 4180 asks; line breaks inside quoted values are kept as they are. */
export const CSV_EOL = '\r\n';

/** A CSV field: quoted when it holds the delimiter, a quote or a line break; an empty string is quoted so that it differs from null. */
export function csvField(value: string, delimiter = ','): string {
  if (value === '' || /["\r\n]/.test(value) || value.includes(delimiter)) return `"${value.replace(/"/g, '""')}"`;
  return value;
}

/** Turns raw records into the objects, JSONL lines and CSV rows a client receives, in the sandbox's layout. */
export class RecordRenderer {
  readonly fields: readonly FieldSpec[];
  private readonly names: readonly string[];

  constructor(
    schemaFields: readonly FieldSpec[],
    private readonly options: RenderOptions,
  ) {
    if (options.extraFields) {
      const at = schemaFields.findIndex((f) => f.name === 'groupId') + 1;
      this.fields = [...schemaFields.slice(0, at), { name: EXTRA_FIELD, kind: 'string' }, ...schemaFields.slice(at)];
    } else {
      this.fields = schemaFields;
    }
    this.names = this.fields.map((f) => options.layout.fieldName(f.name, options.stream));
  }

  private value(field: FieldSpec, raw: RawValue): string | number | boolean | null {
    if (raw === null || raw === undefined) return null;
    if (field.kind === 'date') return this.options.layout.date(raw as number, this.options.stream);
    if (field.kind === 'boolean') return this.options.layout.boolean(raw as boolean);
    return raw;
  }

  /** The record as the JSONL line carries it, keys in schema order, named as the layout says. */
  toObject(record: RawRecord): Record<string, string | number | boolean | null> {
    const out: Record<string, string | number | boolean | null> = {};
    this.fields.forEach((f, i) => (out[this.names[i]] = this.value(f, record[f.name])));
    return out;
  }

  jsonLine(record: RawRecord): string {
    return JSON.stringify(this.toObject(record)) + '\n';
  }

  csvHeader(): string {
    const delimiter = this.options.layout.csvDelimiter;
    return this.names.map((name) => csvField(name, delimiter)).join(delimiter) + CSV_EOL;
  }

  csvRow(record: RawRecord): string {
    const delimiter = this.options.layout.csvDelimiter;
    let line = '';
    for (let i = 0; i < this.fields.length; i++) {
      const f = this.fields[i];
      const v = this.value(f, record[f.name]);
      if (i > 0) line += delimiter;
      if (v === null) continue;
      line += typeof v === 'string' ? csvField(v, delimiter) : String(v);
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
