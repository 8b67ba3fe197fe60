import { formatInstant, instantMs, instantMsBytes, isEmittedForm, isEmittedFormBytes } from '../dates.js';
import { copyBytes, NO_MEMBERS } from './copy-bytes.js';
import { booleanWordBytes, checkKeys, emptyCellError, emptyCellValue, finishValue, fromText, inRange, isBounded, notADate, type FieldRule, type FieldTable, type Replicated } from './fields.js';
import { InvalidRecordError } from './invalid-record.js';
import type { RecordSnapshot } from './record-snapshot.js';
import { FIELD_ESCAPED, type CsvRow } from './csv.js';
import { integerBytes, isJsonDecimal, isJsonInteger, needsEscape } from './json-text.js';
import { isLongInteger, isLongNumber } from './long-numbers.js';
import { fieldRecord } from '../catalog/field-keys.js';

/**
 * Turns CSV rows into RECORD lines without building objects: each selected
 * column's bytes are checked against its rule and copied into the output as
 * JSON (a quote pair around text that needs no escaping, numbers and booleans
 * as they are); only values that need converting go through the field rules'
 * slow functions. The result equals `JSON.stringify(recordFromTexts(row))`.
 */

/** The first row cannot be the header: the dump is not read (in both invalid-record policies). */
export class CsvHeaderError extends Error {}

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** What a header cell is when it is a value rather than a name, or undefined for a plausible name. */
function valueKind(cell: string): string | undefined {
  if (cell.includes('@')) return 'an e-mail address';
  if (NUMBER.test(cell)) return 'a number';
  if (cell.length >= 10 && !Number.isNaN(instantMs(cell))) return 'a date';
  return undefined;
}

/** Refuses a first row that holds values, or names none of the stream's fields; the message quotes none of its cells. */
function checkHeader(names: readonly string[], table: FieldTable): void {
  for (const [index, name] of names.entries()) {
    const kind = valueKind(name);
    if (kind) throw new CsvHeaderError(`the first line is not a header: column ${index + 1} holds ${kind}, not a field name. Does the service send its CSV without a header row?`);
  }
  if (!names.some((name) => table.knows(name))) {
    throw new CsvHeaderError(`the first line names none of the stream's fields (it has ${names.length} columns), so it is not the header the tap needs`);
  }
}

interface Column {
  index: number;
  rule: FieldRule;
  /** `"name":` with a leading comma for all but the first column. */
  key: Buffer;
  /** The JSON of an empty cell (`null` or `""`), or undefined when an empty cell is invalid. */
  empty: Buffer | undefined;
}

/** What an empty cell of this rule writes, decided once: the rules give the value, the transform (deterministic) runs on it. */
function emptyCellJson(rule: FieldRule): Buffer | undefined {
  try {
    return Buffer.from(JSON.stringify(finishValue(rule, emptyCellValue(rule))));
  } catch {
    return undefined;
  }
}

const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');

export class CsvRecordEncoder implements Replicated {
  private readonly columns: Column[] = [];
  private readonly keyColumns: Array<{ index: number; name: string }>;
  private readonly replicationIndex: number;
  readonly width: number;
  private readonly keyBytes: number;
  replicationMs = Number.NaN;
  private replicationText: string | null = null;
  /** Set when the replication value is the text of this column of the row, made only when asked for. */
  private replicationCell = -1;
  /** The row `inspect` saw last (valid only while the scanner's callback runs). */
  private row: CsvRow | undefined;
  /** Selected, nullable fields the header lacks, and their `,"name":null` text. */
  private readonly absent: readonly string[];
  private readonly absentJson: Buffer;

  /** Columns are matched to the table's rules by name; a column no rule takes is reported to the table. */
  constructor(
    header: readonly string[],
    private readonly table: FieldTable,
  ) {
    const names = header.map((h) => table.outputName(h.trim()));
    checkHeader(names, table);
    this.width = names.length;
    names.forEach((name, index) => {
      const rule = table.rule(name);
      if (!rule) return table.unknownField(name);
      this.columns.push({ index, rule, key: Buffer.from(`${this.columns.length === 0 ? '' : ','}${JSON.stringify(name)}:`), empty: emptyCellJson(rule) });
    });
    // A selected field the header lacks (the service dropped a column since discovery) is null in every record.
    this.absent = table.rules.filter((rule) => rule.nullable && !names.includes(rule.name)).map((rule) => rule.name);
    this.absentJson = Buffer.from(this.absent.map((name, i) => `${this.columns.length + i === 0 ? '' : ','}${JSON.stringify(name)}:null`).join(''));
    this.keyBytes = this.columns.reduce((n, c) => n + c.key.length, this.absentJson.length);
    this.keyColumns = table.keyProperties.map((name) => ({ index: names.indexOf(name), name }));
    this.replicationIndex = names.indexOf(table.replicationKey);
  }

  /** The replication key's value as written; made on demand, so read it before the next row is inspected. */
  get replicationValue(): string | null {
    if (this.replicationCell >= 0) {
      this.replicationText = this.row!.text(this.replicationCell);
      this.replicationCell = -1;
    }
    return this.replicationText;
  }

  /** Checks the row's shape, key properties and replication key; throws InvalidRecordError. */
  inspect(row: CsvRow): void {
    this.row = row;
    this.replicationCell = -1;
    if (row.malformed) throw new InvalidRecordError('a quoted field is followed by other characters');
    if (row.count !== this.width) throw new InvalidRecordError(`row has ${row.count} columns, the header has ${this.width}`);
    for (const { index, name } of this.keyColumns) {
      if (index === -1 || row.starts[index] === row.ends[index]) throw new InvalidRecordError(`key property ${name} is missing`);
    }
    const r = this.replicationIndex;
    if (r === -1 || row.starts[r] === row.ends[r]) {
      this.replicationMs = Number.NaN;
      this.replicationText = null;
      return;
    }
    // A date in the emitted form, read on its bytes: its text is made only if the cursor asks for it.
    const ms = emittedFormMs(row, r);
    if (!Number.isNaN(ms)) {
      this.replicationMs = ms;
      this.replicationCell = r;
      return;
    }
    const text = row.text(r);
    const rule = this.columns.find((c) => c.index === r)?.rule;
    const textMs = rule ? rule.dates.textMs(text) : instantMs(text);
    if (Number.isNaN(textMs)) throw notADate(rule ?? { name: `column ${r + 1}`, personal: false }, text);
    this.replicationMs = textMs;
    this.replicationText = rule ? rule.dates.written(text, textMs) : isEmittedForm(text) ? text : formatInstant(textMs);
  }

  /** The row as the record object, by the same rules as `encode` (the slow path: for boundary hashes, and the reference in tests). */
  recordFromTexts(texts: readonly string[]): Record<string, unknown> {
    const record = this.recordOf(texts);
    const replication = record[this.table.replicationKey];
    this.replicationCell = -1;
    this.replicationText = typeof replication === 'string' ? replication : null;
    this.replicationMs = typeof replication === 'string' ? instantMs(replication) : Number.NaN;
    return record;
  }

  /** The record of a row's texts, touching nothing else (snapshots build it later, while other rows are read). */
  private recordOf(texts: readonly string[]): Record<string, unknown> {
    if (texts.length !== this.width) throw new InvalidRecordError(`row has ${texts.length} columns, the header has ${this.width}`);
    const record = fieldRecord<unknown>();
    for (const { index, rule } of this.columns) {
      const text = texts[index];
      record[rule.name] = finishValue(rule, text === '' ? emptyCellValue(rule) : fromText(rule, text));
    }
    for (const name of this.absent) record[name] = null;
    checkKeys(this.table, record);
    return record;
  }

  /** The last inspected row as the record object. */
  toObject(): Record<string, unknown> {
    if (!this.row) throw new Error('toObject() before inspect()');
    return this.recordFromTexts(this.row.texts());
  }

  /** The row's record for later: its ranges now (its bytes copied once settled), the object when asked. */
  snapshot(): RecordSnapshot {
    if (!this.row) throw new Error('snapshot() before inspect()');
    const kept = this.row.keep();
    let settled = false;
    return {
      settle() {
        if (!settled) kept.own();
        settled = true;
      },
      read: () => this.recordOf(kept.texts()),
    };
  }

  /** Bytes `encode` may need for this row at most. */
  maxBytes(row: CsvRow, head: Buffer, tail: Buffer, members: Buffer = NO_MEMBERS): number {
    return head.length + tail.length + members.length + this.keyBytes + 6 * (row.end - row.start) + 8 * this.columns.length + 2;
  }

  /**
   * Writes `head`, the row as a JSON object (`members` added last, see
   * Envelope), and `tail` into `out` from `p`
   * (which has `maxBytes` free) and returns where the line ends. Throws
   * InvalidRecordError; call `inspect` first.
   */
  encode(row: CsvRow, out: Buffer, p: number, head: Buffer, tail: Buffer, members: Buffer = NO_MEMBERS): number {
    p = copyBytes(head, 0, head.length, out, p);
    out[p++] = 0x7b; // {
    for (const column of this.columns) {
      p = copyBytes(column.key, 0, column.key.length, out, p);
      p = this.cell(row, column, out, p);
    }
    p = copyBytes(this.absentJson, 0, this.absentJson.length, out, p);
    if (members.length !== 0) p = copyBytes(members, 0, members.length, out, p);
    out[p++] = 0x7d; // }
    return copyBytes(tail, 0, tail.length, out, p);
  }

  /** One cell as JSON: its bytes copied when they already are the JSON text of the converted value. */
  private cell(row: CsvRow, { rule, index, empty }: Column, out: Buffer, p: number): number {
    const source = row.buffer;
    const start = row.starts[index];
    const end = row.ends[index];
    const escaped = (row.flags[index] & FIELD_ESCAPED) !== 0;
    if (start === end) {
      if (empty === undefined) throw emptyCellError(rule);
      return p + empty.copy(out, p);
    }
    if (rule.transform !== undefined) return p + out.write(JSON.stringify(finishValue(rule, fromText(rule, row.text(index)))), p, 'utf8');
    switch (rule.kind) {
      case 'string':
      case 'any':
        if (escaped || needsEscape(source, start, end)) return p + out.write(JSON.stringify(row.text(index)), p, 'utf8');
        out[p++] = 0x22;
        p = copyBytes(source, start, end, out, p);
        out[p++] = 0x22;
        return p;
      case 'integer':
      case 'number': {
        // A number with more digits than a double keeps is copied as written (long-numbers.ts).
        const long = !escaped && (rule.kind === 'integer' ? isLongInteger(source, start, end) : isLongNumber(source, start, end));
        const longValue = long ? Number(source.toString('latin1', start, end)) : Number.NaN;
        if (long && Number.isFinite(longValue) && (!isBounded(rule) || inRange(rule, longValue))) return copyBytes(source, start, end, out, p);
        const canonical = !escaped && (rule.kind === 'integer' ? isJsonInteger(source, start, end) : isJsonDecimal(source, start, end));
        if (canonical && (!isBounded(rule) || (rule.kind === 'integer' && inRange(rule, integerBytes(source, start, end))))) return copyBytes(source, start, end, out, p);
        // Converting checks the type and the schema's bounds.
        const value = fromText(rule, row.text(index));
        return canonical ? copyBytes(source, start, end, out, p) : p + out.write(JSON.stringify(value), p, 'latin1');
      }
      case 'boolean': {
        const truth = escaped ? undefined : booleanWordBytes(source, start, end);
        if (truth === undefined) return p + out.write(String(fromText(rule, row.text(index))), p, 'latin1');
        return copyBytes(truth ? TRUE : FALSE, 0, truth ? 4 : 5, out, p);
      }
      case 'date': {
        // The emitted form is its own JSON text: checked and copied on its bytes.
        if (!Number.isNaN(emittedFormMs(row, index))) {
          out[p++] = 0x22;
          p = copyBytes(source, start, end, out, p);
          out[p++] = 0x22;
          return p;
        }
        const text = row.text(index);
        const ms = rule.dates.textMs(text);
        if (Number.isNaN(ms)) throw notADate(rule, text);
        out[p++] = 0x22;
        // A date in the emitted form is its own text (sub-millisecond digits kept); any other is written from its instant.
        p = isEmittedForm(text) ? p + out.write(text, p, 'latin1') : rule.dates.write(ms, out, p);
        out[p++] = 0x22;
        return p;
      }
    }
  }
}

/**
 * The instant of a cell holding a date in the emitted form (its bytes are its
 * text: not escaped), read without making a string; NaN for any other cell.
 * An emitted-form date names its zone, so every date dialect reads it so.
 */
function emittedFormMs(row: CsvRow, i: number): number {
  const start = row.starts[i];
  const end = row.ends[i];
  if ((row.flags[i] & FIELD_ESCAPED) !== 0 || !isEmittedFormBytes(row.buffer, start, end)) return Number.NaN;
  return instantMsBytes(row.buffer, start, end);
}
