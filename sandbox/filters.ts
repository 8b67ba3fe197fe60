import type { FilterField, StreamDescriptor } from '../src/catalog/reports.js';
import { TimeZone } from '../src/time-zone.js';
import type { RawRecord } from './model.js';
import { SECONDS_PER_DAY } from './time.js';

/** A request parameter the sandbox refuses; becomes a 400 answer naming `parameter`. */
export class FilterError extends Error {
  constructor(
    readonly code: 'invalid_filter' | 'unknown_filter' | 'unknown_parameter' | 'duplicate_parameter' | 'invalid_query',
    readonly parameter: string,
    message: string,
  ) {
    super(`${parameter}: ${message}`);
    this.name = 'FilterError';
  }
}

/** One condition on one record field. */
export interface FilterPredicate {
  readonly field: string;
  readonly test: (record: RawRecord) => boolean;
}

export type DateOperator = '>=' | '>' | '<=' | '<' | '=';
const OPERATORS: readonly string[] = ['>=', '>', '<=', '<'];

/** How a layout's service reads the dates of its filters, besides RFC 3339 date-times. */
export interface FilterDialect {
  /** Date filters also take Unix time (a service that writes its dates so takes them so too). */
  readonly unixTime: boolean;
  /** The zone whose calendar a date alone names: where a service that writes local times has its days. */
  readonly days: TimeZone;
}

export const UTC_FILTERS: FilterDialect = { unixTime: false, days: new TimeZone('UTC') };

/**
 * A filter instant. Records have whole seconds; a filter may carry a fraction,
 * kept only as "strictly after `seconds`" so comparisons stay exact.
 */
interface FilterInstant {
  readonly seconds: number;
  readonly hasFraction: boolean;
  /** A date alone: where its day ends (its start is `seconds`), for equality. */
  readonly dayEnd?: number;
}

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$/;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function utcSeconds(y: number, mo: number, d: number, h = 0, mi = 0, s = 0): number | null {
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || s > 59) return null;
  return Date.UTC(y, mo - 1, d, h, mi, s) / 1000;
}

const UNIX_TIME = /^\d{1,16}$/;

/** Unix time as a filter instant: seconds, or milliseconds from 10^11 on (as the tap reads epochs). */
function unixInstant(text: string): FilterInstant {
  const n = Number(text);
  if (n < 1e11) return { seconds: n, hasFraction: false };
  return { seconds: Math.floor(n / 1000), hasFraction: n % 1000 !== 0 };
}

/** The instant (seconds) a wall-clock time (seconds, as if UTC) of `zone` names. */
function zoneSeconds(zone: TimeZone, wallSeconds: number): number {
  return zone.isUtc ? wallSeconds : zone.fromWallClock(wallSeconds * 1000) / 1000;
}

/** Parses a date (`YYYY-MM-DD`, a day on the dialect's calendar) or an RFC 3339 date-time, and Unix time where the layout takes it; null when malformed. */
export function parseFilterInstant(text: string, dialect: FilterDialect = UTC_FILTERS): FilterInstant | null {
  if (dialect.unixTime && UNIX_TIME.test(text)) return unixInstant(text);
  let m = DATE_ONLY.exec(text);
  if (m) {
    const midnight = utcSeconds(Number(m[1]), Number(m[2]), Number(m[3]));
    if (midnight === null) return null;
    return { seconds: zoneSeconds(dialect.days, midnight), hasFraction: false, dayEnd: zoneSeconds(dialect.days, midnight + SECONDS_PER_DAY) };
  }
  m = DATE_TIME.exec(text);
  if (!m) return null;
  const local = utcSeconds(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  if (local === null) return null;
  let offsetSeconds = 0;
  const zone = m[8];
  if (zone !== 'Z' && zone !== 'z') {
    const oh = Number(zone.slice(1, 3));
    const om = Number(zone.slice(4, 6));
    if (oh > 23 || om > 59) return null;
    offsetSeconds = (zone[0] === '-' ? -1 : 1) * (oh * 3600 + om * 60);
  }
  return { seconds: local - offsetSeconds, hasFraction: /[1-9]/.test(m[7] ?? '') };
}

/** Sign of (record instant - filter instant). */
function compare(recordSeconds: number, value: FilterInstant): number {
  if (recordSeconds !== value.seconds) return recordSeconds - value.seconds;
  return value.hasFraction ? -1 : 0;
}

function dateTest(operator: DateOperator, value: FilterInstant): (seconds: number) => boolean {
  switch (operator) {
    case '>=':
      return (s) => compare(s, value) >= 0;
    case '>':
      return (s) => compare(s, value) > 0;
    case '<=':
      return (s) => compare(s, value) <= 0;
    case '<':
      return (s) => compare(s, value) < 0;
    case '=':
      if (value.dayEnd !== undefined) {
        const end = value.dayEnd;
        return (s) => s >= value.seconds && s < end;
      }
      return (s) => compare(s, value) === 0;
  }
}

function compileOne(filter: FilterField, parameter: string, raw: string, dialect: FilterDialect): FilterPredicate {
  const field = filter.recordField;
  if (raw === '') throw new FilterError('invalid_filter', parameter, 'empty value');
  switch (filter.type) {
    case 'string':
      return { field, test: (r) => r[field] === raw };
    case 'boolean': {
      if (raw !== 'true' && raw !== 'false') {
        throw new FilterError('invalid_filter', parameter, `expected true or false, got ${JSON.stringify(raw)}`);
      }
      const wanted = raw === 'true';
      return { field, test: (r) => r[field] === wanted };
    }
    case 'date': {
      const opText = /^[<>=!~]*/.exec(raw)?.[0] ?? '';
      if (opText !== '' && !OPERATORS.includes(opText)) {
        throw new FilterError(
          'invalid_filter',
          parameter,
          `unsupported operator ${JSON.stringify(opText)}; use >=, >, <=, < or none for equality`,
        );
      }
      const value = parseFilterInstant(raw.slice(opText.length), dialect);
      if (!value) {
        const unix = dialect.unixTime ? ', or Unix time in seconds or milliseconds' : '';
        throw new FilterError(
          'invalid_filter',
          parameter,
          `malformed date ${JSON.stringify(raw.slice(opText.length))}; expected YYYY-MM-DD or an RFC 3339 date-time such as 2024-05-01T00:00:00Z${unix}`,
        );
      }
      const test = dateTest((opText || '=') as DateOperator, value);
      return {
        field,
        test: (r) => {
          const v = r[field];
          return typeof v === 'number' && test(v);
        },
      };
    }
  }
}

/** Compiles filter name -> value (names without `filter[...]`) into predicates, combined by AND; dates read in the layout's dialect. */
export function compileFilters(descriptor: StreamDescriptor, filters: ReadonlyMap<string, string>, dialect: FilterDialect = UTC_FILTERS): FilterPredicate[] {
  const predicates: FilterPredicate[] = [];
  for (const [name, value] of filters) {
    const parameter = `filter[${name}]`;
    const filter = descriptor.filters.find((f) => f.name === name);
    if (!filter) {
      const known = descriptor.filters.map((f) => f.name).join(', ');
      throw new FilterError('unknown_filter', parameter, `unknown filter for the ${descriptor.name} report; known filters: ${known}`);
    }
    predicates.push(compileOne(filter, parameter, value, dialect));
  }
  return predicates;
}

function decode(text: string, what: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new FilterError('invalid_query', what, 'malformed percent-encoding');
  }
}

const FILTER_PARAM = /^filter\[([^\][]*)\]$/;

/**
 * Parses a raw query string (without `?`) into filter name -> value.
 * Percent-decoding only: `+` stays a plus sign, so `+02:00` offsets survive
 * whether or not the client encoded them.
 */
export function parseFilterQuery(query: string): Map<string, string> {
  const filters = new Map<string, string>();
  if (query === '') return filters;
  for (const part of query.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const rawName = eq < 0 ? part : part.slice(0, eq);
    const name = decode(rawName, rawName);
    const value = eq < 0 ? '' : decode(part.slice(eq + 1), name);
    const m = FILTER_PARAM.exec(name);
    if (!m) {
      throw new FilterError('unknown_parameter', name, 'unknown query parameter; only filter[<name>] parameters are accepted');
    }
    if (filters.has(m[1])) throw new FilterError('duplicate_parameter', name, 'given more than once');
    filters.set(m[1], value);
  }
  return filters;
}

/** Accepts keys written as `name` or `filter[name]` (the in-process API's convenience). */
export function normaliseFilterKeys(filters: Readonly<Record<string, string>>): Map<string, string> {
  const result = new Map<string, string>();
  for (const [key, value] of Object.entries(filters)) {
    const m = FILTER_PARAM.exec(key);
    result.set(m ? m[1] : key, value);
  }
  return result;
}
