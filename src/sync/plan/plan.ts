import { createHash } from 'node:crypto';
import { DAY_MS, formatInstant, instantMs } from '../../dates.js';
import { configError } from '../../errors.js';
import { buildQuery } from '../../http/query.js';
import { bookmarkValue, type StreamBookmark } from '../../state.js';
import { Pseudonymiser } from '../../records/pseudonymise.js';
import type { FilterDateFormat, FilterValues } from '../../config/config.js';
import type { SelectedStream } from '../../catalog/selection.js';

/** The settings a plan reads. */
export interface PlanSettings {
  filters: Readonly<Record<string, FilterValues | undefined>>;
  start_date?: string;
  lookback_window: number;
  max_future_skew: number;
  filter_date_format?: FilterDateFormat;
  /** The service's zone: a `date` bound is sent as a day that has begun there too (see filterDay). */
  source_timezone?: string;
  pseudonymisation_key?: string;
}

/**
 * The kinds of read a run makes of a stream (read-plans.ts decides which):
 * - incremental: the records from the bookmark on;
 * - event_window: the same, from further back when the event window starts
 *   before the bookmark (rows whose events arrive after their replication key);
 * - open_rows: the rows still open, whatever their dates;
 * - full_pass: the whole dump (from start_date on, for an incremental stream);
 * - change_pass: the same whole dump, read for what changed and what is gone.
 */
export type ReadKind = 'incremental' | 'event_window' | 'open_rows' | 'full_pass' | 'change_pass';

/** Whether a read of this kind reads the whole dump (from start_date on): a full or a change pass. */
export function readsWholeDump(kind: ReadKind): boolean {
  return kind === 'full_pass' || kind === 'change_pass';
}

/** Which read to plan: its kind, and for an event window its length. */
export interface ReadShape {
  readonly kind: ReadKind;
  /** Days of the stream's event window (event_window_days); 0 or absent: none. */
  readonly windowDays?: number;
  /** The read is part of a full pass: it reads its whole answer whatever it got last time (the pass's reads are compared by their Last-Modified). */
  readonly inPass?: boolean;
}

/**
 * What one read of a stream will ask and accept, decided before any request
 * from the selection, the settings and the stream's bookmark. Pure: no I/O.
 */
export interface StreamPlan {
  readonly kind: ReadKind;
  /** The read observes the bookmark: its records move it (the main read of an incremental stream). */
  readonly incremental: boolean;
  /** The incoming bookmark (UTC `Z` form) and its instant. */
  readonly previousValue?: string;
  readonly previousMs?: number;
  /** filter[...] parameters in a stable order. */
  readonly query: Array<[string, string]>;
  /** Records whose replication key is before this instant (or null) are not emitted. */
  readonly lowerBoundMs?: number;
  /** Sent when the last run's Last-Modified answered a request that meant the same; never for a full pass. */
  readonly ifModifiedSince?: string;
  /** The bookmark's member holding this read's Last-Modified, when it is not the bookmark itself. */
  readonly lastModifiedIn?: 'open_rows';
  /** Content hashes of the records emitted at the bookmark's instant last time: those are not emitted again unchanged. */
  readonly boundary?: { readonly ms: number; readonly hashes: ReadonlySet<string> };
  /** Records later than this instant (the run's start plus max_future_skew) are emitted but do not move the bookmark. */
  readonly futureBoundMs: number;
  /** The bookmark_properties of the SCHEMA message. */
  readonly bookmarkProperties: readonly string[];
  /** Fingerprint of the request for a given bookmark, stored beside the Last-Modified it gets. */
  requestFingerprint(bookmark: string | null | undefined): string;
}

/** Short digest of what a request meant, stored beside the Last-Modified it got. */
export function fingerprint(parts: unknown): string {
  return createHash('sha1').update(JSON.stringify(parts)).digest('base64url').slice(0, 16);
}

function keyIdOf(key: string | undefined): string | null {
  return key === undefined ? null : new Pseudonymiser(key).keyId();
}

/** Where the read's records start: the bookmark (less the lookback), the event window's start if earlier, start_date on a first run or a full pass. */
function lowerBound(shape: ReadShape, incremental: boolean, previousMs: number | undefined, settings: PlanSettings, runStartedAt: number): number | undefined {
  if (!incremental) return undefined;
  const start = settings.start_date ? instantMs(settings.start_date) : undefined;
  if (readsWholeDump(shape.kind) || previousMs === undefined) return start;
  const bookmark = previousMs - settings.lookback_window * 1000;
  return shape.kind === 'event_window' ? Math.min(bookmark, runStartedAt - (shape.windowDays ?? 0) * DAY_MS) : bookmark;
}

/** An event window only when it starts before the incremental read would; otherwise it is that incremental read. */
function resolvedShape(shape: ReadShape, incremental: boolean, previousMs: number | undefined, settings: PlanSettings, runStartedAt: number): ReadShape {
  if (shape.kind !== 'event_window') return shape;
  const from = lowerBound({ kind: 'incremental' }, incremental, previousMs, settings, runStartedAt);
  const windowDays = shape.windowDays ?? 0;
  return windowDays > 0 && from !== undefined && runStartedAt - windowDays * DAY_MS < from ? shape : { ...shape, kind: 'incremental' };
}

/** The configured filters of an open-rows read, with its own filter. */
function openRowsFilters(selected: SelectedStream, filters: FilterValues | undefined): FilterValues {
  const { openRows } = selected.descriptor;
  return { ...filters, ...(openRows ? { [openRows.filter]: openRows.value } : {}) };
}

/** A stream's incoming bookmark dated after the run's start plus max_future_skew: its field (the replication key), its value, and that bound. */
export interface FutureBookmark {
  readonly field: string;
  readonly value: string;
  readonly boundMs: number;
}

/**
 * The incoming bookmark of an incremental stream when it lies after the
 * run's start plus max_future_skew (no record could be newer), else
 * undefined. The Singer face refuses such a state (planStream); the Airbyte
 * face reads nothing of the stream and sends its state back as it came.
 */
export function futureBookmark(selected: SelectedStream, settings: Pick<PlanSettings, 'max_future_skew'>, previous: StreamBookmark | undefined, runStartedAt: number): FutureBookmark | undefined {
  if (selected.replicationMethod !== 'INCREMENTAL') return undefined;
  const value = bookmarkValue(previous, selected.replicationKey);
  const boundMs = runStartedAt + settings.max_future_skew * 1000;
  return value !== undefined && instantMs(value) > boundMs ? { field: selected.replicationKey, value, boundMs } : undefined;
}

function checkFutureBookmark(selected: SelectedStream, ahead: FutureBookmark | undefined): void {
  if (ahead === undefined) return;
  const { name } = selected.descriptor;
  throw configError(
    `State: the ${name} bookmark ${ahead.value} lies after ${formatInstant(ahead.boundMs)} (now plus max_future_skew), so no record could be newer and every run would emit nothing. Fix or remove bookmarks.${name} in the state, or raise max_future_skew if the service's clock is ahead.`,
  );
}

/**
 * One read of a stream; `runStartedAt`: when the run started (ms), for the
 * bound on future dates and the event window. Without a shape, the read an
 * incremental run of the stream makes (or FULL_TABLE's whole dump).
 */
export function planStream(selected: SelectedStream, settings: PlanSettings, previous: StreamBookmark | undefined, runStartedAt: number, asked: ReadShape = { kind: selected.replicationMethod === 'INCREMENTAL' ? 'incremental' : 'full_pass' }): StreamPlan {
  const { descriptor, replicationKey } = selected;
  const openRows = asked.kind === 'open_rows';
  const incremental = selected.replicationMethod === 'INCREMENTAL' && !openRows;
  const previousValue = incremental ? bookmarkValue(previous, replicationKey) : undefined;
  const previousMs = previousValue === undefined ? undefined : instantMs(previousValue);
  const futureBoundMs = runStartedAt + settings.max_future_skew * 1000;
  if (!openRows) checkFutureBookmark(selected, futureBookmark(selected, settings, previous, runStartedAt));
  const shape = resolvedShape(asked, incremental, previousMs, settings, runStartedAt);
  const lowerBoundMs = lowerBound(shape, incremental, previousMs, settings, runStartedAt);
  const filters = openRows ? openRowsFilters(selected, settings.filters[descriptor.name]) : settings.filters[descriptor.name];
  const { query, clientLowerBoundMs } = buildQuery(descriptor, filters, lowerBoundMs, settings.filter_date_format, settings.source_timezone);
  // What a Last-Modified answered: If-Modified-Since is sent only when the
  // request means the same (a moved bookmark, a changed filter or selection
  // must read the dump again). The event window's start moves with the clock
  // and is left out: a dump unchanged since the last run holds no new event.
  const window = shape.windowDays ?? 0;
  const requestParts = {
    ...(openRows ? { read: 'open_rows' } : {}),
    method: selected.replicationMethod,
    filters: filters ?? {},
    start: incremental ? (settings.start_date ?? null) : null,
    lookback: settings.lookback_window,
    fields: Object.keys(selected.schema.properties ?? {}),
    // Only with policies, so that fingerprints stored before they existed still match; the key by a keyed digest, never itself.
    ...(selected.personal?.size ? { personal: Object.fromEntries(selected.personal), key: keyIdOf(settings.pseudonymisation_key) } : {}),
    ...(incremental && window > 0 ? { window } : {}),
    // The day a date bound is sent as depends on the zone (earlier versions sent the UTC day, which can start after the bound).
    ...(incremental && settings.filter_date_format === 'date' && (settings.source_timezone ?? 'UTC') !== 'UTC' ? { days: settings.source_timezone } : {}),
  };
  const requestFingerprint = (bookmark: string | null | undefined): string => fingerprint({ ...requestParts, bookmark: bookmark ?? null });
  const stored = openRows ? (previous?.open_rows as StreamBookmark | undefined) : previous;
  // A full pass (a FULL_TABLE run too) reads every row, whatever changed: deletions rest on it, and
  // the other reads of a pass likewise (their Last-Modified are compared). A FULL_TABLE run answered
  // 304 would send a SCHEMA and no row, which an Airbyte full_refresh with overwrite (handed the
  // state in every mode) or a Singer target with load_method overwrite (it recreates the table at
  // SCHEMA) turns into an empty table.
  const conditional = !readsWholeDump(shape.kind) && asked.inPass !== true;
  const dedupe = incremental && !readsWholeDump(shape.kind) && settings.lookback_window === 0 && previousMs !== undefined && lowerBoundMs === previousMs;
  return {
    kind: shape.kind,
    incremental,
    previousValue,
    previousMs,
    query,
    lowerBoundMs: clientLowerBoundMs,
    ifModifiedSince: conditional && stored?.last_modified_request === requestFingerprint(previousValue) ? stored.last_modified : undefined,
    ...(openRows ? { lastModifiedIn: 'open_rows' as const } : {}),
    boundary: dedupe ? { ms: previousMs, hashes: new Set(previous?.boundary_hashes ?? []) } : undefined,
    futureBoundMs,
    bookmarkProperties: incremental ? [replicationKey] : [],
    requestFingerprint,
  };
}
