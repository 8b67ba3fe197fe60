import { buildQuery } from '../http/query.js';
import { ownValue } from '../catalog/field-keys.js';
import type { Config } from '../config/config.js';
import type { StreamDescriptor } from '../catalog/reports.js';

/** A date no record has (9999-12-31): the dump comes back empty, so checking costs no download. */
const FAR_FUTURE_MS = 253_402_214_400_000;

type CheckSettings = Pick<Config, 'filters' | 'filter_date_format' | 'source_timezone'>;

/**
 * What a stream's check asks: the filters the first sync's request sends
 * (filters.<stream> as the sync writes them, filter_date_format applied),
 * with the sync's lower bound on the replication key at a date no record
 * has, so the service answers an empty dump: built by the sync's own
 * buildQuery, which also puts that bound in place of a configured `>=` or
 * `>` filter on the key (a later date wins), as the sync does with its
 * bookmark. A configured `<` or `<=` filter goes as the sync sends it.
 */
export function checkQuery(descriptor: StreamDescriptor, config: CheckSettings): Array<[string, string]> {
  return buildQuery(descriptor, ownValue(config.filters, descriptor.name), FAR_FUTURE_MS, config.filter_date_format, config.source_timezone).query;
}

/**
 * Why the service refused a check's request (HTTP 400), after the sync's own
 * words for it, naming the settings behind the filters it sent: the one the
 * server's answer names when it names one of them (`detail`), else each.
 * Filter names only, never a value (an e-mail filter's is personal).
 */
export function refusedCheckAdvice(descriptor: StreamDescriptor, query: ReadonlyArray<readonly [string, string]>, config: CheckSettings, detail = ''): string {
  const { name, replicationFilter } = descriptor;
  const filters = ownValue(config.filters, name);
  const sent = query.map(([parameter]) => parameter.slice('filter['.length, -1));
  const named = sent.filter((filter) => detail.includes(`filter[${filter}]`));
  const suspects = named.length === 1 ? named : sent;
  const settings = suspects.filter((filter) => ownValue(filters, filter) !== undefined).map((filter) => `filters.${name}.${filter}`);
  const sync = 'the first sync sends the same and would be refused too';
  const bound = suspects.includes(replicationFilter) && ownValue(filters, replicationFilter) === undefined
    ? ` filter[${replicationFilter}] is the tap's own lower bound, which every sync sends (start_date's, then the bookmark's)${config.filter_date_format === 'rfc3339' ? '' : ` as filter_date_format ${config.filter_date_format} writes it`}; if the service takes dates in another form, set filter_date_format to it.`
    : '';
  if (named.length === 1 && settings.length === 1) return `The service refused filter[${named[0]}], set by ${settings[0]}: remove or fix it; ${sync}.`;
  if (settings.length > 0) return `Check ${settings.join(', ')}: ${sync}.${bound}`;
  return `${sync[0]!.toUpperCase()}${sync.slice(1)}.${bound}`;
}
