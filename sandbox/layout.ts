import { TimeZone } from '../src/time-zone.js';
import { toSnakeCase } from '../src/catalog/field-names.js';
import { formatInstant } from './time.js';

/**
 * How the sandbox lays out the same records: field names, date notation,
 * boolean words and the CSV delimiter. The real service's layout is not
 * published; these let every test run against a layout the tap's packaged
 * schemas do not use. Filters and admin endpoints are the same in every layout.
 */

export type LayoutName = 'packaged' | 'snake' | 'title';
export const LAYOUTS: readonly LayoutName[] = ['packaged', 'snake', 'title'];

export interface Layout {
  readonly name: LayoutName;
  /** The served name of a packaged field. */
  fieldName(field: string): string;
  /** A date (epoch seconds) as written. */
  date(seconds: number): string;
  /** A boolean as written: a JSON boolean, or a word. */
  boolean(value: boolean): boolean | string;
  readonly csvDelimiter: string;
}

/** `userId` → `User ID`, `email` → `E-mail`, `completedAt` → `Completed At`. */
export function titleCase(field: string): string {
  if (field === 'email') return 'E-mail';
  return field
    .replace(/([a-z\d])([A-Z])/g, '$1 $2')
    .split(' ')
    .map((word) => (word.toLowerCase() === 'id' ? 'ID' : word.charAt(0).toUpperCase() + word.slice(1)))
    .join(' ');
}

/** `YYYY-MM-DD HH:MM:SS` on the zone's wall clock, without saying which zone. */
function zoneless(zone: TimeZone): (seconds: number) => string {
  return (seconds) => formatInstant(Math.floor(zone.toWallClock(seconds * 1000) / 1000), 0).replace('T', ' ').replace(/Z$/, '');
}

/**
 * - packaged: camelCase names, RFC 3339 dates (with `dateOffset`), true/false, commas;
 * - snake: snake_case names, dates without a zone in `timeZone` (`2025-01-10 10:00:00`), true/false, commas;
 * - title: Title Case names (`User ID`, `E-mail`, `Completed At`), RFC 3339 dates, yes/no (strings in JSONL), semicolons.
 */
export function layoutFor(name: LayoutName, options: { offsetMinutes: number; timeZone: string }): Layout {
  const rfc3339 = (seconds: number): string => formatInstant(seconds, options.offsetMinutes);
  switch (name) {
    case 'packaged':
      return { name, fieldName: (f) => f, date: rfc3339, boolean: (b) => b, csvDelimiter: ',' };
    case 'snake':
      return { name, fieldName: toSnakeCase, date: zoneless(new TimeZone(options.timeZone)), boolean: (b) => b, csvDelimiter: ',' };
    case 'title':
      return { name, fieldName: titleCase, date: rfc3339, boolean: (b) => (b ? 'yes' : 'no'), csvDelimiter: ';' };
  }
}
