import { HttpStatusError } from '../../http/responses.js';
import { ownValue } from '../../catalog/field-keys.js';
import { readsWholeDump } from '../plan/plan.js';
import type { ReadPlan } from '../plan/read-plans.js';
import type { Config } from '../../config/config.js';
import type { SelectedStream } from '../../catalog/selection.js';
import type { Logger } from '../../observe/log.js';

/**
 * A read the service answered 400 (it refused the request's filters). The
 * open rows' read asks with a filter of the tap's own (`filter[completed]=false`)
 * that a service may not have: the run goes on without it (the main read's
 * records and STATE stand; a full pass then sends no ACTIVATE_VERSION) and says
 * which setting stops asking. Any other refused read fails the run, naming
 * the filters it sent and the settings of the user's that made them, never
 * one the user did not set. Anything else is rethrown as it is.
 */
export function refusedRead(error: unknown, plan: ReadPlan, selected: SelectedStream, config: Config, logger: Logger): undefined {
  if (!(error instanceof HttpStatusError) || error.status !== 400) throw error;
  const name = selected.descriptor.name;
  // The main read went first with the same configured filters and was taken: the open rows' own filter is what the service refused.
  if (plan.kind === 'open_rows') {
    // The server's words are left out: they may quote a configured filter value (an e-mail address).
    // Only a setting the user set is named: start_date changes what turning the read off means.
    const tradeOff = config.start_date === undefined ? '' : ': with start_date, a full pass then holds only completed rows, and a row reopened after it was loaded leaves the target until it completes again';
    logger.warn(
      `${name}: the service refused the read of the open rows with HTTP 400; this run goes on without it, so rows still open are not refreshed, and full passes delete nothing while this lasts. If the service has no such filter, set refresh_open_rows to false to stop asking${tradeOff}.`,
    );
    return undefined;
  }
  throw new HttpStatusError(`${error.message} ${filterOrigins(plan, selected, config)}`, error.status, error.detail);
}

/** Where the request's filters came from, as advice naming only settings the user set. */
function filterOrigins(plan: ReadPlan, selected: SelectedStream, config: Config): string {
  const { name, replicationFilter } = selected.descriptor;
  const filters = config.filters[name];
  const sent = new Set(plan.query.map(([parameter]) => parameter));
  const settings = Object.keys(filters ?? {}).filter((filter) => sent.has(`filter[${filter}]`) && ownValue(filters, filter) !== undefined).map((filter) => `filters.${name}.${filter}`);
  const dated = sent.has(`filter[${replicationFilter}]`) && ownValue(filters, replicationFilter) === undefined;
  const fromStart = dated && config.start_date !== undefined && (readsWholeDump(plan.kind) || plan.previousValue === undefined);
  if (fromStart) settings.push('start_date');
  if (dated && config.filter_date_format !== 'rfc3339') settings.push('filter_date_format');
  const own = dated && !fromStart ? ` filter[${replicationFilter}] is the tap's own, from the bookmark in the state${plan.kind === 'event_window' ? ' and the event window' : ''}.` : '';
  if (settings.length === 0) return own.trim() || 'The request carried only the filters of the tap\'s own reads; please report this with the server\'s words.';
  return `Check ${settings.join(', ')}.${own}`;
}
