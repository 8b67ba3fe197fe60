import { createHash } from 'node:crypto';
import { formatInstant, instantMs } from '../dates.js';
import { configError } from '../errors.js';
import { buildQuery, type FilterDateFormat } from '../http/query.js';
import { bookmarkValue, type StreamBookmark } from '../state.js';
import { Pseudonymiser } from '../records/pseudonymise.js';
import type { FilterValues } from '../config/config.js';
import type { SelectedStream } from '../catalog/selection.js';

/** The settings a plan reads. */
export interface PlanSettings {
  filters: Readonly<Record<string, FilterValues | undefined>>;
  start_date?: string;
  lookback_window: number;
  max_future_skew: number;
  filter_date_format?: FilterDateFormat;
  pseudonymisation_key?: string;
}

/**
 * What one stream's sync will ask and accept, decided before any request from
 * the selection, the settings and the stream's bookmark. Pure: no I/O.
 */
export interface StreamPlan {
  readonly incremental: boolean;
  /** The incoming bookmark (UTC `Z` form) and its instant. */
  readonly previousValue?: string;
  readonly previousMs?: number;
  /** filter[...] parameters in a stable order. */
  readonly query: Array<[string, string]>;
  /** Records whose replication key is before this instant (or null) are not emitted. */
  readonly lowerBoundMs?: number;
  /** Sent when the last run's Last-Modified answered a request that meant the same. */
  readonly ifModifiedSince?: string;
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

function lowerBound(previousMs: number | undefined, settings: PlanSettings): number | undefined {
  if (previousMs !== undefined) return previousMs - settings.lookback_window * 1000;
  return settings.start_date ? instantMs(settings.start_date) : undefined;
}

/** `runStartedAt`: when the run started (ms), for the bound on future dates. */
export function planStream(selected: SelectedStream, settings: PlanSettings, previous: StreamBookmark | undefined, runStartedAt: number): StreamPlan {
  const { descriptor, replicationKey } = selected;
  const incremental = selected.replicationMethod === 'INCREMENTAL';
  const previousValue = incremental ? bookmarkValue(previous, replicationKey) : undefined;
  const previousMs = previousValue === undefined ? undefined : instantMs(previousValue);
  const futureBoundMs = runStartedAt + settings.max_future_skew * 1000;
  if (previousMs !== undefined && previousMs > futureBoundMs) {
    throw configError(
      `State: the ${descriptor.name} bookmark ${previousValue} lies after ${formatInstant(futureBoundMs)} (now plus max_future_skew), so no record could be newer and every run would emit nothing. Fix or remove bookmarks.${descriptor.name} in the state, or raise max_future_skew if the service's clock is ahead.`,
    );
  }
  const lowerBoundMs = incremental ? lowerBound(previousMs, settings) : undefined;
  const { query, clientLowerBoundMs } = buildQuery(descriptor, settings.filters[descriptor.name], lowerBoundMs, settings.filter_date_format);
  // What a Last-Modified answered: If-Modified-Since is sent only when the
  // request means the same (a moved bookmark, a changed filter or selection
  // must read the dump again).
  const requestParts = {
    method: selected.replicationMethod,
    filters: settings.filters[descriptor.name] ?? {},
    start: incremental ? (settings.start_date ?? null) : null,
    lookback: settings.lookback_window,
    fields: Object.keys(selected.schema.properties ?? {}),
    // Only with policies, so that fingerprints stored before they existed still match; the key by a keyed digest, never itself.
    ...(selected.personal?.size ? { personal: Object.fromEntries(selected.personal), key: keyIdOf(settings.pseudonymisation_key) } : {}),
  };
  const requestFingerprint = (bookmark: string | null | undefined): string => fingerprint({ ...requestParts, bookmark: bookmark ?? null });
  const dedupe = incremental && settings.lookback_window === 0 && previousMs !== undefined;
  return {
    incremental,
    previousValue,
    previousMs,
    query,
    lowerBoundMs: clientLowerBoundMs,
    ifModifiedSince: previous?.last_modified_request === requestFingerprint(previousValue) ? previous.last_modified : undefined,
    boundary: dedupe ? { ms: previousMs, hashes: new Set(previous?.boundary_hashes ?? []) } : undefined,
    futureBoundMs,
    bookmarkProperties: incremental ? [replicationKey] : [],
    requestFingerprint,
  };
}
