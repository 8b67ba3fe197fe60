import { BOOLEAN_FAMILIES, BOOLEAN_WORDS, fromJsonValue, fromText, kindOf, type FieldKind, type FieldRule } from '../records/fields.js';
import { DateDialect } from '../records/date-dialect.js';
import type { JsonSchema } from './schemas.js';

/**
 * Types of served fields from a sample of their values. A field the packaged
 * schema knows keeps its packaged type where every sampled value fits it (or
 * none was seen: a sample of a sorted dump may hold only nulls); otherwise,
 * and for a field it does not know, the type is inferred from the values.
 */

/** A value that says nothing about the type: absent, null, or an empty CSV cell. */
export const isBlank = (value: unknown): boolean => value === null || value === undefined || value === '';

/** Names that say a field holds a date: `sentAt`, `sent_at`, `Sent At`, `sent_date`, `Sent Date`, `sentDate`, `timestamp`. */
const DATE_NAME = /(?:[\p{Ll}\d]At|[ _-][Aa][Tt]|[ _-][Dd]ate|[\p{Ll}\d]Date|[Tt]imestamp)$/u;

export function looksLikeDateName(name: string): boolean {
  return DATE_NAME.test(name) || /^(date|timestamp)$/i.test(name);
}

const INTEGER_TEXT = /^[+-]?(0|[1-9]\d{0,14})$/;
const NUMBER_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
/** Digits with a leading zero (an ID such as 00123) are text, not numbers. */
const LEADING_ZERO = /^[+-]?0\d/;

function kindOfText(texts: readonly string[], dates: DateDialect): FieldKind {
  if (texts.every((t) => BOOLEAN_WORDS.has(t.toLowerCase()) && !/^[01]$/.test(t))) return 'boolean';
  if (texts.every((t) => INTEGER_TEXT.test(t))) return 'integer';
  if (texts.every((t) => NUMBER_TEXT.test(t) && !LEADING_ZERO.test(t))) return 'number';
  if (texts.every((t) => t.length >= 10 && /^\d{4}-\d{2}-\d{2}/.test(t) && !Number.isNaN(dates.textMs(t)))) return 'date';
  return 'string';
}

/**
 * Strings in JSON that are booleans: every one a word of the same family,
 * both of its words seen (`"Y"` alone may be an initial, `"yes"` and `"no"`
 * together are an answer). CSV, where every value is text, reads any
 * boolean word (kindOfText).
 */
function isBooleanWords(texts: readonly string[]): boolean {
  const words = new Set(texts.map((t) => t.toLowerCase()));
  return BOOLEAN_FAMILIES.some(([yes, no]) => words.size === 2 && words.has(yes) && words.has(no));
}

function kindOfJson(values: readonly unknown[], dates: DateDialect): FieldKind | 'object' | 'array' {
  const types = new Set(values.map((v) => (Array.isArray(v) ? 'array' : typeof v)));
  if (types.size !== 1) return 'any';
  const [type] = types;
  if (type === 'boolean') return 'boolean';
  if (type === 'number') return values.every((v) => Number.isSafeInteger(v)) ? 'integer' : 'number';
  if (type === 'object' || type === 'array') return type;
  if (type === 'string') {
    const texts = values as string[];
    if (isBooleanWords(texts)) return 'boolean';
    return texts.every((t) => t.length >= 10 && /^\d{4}-\d{2}-\d{2}/.test(t) && !Number.isNaN(dates.textMs(t))) ? 'date' : 'string';
  }
  return 'any';
}

/** Whether a field's schema is a date the field rules read as an instant (`format` date-time or date). */
export function isDateSchema(schema: JsonSchema): boolean {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  return types.includes('string') && (schema.format === 'date-time' || schema.format === 'date');
}

export function dateTimeSchema(nullable: boolean, description?: string): JsonSchema {
  return { ...schemaOf('date', nullable), ...(description === undefined ? {} : { description }) };
}

/** Epoch seconds from 1973 (nine digits) to milliseconds before the year 5138 (fourteen digits): shorter or longer numbers are counts or IDs. */
function isEpochNumber(n: number): boolean {
  return Number.isFinite(n) && Math.abs(n) >= 1e8 && Math.abs(n) < 1e14;
}

/** The instant a sampled value stands for: a date text in the stream's dialect, or epoch seconds or milliseconds as a number or digit string; NaN for anything else. */
export function sampledInstantMs(value: unknown, dates: DateDialect): number {
  if (typeof value === 'number') return isEpochNumber(value) ? dates.numberMs(value) : Number.NaN;
  if (typeof value !== 'string') return Number.NaN;
  if (/^-?\d+(\.\d+)?$/.test(value)) return isEpochNumber(Number(value)) ? dates.numberMs(Number(value)) : Number.NaN;
  return dates.textMs(value);
}

function schemaOf(kind: FieldKind | 'object' | 'array', nullable: boolean): JsonSchema {
  const orNull = (type: string): string | string[] => (nullable ? [type, 'null'] : type);
  switch (kind) {
    case 'date':
      return { type: orNull('string'), format: 'date-time' };
    case 'any':
      return {};
    default:
      return { type: orNull(kind) };
  }
}

/** Whether every sampled value converts under the packaged field's rule. */
function fits(name: string, packaged: JsonSchema, values: readonly unknown[], fromCsv: boolean, dates: DateDialect): boolean {
  const { kind } = kindOf(packaged);
  if (kind === 'any') return true;
  const rule: FieldRule = { name, kind, nullable: true, key: false, personal: true, dates };
  try {
    for (const value of values) {
      if (fromCsv) fromText(rule, value as string);
      else fromJsonValue(rule, value);
    }
    return true;
  } catch {
    return false;
  }
}

export interface InferOptions {
  fromCsv: boolean;
  dates: DateDialect;
  /** A key property is never null. */
  key: boolean;
}

/** The schema of one served field, from its packaged schema (when it has one) and its sampled values. */
export function inferField(name: string, values: readonly unknown[], packaged: JsonSchema | undefined, options: InferOptions): JsonSchema {
  const seen = values.filter((v) => !isBlank(v));
  if (packaged && (seen.length === 0 || fits(name, packaged, seen, options.fromCsv, options.dates))) return packaged;
  const nullable = !options.key;
  if (seen.length === 0) return schemaOf(looksLikeDateName(name) ? 'date' : 'string', nullable);
  const kind = options.fromCsv ? kindOfText(seen as string[], options.dates) : kindOfJson(seen, options.dates);
  // Epoch seconds or milliseconds under a date-like name.
  const epochs = (kind === 'integer' || kind === 'number') && looksLikeDateName(name) && seen.every((v) => isEpochNumber(Number(v)));
  const schema = schemaOf(epochs ? 'date' : kind, nullable);
  return packaged?.description === undefined ? schema : { ...schema, description: packaged.description };
}
