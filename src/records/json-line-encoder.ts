import { instantMs, instantMsBytes, isEmittedForm, isEmittedFormBytes, WRITTEN_INSTANT_BYTES } from '../dates.js';
import { isLongInteger, isLongNumber, parseKeepingDigits } from './long-numbers.js';
import { booleanWordBytes, finishValue, fromJsonValue, inRange, isBounded, notADate, type FieldRule, type FieldTable, type Replicated } from './fields.js';
import { InvalidRecordError } from './invalid-record.js';
import { JsonRecordConformer } from './json-record.js';
import type { DateDialect } from './date-dialect.js';
import { JSON_FALSE, JSON_NULL, JSON_NUMBER, JSON_STRING, JSON_TRUE, type JsonLine } from './json-line.js';
import { copyBytes, NO_MEMBERS } from './copy-bytes.js';
import type { RecordSnapshot } from './record-snapshot.js';
import { integerBytes, isJsonDecimal, isJsonInteger, isStringifyEscaped } from './json-text.js';

/**
 * Turns a scanned JSONL line into the record's JSON without JSON.parse or
 * JSON.stringify: by the field rules (the same functions the object path
 * uses), a line that already fits is reported `unchanged` (its bytes are the
 * record), and any other is written member by member, copying each value's
 * bytes where they already are the JSON of the converted value. The result is
 * always what `JsonRecordConformer` and JSON.stringify give for the parsed
 * line; where matching JSON.parse would need more than a flat scan (a name
 * given twice, a name that is an array index or `__proto__`, which objects
 * order or treat differently), `prepare` returns false and the caller takes
 * the object path.
 */

/** A member name seen in the dump, resolved once. */
interface Member {
  readonly served: Buffer;
  readonly rule: FieldRule | undefined;
  /** Without a rule, but the stream's own (deselected or dropped): left out without a word. */
  readonly declared: boolean;
  /** The output name; a member without a rule is reported under it. */
  readonly name: string;
  /** `"name":` as JSON. */
  readonly json: Buffer;
  /** Written under the name it is served with. */
  readonly sameName: boolean;
  /** False where JSON.parse's object would not follow the line (array-index names, `__proto__`). */
  readonly plain: boolean;
  /** Index in the table's key properties, or -1. */
  readonly keyIndex: number;
  readonly replication: boolean;
  /** Shared by the members written under one name: seen twice on one line is a duplicate. */
  readonly output: { seen: number };
  /** The rule's value checks decided on the token alone where they allow it: a plain string in a string field, null where null may be. */
  readonly quick: { readonly string: boolean; readonly nullable: boolean };
  /** The last value transformed, by its bytes: a person's rows come together, and transforms are pure. */
  readonly last: { raw: Buffer | undefined; value: unknown; json?: string; jsonOf?: unknown };
}

/** How a member is written: left out, its value's bytes copied, its value's text written, its name and value copied as they are in the line, or its instant written as a date. */
const SKIP = 0;
const COPY = 1;
const TEXT = 2;
const VERBATIM = 3;
const DATE = 4;

/** Names JSON.parse's object puts first (array indices) or does not hold as its own (`__proto__`). */
function isPlainName(name: string): boolean {
  return name !== '__proto__' && !(/^(0|[1-9]\d*)$/.test(name) && Number(name) < 2 ** 32 - 1);
}

/** Distinct member names remembered; a line with more new names than this takes the object path. */
const MAX_MEMBERS = 10_000;

export class JsonLineEncoder implements Replicated {
  replicationMs = Number.NaN;
  private replicationText: string | null = null;
  /** Set when the replication value is a formatted instant, made only when asked for. */
  private replicationDates: DateDialect | undefined;
  /** Set when the replication value is a string member's text as served, made only when asked for (while the line is current). */
  private replicationMember = -1;
  /** True when the line's bytes are the record as it is. */
  unchanged = true;
  private readonly members = new Map<string, Member>();
  private readonly outputs = new Map<string, Member['output']>();
  /** The member seen at each position of the last lines: dump lines repeat their layout. */
  private readonly byPosition: Array<Member | undefined> = [];
  /** Their served names, for the scanner to compare with (JsonLine.expected). */
  private readonly layout: Array<Buffer | undefined> = [];
  private resolved: Member[] = [];
  /** Members of the last line `resolve` accepted (its `resolved`), or -1 after one it refused. */
  private resolvedCount = -1;
  /** Whether a member of that line is written under another name than it is served with (a name made printable): its bytes are not the record. */
  private resolvedRenames = false;
  private modes = new Uint8Array(32);
  private texts: Array<string | undefined> = [];
  /** The instant of each date member, read by `dateValue`. */
  private dates = new Float64Array(32);
  private readonly present: Uint8Array;
  private readonly keyIndexes: ReadonlyMap<string, number>;
  private serial = 0;
  private line: JsonLine | undefined;
  private later: JsonRecordConformer | undefined;

  constructor(
    private readonly table: FieldTable,
    /** The object path, for what the byte path leaves to it. */
    private readonly objects: JsonRecordConformer,
  ) {
    this.keyIndexes = new Map(table.keyProperties.map((name, i) => [name, i]));
    this.present = new Uint8Array(table.keyProperties.length);
  }

  /**
   * Decides the record of a scanned line; false when the object path must
   * decide it instead. Throws InvalidRecordError as the object path would.
   */
  prepare(line: JsonLine): boolean {
    const resolved = this.resolve(line);
    line.expected = this.layout;
    if (!resolved) return false;
    this.line = line;
    this.unchanged = this.convert(line) && !this.table.renames && !this.resolvedRenames;
    for (let k = 0; k < this.present.length; k++) {
      if (!this.present[k]) throw new InvalidRecordError(`key property ${this.table.keyProperties[k]} is missing`);
    }
    return true;
  }

  /** The replication key's value as written; made on demand, so read it before the next line is prepared. */
  get replicationValue(): string | null {
    if (this.replicationDates !== undefined) {
      this.replicationText = this.replicationDates.format(this.replicationMs);
      this.replicationDates = undefined;
    } else if (this.replicationMember >= 0) {
      this.replicationText = this.line!.text(this.replicationMember);
      this.replicationMember = -1;
    }
    return this.replicationText;
  }

  /** Bytes `encode` needs at most. */
  maxBytes(head: Buffer, tail: Buffer, members: Buffer = NO_MEMBERS): number {
    const line = this.line!;
    let bytes = head.length + tail.length + members.length + 2;
    for (let i = 0; i < line.count; i++) {
      const mode = this.modes[i];
      if (mode === SKIP) continue;
      bytes += this.resolved[i].json.length + 1;
      if (mode === TEXT) bytes += 3 * this.texts[i]!.length;
      else if (mode === DATE) bytes += WRITTEN_INSTANT_BYTES + 2;
      else bytes += line.valueEnds[i] - line.valueStarts[i];
    }
    return bytes;
  }

  /** Writes `head`, the record's JSON (`members` added last, see Envelope) and `tail` into `out` from `p`, and returns where they end; call `prepare` first. */
  encode(out: Buffer, p: number, head: Buffer, tail: Buffer, members: Buffer = NO_MEMBERS): number {
    const line = this.line!;
    const source = line.buffer;
    p = copyBytes(head, 0, head.length, out, p);
    out[p++] = 0x7b; // {
    let first = true;
    // Members copied with their names, side by side in the line, are copied as one run, commas included.
    let runStart = -1;
    let runEnd = -1;
    for (let i = 0; i < line.count; i++) {
      const mode = this.modes[i];
      if (mode === SKIP) continue;
      if (mode === VERBATIM && runEnd >= 0 && line.nameStarts[i] - 2 === runEnd) {
        runEnd = line.valueEnds[i];
        continue;
      }
      if (runEnd >= 0) p = copyBytes(source, runStart, runEnd, out, p);
      runEnd = -1;
      if (!first) out[p++] = 0x2c; // ,
      first = false;
      if (mode === VERBATIM) {
        runStart = line.nameStarts[i] - 1;
        runEnd = line.valueEnds[i];
        continue;
      }
      const member = this.resolved[i];
      p = copyBytes(member.json, 0, member.json.length, out, p);
      if (mode === COPY) p = copyBytes(source, line.valueStarts[i], line.valueEnds[i], out, p);
      else if (mode === TEXT) p = writeText(this.texts[i]!, out, p);
      else {
        out[p++] = 0x22; // "
        p = member.rule!.dates.write(this.dates[i], out, p);
        out[p++] = 0x22;
      }
    }
    if (runEnd >= 0) p = copyBytes(source, runStart, runEnd, out, p);
    if (members.length !== 0) p = copyBytes(members, 0, members.length, out, p);
    out[p++] = 0x7d; // }
    p = copyBytes(tail, 0, tail.length, out, p);
    return p;
  }

  /** Finds each name's member, at its usual position first; false on a name written twice (served twice, or two served names for one output name), a special name, or too many names. */
  private resolve(line: JsonLine): boolean {
    const serial = ++this.serial;
    if (line.count > this.modes.length) {
      this.modes = new Uint8Array(line.count * 2);
      this.dates = new Float64Array(line.count * 2);
    }
    // The scanner compared the names with this layout: where it found them equal, they need no second look.
    const compared = line.comparedWith === this.layout;
    // Every name where the last accepted line had it, and no more: the same members, which that line checked (plain, none twice).
    if (compared && line.asExpectedCount === line.count && line.count === this.resolvedCount) return true;
    this.resolvedCount = -1;
    this.resolvedRenames = false;
    const resolved = this.resolved;
    resolved.length = line.count;
    for (let i = 0; i < line.count; i++) {
      let member = this.byPosition[i];
      if (member === undefined || !((compared && line.asExpected[i] === 1) || sameName(member.served, line, i))) {
        member = this.member(line.name(i));
        if (member === undefined) return false;
        this.byPosition[i] = member;
        this.layout[i] = member.served;
      }
      if (!member.plain || member.output.seen === serial) return false;
      member.output.seen = serial;
      if (!member.sameName) this.resolvedRenames = true;
      resolved[i] = member;
    }
    this.resolvedCount = line.count;
    return true;
  }

  private member(served: string): Member | undefined {
    let member = this.members.get(served);
    if (member !== undefined) return member;
    if (this.members.size >= MAX_MEMBERS) return undefined;
    const name = this.table.outputName(served);
    const rule = this.table.rule(name);
    member = {
      served: Buffer.from(served),
      rule,
      declared: rule === undefined && this.table.knows(name),
      name,
      json: Buffer.from(`${JSON.stringify(name)}:`),
      sameName: name === served,
      plain: isPlainName(served) && isPlainName(name),
      keyIndex: rule ? (this.keyIndexes.get(name) ?? -1) : -1,
      replication: rule !== undefined && name === this.table.replicationKey,
      output: this.outputs.get(name) ?? { seen: 0 },
      quick: quickChecks(rule),
      last: { raw: undefined, value: undefined },
    };
    this.outputs.set(name, member.output);
    this.members.set(served, member);
    return member;
  }

  /**
   * Decides how each member is written, converting where its bytes are not the
   * converted value's JSON; throws InvalidRecordError. Returns whether the line
   * fits as it is (every member selected, each value fitting its rule as the
   * object path's `fitsAsIs` says), in which case its own bytes are the record.
   */
  private convert(line: JsonLine): boolean {
    this.replicationText = null;
    this.replicationDates = undefined;
    this.replicationMember = -1;
    this.replicationMs = Number.NaN;
    // A loop, not fill(): TypedArray#fill is a runtime call, dear for the two or three key properties it clears per record.
    for (let k = 0; k < this.present.length; k++) this.present[k] = 0;
    let fits = true;
    for (let i = 0; i < line.count; i++) {
      const member = this.resolved[i];
      const rule = member.rule;
      if (rule === undefined) {
        if (!member.declared) this.table.unknownField(member.name);
        this.modes[i] = SKIP;
        fits = false;
        continue;
      }
      this.dates[i] = Number.NaN;
      const token = line.tokens[i];
      const { quick } = member;
      let value =
        (quick.string && token === JSON_STRING && line.escaped[i] === 0) || (quick.nullable && token === JSON_NULL)
          ? COPIED
          : rule.transform === undefined
            ? convertedValue(rule, line, i, this.dates)
            : this.transformed(member, line, i);
      let empty: boolean;
      let written: unknown;
      if (value === FORMATTED) {
        this.modes[i] = DATE;
        fits = false;
        if (member.replication) {
          this.replicationMs = this.dates[i];
          this.replicationDates = rule.dates;
        }
        if (member.keyIndex >= 0) this.present[member.keyIndex] = 1;
        continue;
      }
      if (value === COPIED) {
        // `"name":` with nothing between: the name and the value can be copied together.
        this.modes[i] = member.sameName && line.valueStarts[i] === line.nameEnds[i] + 2 ? VERBATIM : COPY;
        empty = token === JSON_NULL || (token === JSON_STRING && line.valueEnds[i] - line.valueStarts[i] === 2);
        if (member.replication && token === JSON_STRING) {
          this.replicationMember = i;
          this.replicationMs = Number.isNaN(this.dates[i]) ? servedInstant(line, i) : this.dates[i];
        }
      } else {
        // Converted, yet it may fit as it is: an escaped string, a number not in JSON.stringify's form.
        fits &&= mayFitConverted(rule, line, i);
        const text = value instanceof DateText ? `"${value.text}"` : rule.transform === undefined ? (JSON.stringify(value) as string | undefined) : transformedJson(member, value);
        if (value instanceof DateText) value = value.text;
        // A value JSON cannot hold (undefined from a transform) leaves the member out, as JSON.stringify does.
        this.modes[i] = text === undefined ? SKIP : TEXT;
        this.texts[i] = text;
        empty = value === null || value === undefined || value === '';
        written = value;
      }
      if (member.keyIndex >= 0) this.present[member.keyIndex] = empty ? 0 : 1;
      if (member.replication && typeof written === 'string') this.replicate(written, Number.isNaN(this.dates[i]) ? instantMs(written) : this.dates[i]);
    }
    return fits;
  }

  /** A transformed value (a pseudonym, a redaction), the same as the last one when the value's bytes are. */
  private transformed(member: Member, line: JsonLine, i: number): unknown {
    const { last } = member;
    const start = line.valueStarts[i];
    const end = line.valueEnds[i];
    if (last.raw !== undefined && rangeEquals(last.raw, line.buffer, start, end)) return last.value;
    const value = convertedValue(member.rule!, line, i, this.dates);
    last.raw = Buffer.from(line.buffer.subarray(start, end));
    last.value = value;
    return value;
  }

  private replicate(value: string, ms: number): void {
    this.replicationText = value;
    this.replicationMs = ms;
  }

  /** The last prepared line as the record object, by the object path (for boundary hashes). */
  toObject(): Record<string, unknown> {
    const line = this.line!;
    return this.objects.conform(parseKeepingDigits(line.buffer.toString('utf8', line.start, line.end)));
  }

  /** The last prepared line's record for later: its bytes (where they are until settled, then a copy), the object (by a conformer of its own, so the decoder's is left alone) when asked. */
  snapshot(): RecordSnapshot {
    const line = this.line!;
    return new LineSnapshot(line.buffer, line.start, line.end, this.laterConformer);
  }

  /** The conformer snapshots read with, made once: a closure per snapshot is an allocation per record on a sorted dump. */
  private readonly laterConformer = (): JsonRecordConformer => (this.later ??= new JsonRecordConformer(this.table));
}


/** A line's bytes kept for its record: a view of the chunk until `settle` copies them. */
class LineSnapshot implements RecordSnapshot {
  private settled = false;

  constructor(
    private bytes: Buffer,
    private start: number,
    private end: number,
    private readonly conformer: () => JsonRecordConformer,
  ) {}

  settle(): void {
    if (this.settled) return;
    this.bytes = Buffer.from(this.bytes.subarray(this.start, this.end));
    this.start = 0;
    this.end = this.bytes.length;
    this.settled = true;
  }

  read(): Record<string, unknown> {
    return this.conformer().conform(parseKeepingDigits(this.bytes.toString('utf8', this.start, this.end)));
  }
}

/** What `convertedValue` would copy on the token alone (without a transform, and for a declared kind). */
function quickChecks(rule: FieldRule | undefined): Member['quick'] {
  const checked = rule !== undefined && rule.transform === undefined && rule.kind !== 'any';
  return { string: checked && rule.kind === 'string', nullable: checked && rule.nullable };
}

/** out.write for the short, mostly ASCII texts of converted values: a loop costs less than the call. */
function writeText(text: string, out: Buffer, p: number): number {
  if (text.length > 32) return p + out.write(text, p, 'utf8');
  for (let k = 0; k < text.length; k++) {
    const c = text.charCodeAt(k);
    if (c >= 0x80) return p + out.write(text.slice(k), p, 'utf8');
    out[p++] = c;
  }
  return p;
}

/** JSON.stringify of a transformed value, made once for a run of equal values. */
function transformedJson(member: Member, value: unknown): string | undefined {
  const { last } = member;
  if (last.json === undefined || last.jsonOf !== value) {
    last.json = JSON.stringify(value) as string | undefined;
    last.jsonOf = value;
  }
  return last.json;
}

function rangeEquals(bytes: Buffer, buffer: Buffer, start: number, end: number): boolean {
  if (end - start !== bytes.length) return false;
  for (let k = 0; k < bytes.length; k++) if (buffer[start + k] !== bytes[k]) return false;
  return true;
}

function sameName(served: Buffer, line: JsonLine, i: number): boolean {
  const start = line.nameStarts[i];
  if (line.nameEnds[i] - start !== served.length) return false;
  const bytes = line.buffer;
  for (let k = 0; k < served.length; k++) if (bytes[start + k] !== served[k]) return false;
  return true;
}

/**
 * `fitsAsIs` of the object path for a value `convertedValue` did not copy: an
 * unescaped string in a date field was not copied because it is not in the
 * emitted form, so only escaped dates need the full check.
 */
function mayFitConverted(rule: FieldRule, line: JsonLine, i: number): boolean {
  if (rule.kind === 'date' && line.tokens[i] === JSON_STRING && !line.escaped[i]) return false;
  return fitsAsIs(rule, line, i);
}

/** `fitsAsIs` of the object path, decided on the value's bytes. */
function fitsAsIs(rule: FieldRule, line: JsonLine, i: number): boolean {
  if (rule.transform !== undefined) return false;
  const token = line.tokens[i];
  if (token === JSON_NULL) return rule.nullable;
  switch (rule.kind) {
    case 'any':
      return true;
    case 'string':
      return token === JSON_STRING;
    case 'boolean':
      return token === JSON_TRUE || token === JSON_FALSE;
    case 'date': {
      if (token !== JSON_STRING) return false;
      const text = line.text(i);
      return isEmittedForm(text) && !Number.isNaN(instantMs(text));
    }
    case 'integer':
    case 'number':
      return token === JSON_NUMBER && numberFits(rule, line.buffer, line.valueStarts[i], line.valueEnds[i]);
  }
}

function numberFits(rule: FieldRule, bytes: Buffer, start: number, end: number): boolean {
  if (rule.kind === 'integer' && isJsonInteger(bytes, start, end)) return inRange(rule, integerBytes(bytes, start, end));
  const n = Number(bytes.toString('latin1', start, end));
  return (rule.kind === 'integer' ? Number.isSafeInteger(n) : Number.isFinite(n)) && inRange(rule, n);
}

/** The value's bytes are the converted value's JSON. */
const COPIED = Symbol('copied');
/** A date whose instant (in the `dates` array) is written in the emitted form. */
const FORMATTED = Symbol('formatted');

/**
 * The member's value converted by its rule, or COPIED where its bytes already
 * are that value's JSON; anything but the common cases goes through the
 * object path's own functions on the parsed value.
 */
function convertedValue(rule: FieldRule, line: JsonLine, i: number, dates: Float64Array): unknown {
  const token = line.tokens[i];
  const { buffer } = line;
  const start = line.valueStarts[i];
  const end = line.valueEnds[i];
  // A number with more digits than a double keeps is copied as written (long-numbers.ts), whatever the runtime.
  if (rule.transform === undefined && token === JSON_NUMBER && isLongNumber(buffer, start, end)) {
    const long = longNumberAs(rule, buffer, start, end);
    if (long !== undefined) return long;
  }
  if (rule.transform !== undefined || rule.kind === 'any') return finishValue(rule, fromJsonValue(rule, line.value(i)));
  switch (token === JSON_NULL ? (rule.nullable ? 'copy' : 'convert') : rule.kind) {
    case 'copy':
      return COPIED;
    case 'string':
      if (token === JSON_STRING && (!line.escaped[i] || isStringifyEscaped(buffer, start, end))) return COPIED;
      break;
    case 'boolean': {
      if (token === JSON_TRUE || token === JSON_FALSE) return COPIED;
      const word = token === JSON_STRING && !line.escaped[i] ? booleanWordBytes(buffer, start + 1, end - 1) : undefined;
      if (word !== undefined) return word;
      break;
    }
    case 'integer':
      if (token === JSON_NUMBER && isJsonInteger(buffer, start, end) && inRange(rule, integerBytes(buffer, start, end))) return COPIED;
      break;
    case 'number':
      // A JSON decimal of at most 15 digits is finite: only bounds need its value.
      if (token === JSON_NUMBER && isJsonDecimal(buffer, start, end) && (!isBounded(rule) || inRange(rule, Number(buffer.toString('latin1', start, end))))) return COPIED;
      break;
    case 'date':
      if (token === JSON_STRING && end - start > 2) return dateValue(rule, line, i, dates);
      break;
  }
  return fromJsonValue(rule, line.value(i));
}

/**
 * A long number's value for the rule where its text is kept: COPIED into a
 * number, an integer (written as one, in range) or an untyped field, its text
 * as a string field's value; undefined where the rule converts it otherwise.
 */
function longNumberAs(rule: FieldRule, buffer: Buffer, start: number, end: number): unknown {
  switch (rule.kind) {
    case 'string':
      return buffer.toString('latin1', start, end);
    case 'any':
      return COPIED;
    case 'integer':
      if (!isLongInteger(buffer, start, end)) return undefined;
      break;
    case 'number':
      break;
    default:
      return undefined;
  }
  const n = Number(buffer.toString('latin1', start, end));
  // Beyond a double's range: refused as before (fromJsonValue), not carried to readers that parse doubles as Infinity.
  return Number.isFinite(n) && (!isBounded(rule) || inRange(rule, n)) ? COPIED : undefined;
}

/** A date as written: ASCII without quotes or backslashes, so its JSON is the text in quotes. */
class DateText {
  constructor(readonly text: string) {}
}

/** `instantMs` of a string member's text. */
function servedInstant(line: JsonLine, i: number): number {
  return line.escaped[i] ? instantMs(line.text(i)) : instantMsBytes(line.buffer, line.valueStarts[i] + 1, line.valueEnds[i] - 1);
}

/**
 * A date string as written (fromText of the object path, without its switch):
 * COPIED when it already is in the emitted form, FORMATTED when its instant is
 * to be written; either way its instant is left in `dates[i]`. The common
 * case, an unescaped date in the emitted form, is read on its bytes: an
 * emitted-form date names its zone (Z), so every dialect reads it as
 * `instantMs` does.
 */
function dateValue(rule: FieldRule, line: JsonLine, i: number, dates: Float64Array): DateText | typeof COPIED | typeof FORMATTED {
  if (!line.escaped[i]) {
    const start = line.valueStarts[i] + 1;
    const end = line.valueEnds[i] - 1;
    const ms = isEmittedFormBytes(line.buffer, start, end) ? instantMsBytes(line.buffer, start, end) : Number.NaN;
    if (!Number.isNaN(ms)) {
      dates[i] = ms;
      return COPIED;
    }
  }
  const text = line.text(i);
  const ms = rule.dates.textMs(text);
  if (Number.isNaN(ms)) throw notADate(rule, text);
  dates[i] = ms;
  if (!isEmittedForm(text)) return FORMATTED;
  // An emitted-form date is its own instant in UTC (textMs reads it as instantMs does); escaped, its JSON is rewritten.
  return line.escaped[i] ? new DateText(text) : COPIED;
}
