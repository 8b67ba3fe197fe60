import { formatInstant, instantMs, isEmittedForm } from '../dates.js';
import { fromText, inRange, InvalidRecordError, type FieldSpec, type RecordConformer } from './fields.js';
import { FIELD_ESCAPED, type CsvRow } from './csv.js';
import type { MessageWriter } from '../output/writer.js';

/**
 * Turns CSV rows into RECORD lines without building objects: each selected
 * column's bytes are checked against its type and copied into the output as
 * JSON (a quote pair around text that needs no escaping, numbers and booleans
 * as they are); only values that need converting go through strings. The
 * result equals `JSON.stringify` of the conformer's record for the same row.
 */

interface Column {
  index: number;
  spec: FieldSpec;
  /** `"name":` with a leading comma for all but the first column. */
  key: Buffer;
}

function needsEscape(buffer: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const b = buffer[i];
    if (b < 0x20 || b === 0x22 || b === 0x5c) return true;
  }
  return false;
}

/** Written by JSON.stringify exactly so, and safe: -?(0|[1-9][0-9]{0,14}), but not -0. */
function isJsonInteger(buffer: Buffer, start: number, end: number): boolean {
  let i = start;
  if (buffer[i] === 45) {
    i++;
    if (buffer[i] === 48) return false;
  }
  const digits = end - i;
  if (digits < 1 || digits > 15) return false;
  if (buffer[i] === 48 && digits > 1) return false;
  for (; i < end; i++) if (buffer[i] < 48 || buffer[i] > 57) return false;
  return true;
}

/**
 * Written by JSON.stringify exactly so: -?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?, at
 * most 15 significant digits (so the text round-trips), no -0.
 */
function isJsonDecimal(buffer: Buffer, start: number, end: number): boolean {
  let i = start;
  if (buffer[i] === 45) {
    i++;
    if (buffer[i] === 48 && (i + 1 === end || buffer[i + 1] === 46)) return false;
  }
  if (i >= end || end - i > 16) return false;
  if (buffer[i] === 48 && i + 1 < end && buffer[i + 1] !== 46) return false;
  if (buffer[end - 1] === 48 && buffer.indexOf(46, i) !== -1 && buffer.indexOf(46, i) < end) return false;
  let dot = -1;
  for (let j = i; j < end; j++) {
    const b = buffer[j];
    if (b === 46) {
      if (dot !== -1 || j === i || j === end - 1) return false;
      dot = j;
    } else if (b < 48 || b > 57) return false;
  }
  return true;
}

/** The value of bytes that passed isJsonInteger. */
function integerBytes(buffer: Buffer, start: number, end: number): number {
  const negative = buffer[start] === 45;
  let n = 0;
  for (let i = negative ? start + 1 : start; i < end; i++) n = n * 10 + (buffer[i] - 48);
  return negative ? -n : n;
}

function bytesEqual(buffer: Buffer, start: number, end: number, word: string): boolean {
  if (end - start !== word.length) return false;
  for (let i = 0; i < word.length; i++) if (buffer[start + i] !== word.charCodeAt(i)) return false;
  return true;
}

export class CsvRecordEncoder {
  private readonly columns: Column[];
  private readonly keyColumns: Array<{ index: number; name: string }>;
  private readonly replicationIndex: number;
  private readonly toObjectFromTexts: (row: readonly string[]) => Record<string, unknown>;
  readonly width: number;
  private readonly keyBytes: number;
  /** Set by `inspect`: the row's replication instant (NaN when empty) and its value as emitted. */
  replicationMs = Number.NaN;
  replicationValue: string | null = null;

  constructor(
    header: readonly string[],
    conformer: RecordConformer,
    keyProperties: readonly string[],
    replicationKey: string,
  ) {
    const names = header.map((h) => h.trim());
    this.width = names.length;
    this.toObjectFromTexts = conformer.csvColumns(names);
    this.columns = [];
    names.forEach((name, index) => {
      const spec = conformer.spec(name);
      if (!spec) return;
      this.columns.push({ index, spec, key: Buffer.from(`${this.columns.length === 0 ? '' : ','}${JSON.stringify(name)}:`) });
    });
    this.keyBytes = this.columns.reduce((n, c) => n + c.key.length, 0);
    this.keyColumns = keyProperties.map((name) => ({ index: names.indexOf(name), name }));
    this.replicationIndex = names.indexOf(replicationKey);
  }

  /** Checks the row's shape, key properties and replication key; throws InvalidRecordError. */
  inspect(row: CsvRow): void {
    if (row.malformed) throw new InvalidRecordError('a quoted field is followed by other characters');
    if (row.count !== this.width) throw new InvalidRecordError(`row has ${row.count} columns, the header has ${this.width}`);
    for (const { index, name } of this.keyColumns) {
      if (index === -1 || row.starts[index] === row.ends[index]) throw new InvalidRecordError(`key property ${name} is missing`);
    }
    const r = this.replicationIndex;
    if (r === -1 || row.starts[r] === row.ends[r]) {
      this.replicationMs = Number.NaN;
      this.replicationValue = null;
      return;
    }
    const text = row.text(r);
    const ms = instantMs(text);
    if (Number.isNaN(ms)) throw new InvalidRecordError(`field ${this.columnName(r)} is not an RFC 3339 date: ${JSON.stringify(text.slice(0, 40))}`);
    this.replicationMs = ms;
    this.replicationValue = isEmittedForm(text) ? text : formatInstant(ms);
  }

  private columnName(index: number): string {
    return this.columns.find((c) => c.index === index)?.spec.name ?? `column ${index + 1}`;
  }

  /** The row as the conformer's record object (the slow path, for hashing and for tests). */
  toObject(row: CsvRow): Record<string, unknown> {
    return this.toObjectFromTexts(row.texts());
  }

  /**
   * Puts `head`, the row as a JSON object, and `tail` into the writer's block
   * after its position, and returns where the line ends; the caller commits it
   * by moving `writer.pos` there. Throws InvalidRecordError.
   */
  encode(row: CsvRow, writer: MessageWriter, head: Buffer, tail: Buffer): number {
    const source = row.buffer;
    const budget = head.length + tail.length + this.keyBytes + 6 * (row.end - row.start) + 8 * this.columns.length + 2;
    const out = writer.reserve(budget);
    let p = writer.pos;
    p += head.copy(out, p);
    out[p++] = 0x7b; // {
    for (const column of this.columns) {
      p += column.key.copy(out, p);
      const { spec, index } = column;
      const start = row.starts[index];
      const end = row.ends[index];
      const flags = row.flags[index];
      if (start === end) {
        if (spec.nullable) p += out.write('null', p, 'latin1');
        else if (spec.kind === 'string') p += out.write('""', p, 'latin1');
        else throw new InvalidRecordError(`field ${spec.name} is empty`);
        continue;
      }
      switch (spec.kind) {
        case 'string':
        case 'any':
          if (!(flags & FIELD_ESCAPED) && !needsEscape(source, start, end)) {
            out[p++] = 0x22;
            p += source.copy(out, p, start, end);
            out[p++] = 0x22;
          } else {
            p += out.write(JSON.stringify(row.text(index)), p, 'utf8');
          }
          break;
        case 'integer':
        case 'number': {
          const canonical = !(flags & FIELD_ESCAPED) && (spec.kind === 'integer' ? isJsonInteger(source, start, end) : isJsonDecimal(source, start, end));
          if (canonical && spec.minimum === undefined && spec.maximum === undefined) {
            p += source.copy(out, p, start, end);
          } else if (canonical && spec.kind === 'integer' && inRange(spec, integerBytes(source, start, end))) {
            p += source.copy(out, p, start, end);
          } else {
            // Converting checks the type and the schema's bounds.
            const value = fromText(spec, row.text(index));
            p += canonical ? source.copy(out, p, start, end) : out.write(JSON.stringify(value), p, 'latin1');
          }
          break;
        }
        case 'boolean':
          if (bytesEqual(source, start, end, 'true') || bytesEqual(source, start, end, 'false')) p += source.copy(out, p, start, end);
          else p += out.write(String(fromText(spec, row.text(index))), p, 'latin1');
          break;
        case 'date': {
          const text = row.text(index);
          const ms = instantMs(text);
          if (Number.isNaN(ms)) throw new InvalidRecordError(`field ${spec.name} is not an RFC 3339 date: ${JSON.stringify(text.slice(0, 40))}`);
          p += out.write(`"${isEmittedForm(text) ? text : formatInstant(ms)}"`, p, 'latin1');
          break;
        }
      }
    }
    out[p++] = 0x7d; // }
    p += tail.copy(out, p);
    return p;
  }
}
