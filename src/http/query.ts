import { configError } from '../errors.js';
import { DAY_MS, formatInstant, parseInstant } from '../dates.js';
import { TimeZone } from '../time-zone.js';
import type { FilterDateFormat, FilterValues } from '../config/config.js';
import type { StreamDescriptor } from '../catalog/reports.js';

export type DateOperator = '>=' | '>' | '<=' | '<' | '=';

export interface DateFilter {
  operator: DateOperator;
  ms: number;
  text: string;
}

export function parseDateFilter(value: string): DateFilter | undefined {
  const match = /^(>=|<=|>|<)?(.*)$/.exec(value.trim());
  if (!match) return undefined;
  const parsed = parseInstant(match[2]);
  if (!parsed) return undefined;
  return { operator: (match[1] as DateOperator | undefined) ?? '=', ms: parsed.ms, text: match[2] };
}

export interface StreamQuery {
  /** filter[...] parameters in a stable order. */
  query: Array<[string, string]>;
  /** Records whose replication key is before this instant (or null) are not emitted. */
  clientLowerBoundMs?: number;
}

/**
 * The `YYYY-MM-DD` sent for a lower bound: the earlier of the bound's UTC day
 * and its day on `timeZone`'s wall clock (source_timezone). A service reads a
 * date alone as the start of a day on its own calendar: that of its zone when
 * it writes local times, UTC's when it writes instants. The tap cannot tell
 * which before it reads, and the earlier day starts at or before the bound on
 * both calendars, so the window only widens (by a day at most); the records
 * before the bound are dropped on this side.
 */
export function filterDay(ms: number, timeZone = 'UTC'): string {
  const zone = new TimeZone(timeZone);
  const day = zone.isUtc ? Math.floor(ms / DAY_MS) : Math.min(Math.floor(ms / DAY_MS), Math.floor(zone.toWallClock(ms) / DAY_MS));
  return formatInstant(day * DAY_MS).slice(0, 10);
}

/** A date as sent in filter[...]; `timeZone`: the zone whose day a `date` also falls on (see filterDay). */
export function dateFilterText(ms: number, format: FilterDateFormat, timeZone = 'UTC'): string {
  switch (format) {
    case 'rfc3339':
      return formatInstant(ms);
    case 'date':
      return filterDay(ms, timeZone);
    case 'epoch_seconds':
      return String(Math.floor(ms / 1000));
    case 'epoch_milliseconds':
      return String(ms);
  }
}

/** A configured date filter as sent: as written, or in Unix time for a service that takes it (`>=2025-01-01` becomes `>=1735689600`). */
function configuredDateText(text: string, format: FilterDateFormat): string {
  if (format !== 'epoch_seconds' && format !== 'epoch_milliseconds') return text;
  const parsed = parseDateFilter(text);
  return parsed === undefined ? text : `${parsed.operator === '=' ? '' : parsed.operator}${dateFilterText(parsed.ms, format)}`;
}

/**
 * Combines the configured filters with the incremental lower bound. Both may
 * name the replication key: a configured lower bound (>=, >) that is later than
 * the incremental one wins; any other configured operator is sent as is and
 * the incremental bound is then applied to the records here. `timeZone`: the
 * service's zone (source_timezone), for the day a `date` bound is sent as.
 */
export function buildQuery(descriptor: StreamDescriptor, filters: FilterValues | undefined, lowerBoundMs: number | undefined, dateFormat: FilterDateFormat = 'rfc3339', timeZone = 'UTC'): StreamQuery {
  const query: Array<[string, string]> = [];
  let replicationSent = false;
  for (const field of descriptor.filters) {
    const value = filters?.[field.name];
    if (value === undefined) continue;
    const written = typeof value === 'boolean' ? String(value) : value;
    const text = field.type === 'date' ? configuredDateText(written, dateFormat) : written;
    if (field.name === descriptor.replicationFilter && lowerBoundMs !== undefined) {
      const configured = parseDateFilter(written);
      if (!configured) throw configError(`Setting filters.${descriptor.name}.${field.name} ${JSON.stringify(written)} is not a date with an optional >=, >, <=, < prefix. Write it like >=2025-01-01 or <2025-06-01T00:00:00Z.`);
      if (configured.operator === '>=' || configured.operator === '>') {
        replicationSent = true;
        query.push([`filter[${field.name}]`, configured.ms >= lowerBoundMs ? text : `>=${dateFilterText(lowerBoundMs, dateFormat, timeZone)}`]);
        continue;
      }
    }
    query.push([`filter[${field.name}]`, text]);
    if (field.name === descriptor.replicationFilter) replicationSent = true;
  }
  if (lowerBoundMs !== undefined && !replicationSent) {
    query.push([`filter[${descriptor.replicationFilter}]`, `>=${dateFilterText(lowerBoundMs, dateFormat, timeZone)}`]);
  }
  return { query, clientLowerBoundMs: lowerBoundMs };
}

/**
 * `text` (a server's words about a request) with the values of the personal
 * filters `url` sent hidden, as written and URL-encoded: a server that quotes
 * a refused filter back (`unknown user alice@example.com`) must not put an
 * e-mail into the tap's error line.
 */
export function withoutPersonalValues(descriptor: Pick<StreamDescriptor, 'filters' | 'personalFields'>, url: URL, text: string): string {
  const personal = personalParameters(descriptor);
  const values = [...url.searchParams].filter(([name, value]) => personal.has(name) && value.length > 0).flatMap(([, value]) => [value, encodeURIComponent(value)]);
  // Longest first: a value inside another is hidden with it.
  return [...new Set(values)].sort((a, b) => b.length - a.length).reduce((hidden, value) => hidden.split(value).join(REDACTED_VALUE), text);
}

/** What a log line shows for a personal filter's value. */
export const REDACTED_VALUE = '***';

/**
 * A request's query as a log line shows it, unencoded for reading
 * (`filter[program]=prog-01&filter[email]=***`): the value of a filter on a
 * personal field (e-mail, user id, employee number; the report's
 * personalFields) is never shown, nor anything that would break the line.
 */
export function shownQuery(descriptor: Pick<StreamDescriptor, 'filters' | 'personalFields'>, query: ReadonlyArray<readonly [string, string]>): string {
  const personal = personalParameters(descriptor);
  return query.map(([name, value]) => `${name}=${personal.has(name) ? REDACTED_VALUE : value.replace(/[\u0000-\u001f\u007f&]/g, encodeURIComponent)}`).join('&');
}

/** The query parameters of the filters on personal fields (e-mail, user id, employee number: the report's personalFields). */
function personalParameters(descriptor: Pick<StreamDescriptor, 'filters' | 'personalFields'>): Set<string> {
  return new Set(descriptor.filters.filter((f) => descriptor.personalFields.includes(f.recordField)).map((f) => `filter[${f.name}]`));
}
