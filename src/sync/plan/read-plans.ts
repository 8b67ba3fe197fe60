import { formatInstant, instantMs } from '../../dates.js';
import { configError } from '../../errors.js';
import { ownValue } from '../../catalog/field-keys.js';
import { planStream, type PlanSettings, type ReadKind, type StreamPlan } from './plan.js';
import { passMayRun } from './pass-window.js';
import { dueOfRun, gridOf, intervalMs, isDue, nextDue, type Schedule } from './pass-schedule.js';
import type { SelectedStream } from '../../catalog/selection.js';
import type { FullPassRecord, PassRecord, StreamBookmark } from '../../state.js';

/**
 * What one stream's run reads, decided in one place from the state, the
 * settings, the change store and the clock, as a list of named read plans
 * the stream's sync performs one after the other (the loop knows no kind of
 * read):
 *
 * - a full pass (the first run, every FULL_TABLE run, an incremental stream
 *   whose last full pass is older than full_pass_interval_days, and one whose
 *   change store cannot be trusted): the whole dump (from start_date on),
 *   plus the open rows when a date filter leaves them out; with versions on
 *   it carries a new table version, and ACTIVATE_VERSION goes out once all of
 *   it is known good;
 * - a change pass (an incremental stream with a trusted change store, every
 *   change_pass_interval_days): the same reads, emitting only what changed,
 *   then a delete record for each row that is gone;
 * - otherwise the incremental read (an event window when the stream's window
 *   reaches back before the bookmark), plus the open rows.
 * Passes fall due on a fixed grid, a run up to an hour before a grid point
 * making its pass (pass-schedule.ts). A pass that falls due outside
 * pass_window waits for a run inside it (at most a day, pass-window.ts); the
 * fallback for a store it cannot trust does not.
 */

/** The settings a run plan reads. */
export interface RunSettings extends PlanSettings {
  refresh_open_rows: boolean;
  event_window_days: Readonly<Record<string, number | undefined>>;
  full_pass_interval_days: number;
  emit_activate_version_messages: boolean;
  change_pass_interval_days: number;
  pass_window?: string;
}

/**
 * What the tap knows of what the target holds for this stream (its change
 * store): a generation the incoming state names and the tap could read
 * (`trusted`), none it can trust (`untrusted`, with the reason in one
 * sentence), or no store at all (undefined: send_changes_only is off, or the
 * store cannot be written), which is the behaviour before the store.
 */
export type StoreView = { readonly trusted: true } | { readonly trusted: false; readonly why: string } | undefined;

/** A read of the run: its plan, whose kind names it in logs and summaries. */
export type ReadPlan = StreamPlan;

/**
 * Why a run is a full pass; `future date`: the last pass's date lies ahead of
 * the clock (written by a host whose clock was wrong); `store`: the change
 * store cannot be trusted (the plan's `storeDistrust` says why).
 */
export type FullPassReason = 'first run' | 'FULL_TABLE' | 'interval' | 'future date' | 'store';

export interface FullPassPlan {
  readonly reason: FullPassReason;
  /** The version the pass activates: set when ACTIVATE_VERSION may go out (versions on, and a protocol that has the message). */
  readonly version?: number;
  /** Rows the last full pass held: a pass with far fewer does not activate. */
  readonly previousRows?: number;
  /**
   * Set when the state shows the table was loaded before but holds no row
   * count to judge this pass by (an upgrade, a state rebuilt by hand): the
   * pass does not activate, and its count becomes the baseline.
   */
  readonly baselineMissing?: boolean;
  /** The last pass's date, when it lies in the future (reason `future date`). */
  readonly futureDate?: string;
}

/**
 * How the run uses the change store: `changes`, it emits only the rows whose
 * content differs from the confirmed generation's; `all`, it emits every row
 * it reads (a full pass, or no generation to trust) and notes them; absent,
 * there is no store.
 */
export type StoreUse = 'changes' | 'all';

export interface RunPlan {
  readonly reads: readonly ReadPlan[];
  /** Set when the run is a full pass. */
  readonly fullPass?: FullPassPlan;
  /** Set when the run is a change pass: what is gone is deleted once every read is known good. */
  readonly changePass?: boolean;
  /** The last change pass's date, when it lies after the run's start beyond max_future_skew (the change pass is then due now). */
  readonly changePassFutureDate?: string;
  /** The grid point (ms) the run's pass, full or change, records as its `due`: the point the next pass of its kind counts from. */
  readonly passDue?: number;
  readonly store?: StoreUse;
  /** Why the change store cannot be trusted, when that makes the run a full pass. */
  readonly storeDistrust?: string;
  /** The version every RECORD of the run carries (the pass's, or the table's current one); absent when versions are off. */
  readonly version?: number;
  readonly bookmarkProperties: readonly string[];
  readonly futureBoundMs: number;
  /**
   * Set when the main read holds the open rows too (no date filter leaves
   * them out) and the stream reads them on its own on other runs: the
   * fingerprint their read's Last-Modified is stored under, so the next
   * run's read of them is conditional too.
   */
  readonly openRowsFingerprint?: string;
}

/** The full pass's schedule: its own grid. */
function fullSchedule(settings: RunSettings, previous: StreamBookmark | undefined): Schedule {
  return { grid: gridOf(previous?.full_pass), intervalMs: intervalMs(settings.full_pass_interval_days) };
}

/** The change pass's schedule: its own grid (else the last full pass's), a full pass counting as a change pass. */
function changeSchedule(settings: RunSettings, previous: StreamBookmark | undefined): Schedule {
  const fullAt = instantMs(previous?.full_pass?.at ?? '');
  return {
    grid: gridOf(previous?.change_pass) ?? gridOf(previous?.full_pass),
    intervalMs: intervalMs(settings.change_pass_interval_days),
    ...(Number.isNaN(fullAt) ? {} : { coveredAt: fullAt }),
  };
}

/** Whether a scheduled pass runs now: due by its grid, and pass_window lets it. */
function scheduledPassRuns(schedule: Schedule, settings: RunSettings, now: number): boolean {
  const due = nextDue(schedule);
  return isDue(schedule, now) && (due === undefined || passMayRun(settings.pass_window, settings.source_timezone ?? 'UTC', now, due));
}

/**
 * The run's full pass, if it is one. A last pass dated after the run's start
 * (beyond max_future_skew) was written by a host whose clock ran ahead: trusted,
 * it would switch passes off until that date, so the pass is due now. A pass
 * due by the interval waits for pass_window.
 */
function fullPassReason(selected: SelectedStream, settings: RunSettings, previous: StreamBookmark | undefined, now: number, store: StoreView): FullPassReason | undefined {
  if (selected.replicationMethod === 'FULL_TABLE') return 'FULL_TABLE';
  if (previous === undefined) return 'first run';
  if (store?.trusted === false) return 'store';
  if (settings.full_pass_interval_days <= 0) return undefined;
  const schedule = fullSchedule(settings, previous);
  if (schedule.grid === undefined) return 'interval';
  if (datedAhead(previous.full_pass, settings, now) !== undefined) return 'future date';
  return scheduledPassRuns(schedule, settings, now) ? 'interval' : undefined;
}

/**
 * Whether the run is a change pass: a trusted store, and the change pass's
 * schedule due (and pass_window allows). A last change pass dated after the
 * run's start (beyond max_future_skew: a host whose clock ran ahead) would
 * switch change passes off, and leavers would wait for the full pass: the
 * change pass is due now, as a full pass is (fullPassReason).
 */
function changePassDue(settings: RunSettings, previous: StreamBookmark | undefined, now: number, store: StoreView): boolean {
  if (store?.trusted !== true || settings.change_pass_interval_days <= 0) return false;
  if (datedAhead(previous?.change_pass, settings, now) !== undefined) return true;
  return scheduledPassRuns(changeSchedule(settings, previous), settings, now);
}

/** A recorded pass's date, when it lies after `now` beyond max_future_skew (a host clock that ran ahead). */
function datedAhead(pass: PassRecord | undefined, settings: RunSettings, now: number): string | undefined {
  const at = instantMs(pass?.at ?? '');
  return at > now + settings.max_future_skew * 1000 ? formatInstant(at) : undefined;
}

/** The grid point the run's pass records, when it is one. */
function passDueOf(reason: FullPassReason | undefined, change: boolean, settings: RunSettings, previous: StreamBookmark | undefined, now: number): number | undefined {
  if (reason !== undefined) return dueOfRun(fullSchedule(settings, previous), now);
  return change ? dueOfRun(changeSchedule(settings, previous), now) : undefined;
}

/** Whether the state shows the stream was loaded before: its bookmark holds anything at all. */
function loadedBefore(previous: StreamBookmark | undefined): boolean {
  return previous !== undefined && Object.values(previous).some((value) => value !== undefined && value !== null);
}

/** The stream's event window in days: the setting, else the report's own default. */
function windowDaysOf(selected: SelectedStream, settings: Pick<RunSettings, 'event_window_days'>): number {
  return ownValue(settings.event_window_days, selected.descriptor.name) ?? selected.descriptor.eventWindowDays ?? 0;
}

/**
 * Whether the stream reads its open rows on their own when its main read has
 * a date filter: the report has them, the setting asks, and the configured
 * filters say nothing of them: neither the open filter itself nor the
 * replication key (a configured completion-date filter selects completed
 * rows, which open rows are not).
 */
function refreshesOpenRows(selected: SelectedStream, settings: RunSettings): boolean {
  const { openRows, replicationFilter, name } = selected.descriptor;
  if (openRows === undefined || !settings.refresh_open_rows || selected.replicationMethod !== 'INCREMENTAL') return false;
  const filters = settings.filters[name];
  return ownValue(filters, openRows.filter) === undefined && ownValue(filters, replicationFilter) === undefined;
}

/**
 * The version a new full pass activates: its start in epoch milliseconds, as
 * the Meltano SDK's taps do, and always after the last one. A last version
 * with no safe integer after it is refused before anything is emitted: the
 * state this run would write could not be read back.
 */
function nextVersion(stream: string, previous: FullPassRecord | undefined, now: number): number {
  const last = previous?.version ?? 0;
  if (!Number.isSafeInteger(last + 1)) {
    throw configError(
      `State: bookmarks.${stream}.full_pass.version ${last} leaves no room for a later table version (versions are a pass's start in epoch milliseconds, ${now} now). Fix or remove bookmarks.${stream}.full_pass; the next run then makes a full pass with a version from the clock.`,
    );
  }
  return Math.max(now, last + 1);
}

/** The full pass of the run, when it is one: why, its version, and what it is judged against. */
function fullPassPlan(reason: FullPassReason, version: number | undefined, previous: StreamBookmark | undefined): FullPassPlan {
  const last = previous?.full_pass;
  return {
    reason,
    ...(version === undefined ? {} : { version }),
    // A count of 0 judges nothing: an empty pass never activated, so no pass may be held against it.
    ...(last?.rows === undefined || last.rows === 0 ? {} : { previousRows: last.rows }),
    ...(version !== undefined && !(last?.rows !== undefined && last.rows > 0) && loadedBefore(previous) ? { baselineMissing: true } : {}),
    ...(reason === 'future date' && last !== undefined ? { futureDate: formatInstant(instantMs(last.at)) } : {}),
  };
}

/** The main read's kind: a full or change pass reads the whole dump; an event window that does not reach back before the bookmark is planned as the incremental read it is. */
function mainKind(reason: FullPassReason | undefined, change: boolean, windowDays: number): ReadKind {
  if (reason !== undefined) return 'full_pass';
  if (change) return 'change_pass';
  return windowDays > 0 ? 'event_window' : 'incremental';
}

/**
 * `versions`: the protocol has ACTIVATE_VERSION (Singer); `now`: the run's
 * start (ms), the clock every decision of the run reads; `store`: the
 * stream's change store (undefined: none).
 */
export function planRun(selected: SelectedStream, settings: RunSettings, previous: StreamBookmark | undefined, now: number, versions: boolean, store?: StoreView): RunPlan {
  // The store is for incremental streams: a FULL_TABLE run sends every row by definition.
  const view = selected.replicationMethod === 'INCREMENTAL' ? store : undefined;
  const reason = fullPassReason(selected, settings, previous, now, view);
  const change = reason === undefined && changePassDue(settings, previous, now, view);
  const changeAhead = change ? datedAhead(previous?.change_pass, settings, now) : undefined;
  const windowDays = windowDaysOf(selected, settings);
  const inPass = reason !== undefined || change;
  const main = planStream(selected, settings, previous, now, { kind: mainKind(reason, change, windowDays), windowDays });
  const openRows = refreshesOpenRows(selected, settings) ? planStream(selected, settings, previous, now, { kind: 'open_rows', inPass }) : undefined;
  // A main read without a date filter holds the open rows already.
  const reads = openRows !== undefined && main.lowerBoundMs !== undefined ? [main, openRows] : [main];
  const openRowsFingerprint = openRows !== undefined && main.lowerBoundMs === undefined ? openRows.requestFingerprint(null) : undefined;
  const versioned = versions && settings.emit_activate_version_messages;
  const last = previous?.full_pass;
  const passVersion = versioned && reason !== undefined ? nextVersion(selected.descriptor.name, last, now) : undefined;
  const fullPass = reason === undefined ? undefined : fullPassPlan(reason, passVersion, previous);
  const version = passVersion ?? (versioned ? last?.version : undefined);
  const passDue = passDueOf(reason, change, settings, previous, now);
  const storeUse: StoreUse | undefined = view === undefined ? undefined : view.trusted && reason === undefined ? 'changes' : 'all';
  return {
    reads,
    ...(fullPass ? { fullPass } : {}),
    ...(change ? { changePass: true } : {}),
    ...(changeAhead === undefined ? {} : { changePassFutureDate: changeAhead }),
    ...(passDue === undefined ? {} : { passDue }),
    ...(storeUse === undefined ? {} : { store: storeUse }),
    ...(view?.trusted === false && reason === 'store' ? { storeDistrust: view.why } : {}),
    ...(version === undefined ? {} : { version }),
    ...(openRowsFingerprint === undefined ? {} : { openRowsFingerprint }),
    bookmarkProperties: main.bookmarkProperties,
    futureBoundMs: main.futureBoundMs,
  };
}
