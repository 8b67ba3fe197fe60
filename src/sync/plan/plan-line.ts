import { formatInstant, instantMs } from '../../dates.js';
import { shownQuery } from '../../http/query.js';
import { sanitizeServerText } from '../../observe/sanitize.js';
import type { StreamDescriptor } from '../../catalog/reports.js';
import type { StreamBookmark } from '../../state.js';
import { gridOf, intervalMs, nextDue } from './pass-schedule.js';
import type { ReadPlan, RunPlan } from './read-plans.js';

/** The settings the plan line names. */
export interface PlanLineSettings {
  readonly full_pass_interval_days: number;
  readonly change_pass_interval_days: number;
  readonly send_changes_only: boolean;
  readonly state_store_max_kb: number;
  readonly store_url?: string;
  readonly store_directory?: string;
}

/**
 * The one line that says, before a stream's records, what its run will do:
 * what kind of run and why (a full pass and its reason, a change pass
 * falling due, or incremental from the bookmark), each read with the filters
 * it sends (personal values hidden: http/query.ts) and whether it is
 * conditional, and how the change store is used. Pure: the plan and the
 * incoming bookmark in, a sentence out.
 */
export function planLine(descriptor: StreamDescriptor, run: RunPlan, previous: StreamBookmark | undefined, settings: PlanLineSettings): string {
  const parts = [kindOf(run, previous, settings), `reads: ${run.reads.map((read) => readOf(descriptor, read)).join('; ')}`, storeOf(run, settings)];
  return `${descriptor.name}: plan: ${parts.join('; ')}`;
}

function kindOf(run: RunPlan, previous: StreamBookmark | undefined, settings: PlanLineSettings): string {
  const { fullPass } = run;
  if (fullPass !== undefined) {
    // A pass of several reads makes one request more per earlier read (source-check.ts): said here, so the request lines hold no surprise.
    const recheck = run.reads.length > 1 ? ' (each read but the last asked again with If-Modified-Since: an unchanged answer proves the reads saw one source)' : '';
    const activation = fullPass.version === undefined ? 'without ACTIVATE_VERSION' : `version ${fullPass.version}, ACTIVATE_VERSION once the whole pass is read and checked${recheck}`;
    return `full pass (${fullPassWhy(fullPass.reason, previous, settings)}), ${activation}`;
  }
  const main = run.reads[0];
  const from = main.previousValue === undefined ? 'no bookmark yet' : `bookmark ${main.previousValue}`;
  if (run.changePass) return `change pass (${passAge(previous, ['full_pass', 'change_pass'], settings.change_pass_interval_days, 'change_pass_interval_days')}), from ${from}`;
  return `incremental from ${from}${nextFullPass(previous, settings)}`;
}

function fullPassWhy(reason: string, previous: StreamBookmark | undefined, settings: PlanLineSettings): string {
  switch (reason) {
    case 'first run':
      return 'first run: no state for the stream';
    case 'FULL_TABLE':
      return 'FULL_TABLE: every run reads the whole dump';
    case 'interval':
      return passAge(previous, ['full_pass'], settings.full_pass_interval_days, 'full_pass_interval_days');
    case 'future date':
      return 'the last full pass is dated after this run';
    default:
      return 'the change store cannot be trusted';
  }
}

/** `due: last full pass 2025-01-01T00:00:00Z, every 30 days (full_pass_interval_days)` */
function passAge(previous: StreamBookmark | undefined, kinds: ReadonlyArray<'full_pass' | 'change_pass'>, days: number, setting: string): string {
  const last = lastPass(previous, kinds);
  const what = kinds.length === 1 ? 'full pass' : 'pass';
  return `due: ${last === undefined ? `no ${what} recorded` : `last ${what} ${formatInstant(last)}`}, every ${days === 1 ? 'day' : `${days} days`} (${setting})`;
}

/** `, next full pass due from 2025-02-01T00:00:00Z` (its grid point, pass-schedule.ts) for an incremental run that counts days to its next pass. */
function nextFullPass(previous: StreamBookmark | undefined, settings: PlanLineSettings): string {
  if (settings.full_pass_interval_days <= 0) return '';
  const due = nextDue({ grid: gridOf(previous?.full_pass), intervalMs: intervalMs(settings.full_pass_interval_days) });
  return due === undefined ? '' : `, next full pass due from ${formatInstant(due)}`;
}

function lastPass(previous: StreamBookmark | undefined, kinds: ReadonlyArray<'full_pass' | 'change_pass'>): number | undefined {
  const times = kinds.map((kind) => instantMs(previous?.[kind]?.at ?? '')).filter((ms) => !Number.isNaN(ms));
  return times.length === 0 ? undefined : Math.max(...times);
}

/** `incremental with filter[…]=…, If-Modified-Since <date>` */
function readOf(descriptor: StreamDescriptor, read: ReadPlan): string {
  const query = shownQuery(descriptor, read.query);
  const filters = query === '' ? 'no filter' : query;
  const conditional = read.ifModifiedSince === undefined ? 'unconditional' : `If-Modified-Since ${sanitizeServerText(read.ifModifiedSince, 64)}`;
  return `${read.kind} with ${filters}, ${conditional}`;
}

function storeOf(run: RunPlan, settings: PlanLineSettings): string {
  switch (run.store) {
    case 'changes':
      return `change store: sends only the rows that changed, ${homesOf(settings)}`;
    case 'all':
      return `change store: sends every row and records it, ${homesOf(settings)}`;
    default:
      if (!settings.send_changes_only) return 'change store: off (send_changes_only false)';
      return run.fullPass?.reason === 'FULL_TABLE' ? 'change store: not used (a FULL_TABLE run sends every row)' : 'change store: not used (it could not be opened)';
  }
}

/** Where the store keeps the generation a run writes (store/homes.ts): the state when it fits, else the bucket or the folder. */
function homesOf(settings: PlanLineSettings): string {
  const beyond = settings.store_url ?? (settings.store_directory === undefined ? 'the store folder' : `store_directory ${settings.store_directory}`);
  return settings.state_store_max_kb > 0 ? `kept in the state up to ${settings.state_store_max_kb} KiB, beyond that in ${beyond}` : `kept in ${beyond}`;
}
