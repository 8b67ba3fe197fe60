import { instantMs, isEmittedForm } from '../dates.js';
import { DateDialect } from './date-dialect.js';
import type { JsonSchema } from '../catalog/schemas.js';
import { normalizeFieldName, printableName } from '../catalog/field-names.js';
import { ownValue } from '../catalog/field-keys.js';
import { InvalidRecordError } from './invalid-record.js';
import { isRawNumber, rawNumberText } from './long-numbers.js';

/**
 * The one table of field rules: what each selected field accepts, how a value
 * is converted to the declared type, and what makes a record invalid. The JSON
 * object path, the CSV object path and the CSV byte path all decide with these
 * functions, so they cannot drift apart; the byte path only adds shortcuts
 * whose output equals JSON.stringify of theirs. Built once per stream, so the
 * per-record work is a table look-up per field.
 */

export type FieldKind = 'string' | 'date' | 'integer' | 'number' | 'boolean' | 'any';

/** Runs on each converted, non-null value before it is written: personal-data policies plug in here. */
/** Replaces a field's value; pure (the same value gives the same result), so an encoder may reuse a result. */
export type FieldTransform = (value: unknown) => unknown;

export interface FieldRule {
  readonly name: string;
  readonly kind: FieldKind;
  readonly nullable: boolean;
  /** Bounds of a number or integer field, from the schema's minimum / maximum. */
  readonly minimum?: number;
  readonly maximum?: number;
  /** A key property: a record without a value for it is invalid. */
  readonly key: boolean;
  /** Holds personal data: its values are never quoted in a message. */
  readonly personal: boolean;
  /** How the service writes dates (the same for every field of a stream). */
  readonly dates: DateDialect;
  readonly transform?: FieldTransform;
}

/** The replication key of the record just read: its instant (NaN when null) and its value as written. */
export interface Replicated {
  readonly replicationMs: number;
  readonly replicationValue: string | null;
}

export interface FieldTableOptions {
  keyProperties: readonly string[];
  replicationKey: string;
  /** Fields of the stream's full schema: a served field outside it is undeclared, and reported once. */
  declaredFields: ReadonlySet<string>;
  onUndeclaredField(field: string): void;
  /** Fields holding personal data, matched by normalised name (`email` covers `E-mail`). */
  personalFields?: readonly string[];
  transforms?: Readonly<Record<string, FieldTransform>>;
  /** Fields read as they come, whatever their schema says (a transform replaces their values anyway). */
  readAsServed?: ReadonlySet<string>;
  /** How dates without a zone are read; UTC by default. */
  dates?: DateDialect;
  /** The name a served field has in the output when the field_names setting renames fields; by default the served name made printable (printableName). */
  outputName?: (served: string) => string;
}

/** The kind of value a field's schema gives (`any` unless it names one type besides null), and whether it may be null. */
export function kindOf(schema: JsonSchema): { kind: FieldKind; nullable: boolean } {
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const nullable = types.length === 0 || types.includes('null');
  const concrete = types.filter((t) => t !== 'null');
  if (concrete.length !== 1) return { kind: 'any', nullable };
  switch (concrete[0]) {
    case 'string':
      return { kind: schema.format === 'date-time' || schema.format === 'date' ? 'date' : 'string', nullable };
    case 'integer':
    case 'number':
    case 'boolean':
      return { kind: concrete[0], nullable };
    default:
      return { kind: 'any', nullable };
  }
}

/** Renamed served names remembered; a dump with more distinct names has the rest renamed each time. */
const MAX_CACHED_NAMES = 10_000;

export class FieldTable {
  readonly rules: readonly FieldRule[];
  readonly keyProperties: readonly string[];
  readonly replicationKey: string;
  /** True when some served names are written under another name: records cannot be copied as they are. */
  readonly renames: boolean;
  private readonly byName: Record<string, FieldRule | undefined> = Object.create(null) as Record<string, FieldRule | undefined>;
  private readonly outputNames = new Map<string, string>();
  private readonly reported = new Set<string>();
  /** The stream's declared fields, by normalised name: a renamed or respelt field is still declared. */
  private readonly declared: ReadonlySet<string>;

  /** The rules of the selected schema's fields, in its order. */
  constructor(
    schema: JsonSchema,
    private readonly options: FieldTableOptions,
  ) {
    this.keyProperties = options.keyProperties;
    this.replicationKey = options.replicationKey;
    const keys = new Set(options.keyProperties);
    const personal = new Set((options.personalFields ?? []).map(normalizeFieldName));
    const dates = options.dates ?? new DateDialect();
    this.renames = options.outputName !== undefined;
    this.declared = new Set([...options.declaredFields].map(normalizeFieldName));
    this.rules = Object.entries(schema.properties ?? {}).map(([name, fieldSchema]) => {
      const transform = ownValue(options.transforms, name);
      return {
        name,
        ...(options.readAsServed?.has(name) ? { kind: 'any' as const, nullable: true } : kindOf(fieldSchema)),
        ...(typeof fieldSchema.minimum === 'number' ? { minimum: fieldSchema.minimum } : {}),
        ...(typeof fieldSchema.maximum === 'number' ? { maximum: fieldSchema.maximum } : {}),
        key: keys.has(name),
        personal: personal.has(normalizeFieldName(name)),
        dates,
        ...(transform ? { transform } : {}),
      };
    });
    for (const rule of this.rules) this.byName[rule.name] = rule;
  }

  /** The rule of a selected field, by its output name, or undefined. */
  rule(name: string): FieldRule | undefined {
    return this.byName[name];
  }

  /** The output name of a served field (a renamed one computed once per name, for the first names seen). */
  outputName(served: string): string {
    if (this.options.outputName === undefined) return printableName(served);
    let name = this.outputNames.get(served);
    if (name === undefined) {
      name = this.options.outputName(served);
      // A dump may send any number of names: the cache stays bounded.
      if (this.outputNames.size < MAX_CACHED_NAMES) this.outputNames.set(served, name);
    }
    return name;
  }

  /** Whether the stream has a field of this name, selected or not. */
  knows(name: string): boolean {
    return this.byName[name] !== undefined || this.declared.has(normalizeFieldName(name));
  }

  /** Notes a served field that no rule takes: reported once, unless the stream declares it (it is only deselected). */
  unknownField(name: string): void {
    if (this.reported.has(name) || this.declared.has(normalizeFieldName(name))) return;
    this.reported.add(name);
    this.options.onUndeclaredField(name);
  }
}

/** Whether the schema bounds the field's numbers. */
export function isBounded(rule: FieldRule): boolean {
  return rule.minimum !== undefined || rule.maximum !== undefined;
}

export function inRange(rule: FieldRule, n: number): boolean {
  return (rule.minimum === undefined || n >= rule.minimum) && (rule.maximum === undefined || n <= rule.maximum);
}

function checkRange(rule: FieldRule, n: number): number {
  if (!inRange(rule, n)) throw new InvalidRecordError(`field ${rule.name} is ${n}, outside ${rule.minimum ?? '-∞'}..${rule.maximum ?? '∞'}`);
  return n;
}

const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
/** A JSON number written as an integer (no dot, no exponent). */
const INTEGER_TEXT = /^-?[0-9]+$/;

/** The ways services spell a boolean in text, each a pair of words (true, false) in any case. */
export const BOOLEAN_FAMILIES: ReadonlyArray<readonly [string, string]> = [
  ['true', 'false'],
  ['yes', 'no'],
  ['y', 'n'],
  ['t', 'f'],
];

/** The words services write booleans with, in any case: the families' words, and 1 and 0. */
export const BOOLEAN_WORDS: ReadonlyMap<string, boolean> = new Map([
  ...[...BOOLEAN_FAMILIES, ['1', '0'] as const].flatMap(([yes, no]) => [[yes, true] as const, [no, false] as const]),
]);

const BOOLEAN_WORD_LIST = [...BOOLEAN_WORDS];

function asciiLower(b: number): number {
  return b >= 65 && b <= 90 ? b + 32 : b;
}

/** BOOLEAN_WORDS read on bytes, in any case (ASCII letters only); undefined when the bytes are no such word. */
export function booleanWordBytes(buffer: Uint8Array, start: number, end: number): boolean | undefined {
  const length = end - start;
  if (length < 1 || length > 5) return undefined;
  for (const [word, truth] of BOOLEAN_WORD_LIST) {
    if (word.length !== length) continue;
    let k = 0;
    while (k < length && asciiLower(buffer[start + k]) === word.charCodeAt(k)) k++;
    if (k === length) return truth;
  }
  return undefined;
}

/**
 * How a message shows a value that did not fit: at most 40 characters of it,
 * JSON-escaped (no raw control characters), and not at all when the field
 * holds personal data or the value looks like an e-mail address.
 */
export function shown(rule: Pick<FieldRule, 'personal'>, text: string): string {
  if (rule.personal || text.includes('@')) return ' (the value is not shown: it may be personal data)';
  return `: ${JSON.stringify(text.slice(0, 40))}`;
}

/** A date text that is not a date. */
export function notADate(rule: Pick<FieldRule, 'name' | 'personal'>, text: string): InvalidRecordError {
  return new InvalidRecordError(`field ${rule.name} is not an RFC 3339 date${shown(rule, text)}`);
}

/** Text of a CSV cell or a JSON string, as the declared kind. Throws InvalidRecordError. */
export function fromText(rule: FieldRule, text: string): unknown {
  switch (rule.kind) {
    case 'string':
    case 'any':
      return text;
    case 'date': {
      const ms = rule.dates.textMs(text);
      if (Number.isNaN(ms)) throw notADate(rule, text);
      return rule.dates.written(text, ms);
    }
    case 'integer': {
      const n = NUMERIC.test(text) ? Number(text) : Number.NaN;
      if (!Number.isSafeInteger(n)) throw new InvalidRecordError(`field ${rule.name} is not an integer${shown(rule, text)}`);
      return checkRange(rule, n);
    }
    case 'number': {
      const n = NUMERIC.test(text) ? Number(text) : Number.NaN;
      if (!Number.isFinite(n)) throw new InvalidRecordError(`field ${rule.name} is not a number${shown(rule, text)}`);
      return checkRange(rule, n);
    }
    case 'boolean': {
      const truth = BOOLEAN_WORDS.get(text.length <= 5 ? text.toLowerCase() : '');
      if (truth === undefined) throw new InvalidRecordError(`field ${rule.name} is not a boolean${shown(rule, text)}`);
      return truth;
    }
  }
}

export function emptyCellError(rule: FieldRule): InvalidRecordError {
  return new InvalidRecordError(`field ${rule.name} is empty`);
}

/** An empty CSV cell: null where the field may be null, an empty string for a required text field, otherwise invalid. */
export function emptyCellValue(rule: FieldRule): null | '' {
  if (rule.nullable) return null;
  if (rule.kind === 'string') return '';
  throw emptyCellError(rule);
}

/** A value of a parsed JSON object, as the declared kind. Throws InvalidRecordError. */
export function fromJsonValue(rule: FieldRule, value: unknown): unknown {
  if (value === null || value === undefined) {
    if (!rule.nullable) throw new InvalidRecordError(rule.key ? `key property ${rule.name} is missing` : `field ${rule.name} is null`);
    return null;
  }
  if (isRawNumber(value)) return fromLongNumber(rule, value);
  switch (rule.kind) {
    case 'any':
      return value;
    case 'string':
      if (typeof value === 'string') return value;
      if (typeof value === 'number' || typeof value === 'boolean') return String(value);
      break;
    case 'date':
      if (typeof value === 'string') return value === '' && rule.nullable ? null : fromText(rule, value);
      if (typeof value === 'number') return epochDate(rule, value);
      break;
    case 'integer':
      if (typeof value === 'number' && Number.isSafeInteger(value)) return checkRange(rule, value);
      if (typeof value === 'string') return fromText(rule, value);
      break;
    case 'number':
      // JSON.parse reads 1e400 as Infinity, which JSON cannot carry.
      if (typeof value === 'number' && Number.isFinite(value)) return checkRange(rule, value);
      if (typeof value === 'string') return fromText(rule, value);
      break;
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (typeof value === 'string') return fromText(rule, value);
      break;
  }
  throw new InvalidRecordError(`field ${rule.name} has a ${typeof value} where the schema wants ${rule.kind}`);
}

/**
 * A number with more digits than a double keeps (long-numbers.ts), as the
 * declared kind: its digits kept in a number, an integer (when written as
 * one) or a string field; a date reads its value.
 */
function fromLongNumber(rule: FieldRule, value: object): unknown {
  const text = rawNumberText(value);
  switch (rule.kind) {
    case 'any':
      return value;
    case 'integer':
      // Written otherwise than as an integer (5.0000000000000000, 1.0000000000000000e1): read as a double, as before the digits were kept.
      if (!INTEGER_TEXT.test(text)) return fromJsonValue(rule, Number(text));
      checkRange(rule, Number(text));
      return value;
    case 'number':
      // JSON cannot carry a number beyond a double's range to readers that parse doubles: refused as such a double is.
      if (!Number.isFinite(Number(text))) break;
      checkRange(rule, Number(text));
      return value;
    case 'string':
      return text;
    case 'date':
      return epochDate(rule, Number(text));
    case 'boolean':
      break;
  }
  throw new InvalidRecordError(`field ${rule.name} has a number where the schema wants ${rule.kind}`);
}

/** A number in a date field: epoch seconds or milliseconds. */
function epochDate(rule: FieldRule, value: number): string {
  const ms = rule.dates.numberMs(value);
  if (Number.isNaN(ms)) throw notADate(rule, String(value));
  return rule.dates.format(ms);
}

/** Whether a JSON value may be written as it is: of the declared kind, canonical, no transformation to run. */
export function fitsAsIs(rule: FieldRule, value: unknown): boolean {
  if (rule.transform !== undefined) return false;
  if (value === null) return rule.nullable;
  if (isRawNumber(value)) return longNumberFits(rule, rawNumberText(value));
  switch (rule.kind) {
    case 'string':
      return typeof value === 'string';
    case 'date':
      return typeof value === 'string' && !Number.isNaN(instantMs(value)) && isEmittedForm(value);
    case 'integer':
      return Number.isSafeInteger(value) && inRange(rule, value as number);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) && inRange(rule, value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'any':
      return true;
  }
}

/** Whether a long number's text may be written as it is for the rule. */
function longNumberFits(rule: FieldRule, text: string): boolean {
  if (rule.kind === 'any') return true;
  const n = Number(text);
  if (rule.kind === 'integer') return (INTEGER_TEXT.test(text) || Number.isSafeInteger(n)) && inRange(rule, n);
  return rule.kind === 'number' && Number.isFinite(n) && inRange(rule, n);
}

/** A converted value as written: the rule's transformation, if any, runs on non-null values. */
export function finishValue(rule: FieldRule, value: unknown): unknown {
  return value === null || rule.transform === undefined ? value : rule.transform(value);
}

/** A key property without a value (absent, null or empty) makes the record invalid. */
export function checkKeys(table: FieldTable, record: Readonly<Record<string, unknown>>): void {
  for (const key of table.keyProperties) {
    // Read as data: a parsed record without `constructor` would otherwise show Object's.
    const value = ownValue(record, key);
    if (value === null || value === undefined || value === '') throw new InvalidRecordError(`key property ${key} is missing`);
  }
}
