import { TimeZone } from '../src/time-zone.js';
import { toSnakeCase } from '../src/catalog/field-names.js';
import { REPORTS } from '../src/catalog/reports.js';
import { formatInstant } from './time.js';
import { UTC_FILTERS, type FilterDialect } from './filters.js';

/**
 * How the sandbox lays out the same records: field names, date notation,
 * boolean words and the CSV delimiter. The real service's layout is not
 * published; these let every test run against a layout the tap's packaged
 * schemas do not use. Filters and admin endpoints are the same in every
 * layout, but for the dates filters take: a layout that writes Unix time
 * takes it too, one that writes local times reads a date alone as a day of
 * its zone.
 */

export type LayoutName = 'packaged' | 'snake' | 'title' | 'epoch';
export const LAYOUTS: readonly LayoutName[] = ['packaged', 'snake', 'title', 'epoch'];

export interface Layout {
  readonly name: LayoutName;
  /** The served name of a packaged field of `stream`. */
  fieldName(field: string, stream?: string): string;
  /** A date (epoch seconds) of `stream` as written: a text, or a JSON number. */
  date(seconds: number, stream?: string): string | number;
  /** A boolean as written: a JSON boolean, or a word. */
  boolean(value: boolean): boolean | string;
  readonly csvDelimiter: string;
  /** How its date filters are read: Unix time too (epoch), a date alone as a day of its zone (snake). */
  readonly filters: FilterDialect;
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
 * The epoch layout's names, per stream: key and replication fields that no
 * normalisation maps to the documented ones (a tenant must name them in the
 * key_properties and replication_key settings), and `done` for `completed`.
 */
const EPOCH_NAMES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  training: { userId: 'learner', programId: 'course', moduleId: 'lesson', completedAt: 'finished', completed: 'done' },
  phishing: { userId: 'recipient', campaignId: 'campaignRef', sentAt: 'delivered' },
};

function epochName(field: string, stream = ''): string {
  const names = EPOCH_NAMES[stream];
  return names !== undefined && Object.hasOwn(names, field) ? names[field] : field;
}

/** Training dates in epoch milliseconds as JSON numbers, phishing dates in epoch seconds as digit strings. */
function epochDate(seconds: number, stream = ''): string | number {
  return stream === 'phishing' ? String(seconds) : seconds * 1000;
}

/**
 * The tap settings that read a layout: the epoch layout's key and replication
 * fields must be named (no normalisation maps them to the documented ones),
 * the snake layout's zone-less dates need their zone. What a tenant with such
 * a layout would set; the demo and the bench use it.
 */
export function tapSettingsFor(name: LayoutName, timeZone = 'UTC'): Record<string, unknown> {
  switch (name) {
    case 'epoch':
      return {
        key_properties: Object.fromEntries(REPORTS.map((r) => [r.name, r.keyProperties.map((field) => epochName(field, r.name))])),
        replication_key: Object.fromEntries(REPORTS.map((r) => [r.name, epochName(r.replicationKey, r.name)])),
      };
    case 'snake':
      return { source_timezone: timeZone };
    default:
      return {};
  }
}

/**
 * - packaged: camelCase names, RFC 3339 dates (with `dateOffset`), true/false, commas;
 * - snake: snake_case names, dates without a zone in `timeZone` (`2025-01-10 10:00:00`), true/false, commas; a date alone in a filter is a day of `timeZone`;
 * - title: Title Case names (`User ID`, `E-mail`, `Completed At`), RFC 3339 dates, yes/no (strings in JSONL), semicolons;
 * - epoch: key and replication fields under names of their own (training `learner`, `course`, `lesson`, `finished`, `done`; phishing `recipient`, `campaignRef`, `delivered`), dates as Unix time (training milliseconds as numbers, phishing seconds as digit strings), Y/N (strings in JSONL), pipes; its date filters also take Unix time.
 */
export function layoutFor(name: LayoutName, options: { offsetMinutes: number; timeZone: string }): Layout {
  const rfc3339 = (seconds: number): string => formatInstant(seconds, options.offsetMinutes);
  switch (name) {
    case 'packaged':
      return { name, fieldName: (f) => f, date: rfc3339, boolean: (b) => b, csvDelimiter: ',', filters: UTC_FILTERS };
    case 'snake': {
      const zone = new TimeZone(options.timeZone);
      return { name, fieldName: toSnakeCase, date: zoneless(zone), boolean: (b) => b, csvDelimiter: ',', filters: { unixTime: false, days: zone } };
    }
    case 'title':
      return { name, fieldName: titleCase, date: rfc3339, boolean: (b) => (b ? 'yes' : 'no'), csvDelimiter: ';', filters: UTC_FILTERS };
    case 'epoch':
      return { name, fieldName: epochName, date: epochDate, boolean: (b) => (b ? 'Y' : 'N'), csvDelimiter: '|', filters: { ...UTC_FILTERS, unixTime: true } };
  }
}
