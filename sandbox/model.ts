import type { StreamDescriptor } from '../src/catalog/reports.js';

/** How a field is rendered: dates are kept as epoch seconds until rendering. */
export type FieldKind = 'string' | 'date' | 'boolean' | 'integer' | 'number';

export interface FieldSpec {
  readonly name: string;
  readonly kind: FieldKind;
}

export type RawValue = string | number | boolean | null;
/** A record before rendering: dates are epoch seconds. */
export type RawRecord = Record<string, RawValue>;

/** Name of the undeclared field added when `extraFields` is on. */
export const EXTRA_FIELD = 'department';

/**
 * The synthetic data of one stream. A record is a pure function of its index;
 * `identity` yields the cheap key- and user-derived part so that string filters
 * can reject a row before the rest is generated.
 */
export interface StreamModel {
  readonly descriptor: StreamDescriptor;
  /** Schema fields in schema order. */
  readonly fields: readonly FieldSpec[];
  /** Fields `identity` fills in; never changed by appends or updates. */
  readonly identityFields: ReadonlySet<string>;
  identity(index: number): RawRecord;
  /** Full record of an original row, given its (fresh) identity, which it may fill in and return. */
  complete(index: number, identity: RawRecord): RawRecord;
  /** Full record of an appended row: `position` within its batch, written at `instant`; `kind` says what the batch is (the model's default when absent). */
  appended(index: number, position: number, instant: number, kind?: string): RawRecord;
  /** Seconds past the batch instant used by the last of `count` appended rows. */
  appendSpan(count: number): number;
  /** Fields to change in `record` for the `position`-th updated row, or null when the row cannot be updated. */
  update(record: RawRecord, index: number, position: number, instant: number): Partial<RawRecord> | null;
  /** Seconds past the update instant used by any updated row. */
  readonly updateSpan: number;
}
