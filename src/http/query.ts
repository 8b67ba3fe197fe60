import { configError } from '../errors.js';
import { formatInstant, parseInstant } from '../dates.js';
import type { FilterValues } from '../config/config.js';
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
 * Combines the configured filters with the incremental lower bound. Both may
 * name the replication key: a configured lower bound (>=, >) that is later than
 * the incremental one wins; any other configured operator is sent as is and
 * the incremental bound is then applied to the records here.
 */
/** How a bound is written in a filter: RFC 3339 UTC, or the day (UTC) that contains it, which only widens the window. */
export type FilterDateFormat = 'rfc3339' | 'date';

function boundText(ms: number, format: FilterDateFormat): string {
  return format === 'date' ? formatInstant(ms).slice(0, 10) : formatInstant(ms);
}

export function buildQuery(descriptor: StreamDescriptor, filters: FilterValues | undefined, lowerBoundMs: number | undefined, dateFormat: FilterDateFormat = 'rfc3339'): StreamQuery {
  const query: Array<[string, string]> = [];
  let replicationSent = false;
  for (const field of descriptor.filters) {
    const value = filters?.[field.name];
    if (value === undefined) continue;
    const text = typeof value === 'boolean' ? String(value) : value;
    if (field.name === descriptor.replicationFilter && lowerBoundMs !== undefined) {
      const configured = parseDateFilter(text);
      if (!configured) throw configError(`Setting filters.${descriptor.name}.${field.name} ${JSON.stringify(text)} is not a date with an optional >=, >, <=, < prefix.`);
      if (configured.operator === '>=' || configured.operator === '>') {
        replicationSent = true;
        query.push([`filter[${field.name}]`, configured.ms >= lowerBoundMs ? text : `>=${boundText(lowerBoundMs, dateFormat)}`]);
        continue;
      }
    }
    query.push([`filter[${field.name}]`, text]);
    if (field.name === descriptor.replicationFilter) replicationSent = true;
  }
  if (lowerBoundMs !== undefined && !replicationSent) {
    query.push([`filter[${descriptor.replicationFilter}]`, `>=${boundText(lowerBoundMs, dateFormat)}`]);
  }
  return { query, clientLowerBoundMs: lowerBoundMs };
}
