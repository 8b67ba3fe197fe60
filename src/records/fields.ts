import { instantMs, isEmittedForm, normalizeInstant } from '../dates.js';
import type { JsonSchema } from '../catalog/schemas.js';

/**
 * Makes every record fit the SCHEMA the consumer selected: only declared,
 * selected fields; dates in UTC with `Z`; values of the declared type (a
 * numeric string for a number field is converted, anything else is invalid).
 * Built once per stream, so the per-record work is a table look-up per field.
 */

export type FieldKind = 'string' | 'date' | 'integer' | 'number' | 'boolean' | 'any';

export interface FieldSpec {
  readonly name: string;
  readonly kind: FieldKind;
  readonly nullable: boolean;
  /** Bounds of a number or integer field, from the schema's minimum / maximum. */
  readonly minimum?: number;
  readonly maximum?: number;
}

export function inRange(spec: FieldSpec, n: number): boolean {
  return (spec.minimum === undefined || n >= spec.minimum) && (spec.maximum === undefined || n <= spec.maximum);
}

function checkRange(spec: FieldSpec, n: number): number {
  if (!inRange(spec, n)) throw new InvalidRecordError(`field ${spec.name} is ${n}, outside ${spec.minimum ?? '-∞'}..${spec.maximum ?? '∞'}`);
  return n;
}

export class InvalidRecordError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidRecordError';
  }
}

function kindOf(schema: JsonSchema): { kind: FieldKind; nullable: boolean } {
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const nullable = types.length === 0 || types.includes('null');
  const concrete = types.filter((t) => t !== 'null');
  if (concrete.length !== 1) return { kind: 'any', nullable };
  switch (concrete[0]) {
    case 'string':
      return { kind: schema.format === 'date-time' || schema.format === 'date' ? 'date' : 'string', nullable };
    case 'integer':
      return { kind: 'integer', nullable };
    case 'number':
      return { kind: 'number', nullable };
    case 'boolean':
      return { kind: 'boolean', nullable };
    default:
      return { kind: 'any', nullable };
  }
}

export function fieldSpecs(schema: JsonSchema): FieldSpec[] {
  return Object.entries(schema.properties ?? {}).map(([name, fieldSchema]) => ({
    name,
    ...kindOf(fieldSchema),
    ...(typeof fieldSchema.minimum === 'number' ? { minimum: fieldSchema.minimum } : {}),
    ...(typeof fieldSchema.maximum === 'number' ? { maximum: fieldSchema.maximum } : {}),
  }));
}

const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** Text of a CSV cell or a JSON string, as the declared kind. Throws InvalidRecordError. */
export function fromText(spec: FieldSpec, text: string): unknown {
  switch (spec.kind) {
    case 'string':
    case 'any':
      return text;
    case 'date': {
      const normalized = normalizeInstant(text);
      if (normalized === undefined) throw new InvalidRecordError(`field ${spec.name} is not an RFC 3339 date: ${JSON.stringify(text.slice(0, 40))}`);
      return normalized;
    }
    case 'integer': {
      const n = NUMERIC.test(text) ? Number(text) : Number.NaN;
      if (!Number.isSafeInteger(n)) throw new InvalidRecordError(`field ${spec.name} is not an integer: ${JSON.stringify(text.slice(0, 40))}`);
      return checkRange(spec, n);
    }
    case 'number': {
      const n = NUMERIC.test(text) ? Number(text) : Number.NaN;
      if (!Number.isFinite(n)) throw new InvalidRecordError(`field ${spec.name} is not a number: ${JSON.stringify(text.slice(0, 40))}`);
      return checkRange(spec, n);
    }
    case 'boolean': {
      const lower = text.length <= 5 ? text.toLowerCase() : '';
      if (lower === 'true' || lower === '1') return true;
      if (lower === 'false' || lower === '0') return false;
      throw new InvalidRecordError(`field ${spec.name} is not a boolean: ${JSON.stringify(text.slice(0, 40))}`);
    }
  }
}

export interface ConformOptions {
  /** Fields of the stream's full schema: a field outside it is "undeclared" and warned about once. */
  declaredFields: ReadonlySet<string>;
  keyProperties: readonly string[];
  replicationKey: string;
  onUndeclaredField: (field: string) => void;
}

export class RecordConformer {
  private readonly specs: Record<string, FieldSpec | undefined> = Object.create(null) as Record<string, FieldSpec | undefined>;
  private readonly warned = new Set<string>();
  /** Instant (ms) of the last conformed record's replication key, or NaN when null. */
  replicationMs = Number.NaN;
  /** The last conformed record's replication key as emitted (UTC `Z` form), or null. */
  replicationValue: string | null = null;

  constructor(
    readonly fields: readonly FieldSpec[],
    private readonly options: ConformOptions,
  ) {
    for (const spec of fields) this.specs[spec.name] = spec;
  }

  /** The spec of a selected field, or undefined. */
  spec(name: string): FieldSpec | undefined {
    return this.specs[name];
  }

  /** Notes a field the record has and the selection has not: warned about once if the stream's schema does not declare it. */
  unknownField(name: string): void {
    if (this.options.declaredFields.has(name) || this.warned.has(name)) return;
    this.warned.add(name);
    this.options.onUndeclaredField(name);
  }

  private fromJsonValue(spec: FieldSpec, value: unknown): unknown {
    if (value === null || value === undefined) {
      if (!spec.nullable) {
        throw new InvalidRecordError(this.options.keyProperties.includes(spec.name) ? `key property ${spec.name} is missing` : `field ${spec.name} is null`);
      }
      return null;
    }
    switch (spec.kind) {
      case 'any':
        return value;
      case 'string':
        if (typeof value === 'string') return value;
        if (typeof value === 'number' || typeof value === 'boolean') return String(value);
        break;
      case 'date':
        if (typeof value === 'string') {
          if (value === '' && spec.nullable) return null;
          return fromText(spec, value);
        }
        break;
      case 'integer':
        if (typeof value === 'number' && Number.isSafeInteger(value)) return checkRange(spec, value);
        if (typeof value === 'string') return fromText(spec, value);
        break;
      case 'number':
        // JSON.parse reads 1e400 as Infinity, which JSON cannot carry.
        if (typeof value === 'number' && Number.isFinite(value)) return checkRange(spec, value);
        if (typeof value === 'string') return fromText(spec, value);
        break;
      case 'boolean':
        if (typeof value === 'boolean') return value;
        if (typeof value === 'string') return fromText(spec, value);
        break;
    }
    throw new InvalidRecordError(`field ${spec.name} has a ${typeof value} where the schema wants ${spec.kind}`);
  }

  private finish(record: Record<string, unknown>): void {
    for (const key of this.options.keyProperties) {
      const value = record[key];
      if (value === null || value === undefined || value === '') throw new InvalidRecordError(`key property ${key} is missing`);
    }
    const replication = record[this.options.replicationKey];
    if (typeof replication === 'string') {
      this.replicationValue = replication;
      this.replicationMs = instantMs(replication);
    } else {
      this.replicationValue = null;
      this.replicationMs = Number.NaN;
    }
  }

  /** Whether the value already fits its field as it is (no conversion, no allocation). */
  private fits(spec: FieldSpec, value: unknown): boolean {
    if (value === null) return spec.nullable;
    switch (spec.kind) {
      case 'string':
        return typeof value === 'string';
      case 'date':
        return typeof value === 'string' && !Number.isNaN(instantMs(value)) && isEmittedForm(value);
      case 'integer':
        return Number.isSafeInteger(value) && inRange(spec, value as number);
      case 'number':
        return typeof value === 'number' && Number.isFinite(value) && inRange(spec, value);
      case 'boolean':
        return typeof value === 'boolean';
      case 'any':
        return true;
    }
  }

  /** True when the last `fromJson` record is the input object itself, unchanged, so its original text may be written. */
  unchanged = true;

  /**
   * A parsed JSON object as the record to emit. Most records already fit: they
   * are checked in place and returned as they are; only the others are rebuilt.
   */
  fromJson(input: unknown): Record<string, unknown> {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new InvalidRecordError('line is not a JSON object');
    const source = input as Record<string, unknown>;
    let fits = true;
    for (const key in source) {
      const spec = this.specs[key];
      if (spec === undefined || !this.fits(spec, source[key])) {
        fits = false;
        break;
      }
    }
    const record = fits ? source : this.rebuild(source);
    this.unchanged = fits;
    this.finish(record);
    return record;
  }

  private rebuild(source: Record<string, unknown>): Record<string, unknown> {
    const record: Record<string, unknown> = {};
    for (const key in source) {
      const spec = this.specs[key];
      if (spec === undefined) {
        this.unknownField(key);
        continue;
      }
      record[key] = this.fromJsonValue(spec, source[key]);
    }
    return record;
  }

  /** Builds the per-file conversion of CSV rows once the header is known. */
  csvColumns(header: readonly string[]): (row: readonly string[]) => Record<string, unknown> {
    const columns = header.map((name, index) => ({ index, spec: this.specs[name.trim()] }));
    for (const { spec, index } of columns) if (!spec) this.unknownField(header[index].trim());
    const used = columns.filter((c): c is { index: number; spec: FieldSpec } => c.spec !== undefined);
    return (row) => {
      if (row.length !== header.length) throw new InvalidRecordError(`row has ${row.length} columns, the header has ${header.length}`);
      const record: Record<string, unknown> = {};
      for (const { index, spec } of used) {
        const text = row[index];
        if (text === '') {
          if (!spec.nullable && spec.kind !== 'string') throw new InvalidRecordError(`field ${spec.name} is empty`);
          record[spec.name] = spec.nullable ? null : '';
        } else {
          record[spec.name] = fromText(spec, text);
        }
      }
      this.finish(record);
      return record;
    };
  }
}
