import { formatInstant } from '../dates.js';
import type { PassRecord, StoreRecord, StreamBookmark } from '../state.js';
import type { IncrementalCursor } from './read/incremental.js';
import type { ReadOutcome } from './read/resumable-read.js';
import type { ReadPlan, RunPlan } from './plan/read-plans.js';
import type { SelectedStream } from '../catalog/selection.js';

/**
 * What a stream's run leaves in its bookmark, from its reads and its full
 * pass. Pure: the stream's sync applies it (StateStore.update merges it,
 * keeping the keys it does not name) only after its reads are done.
 */

/** A read the run made: its plan, how it ended, and its cursor. */
export interface ReadResult {
  readonly plan: ReadPlan;
  readonly outcome: ReadOutcome;
  readonly cursor: IncrementalCursor;
}

/** What became of a full pass's table version (pass-activation.ts decides). */
export interface PassOutcome {
  /** The version ACTIVATE_VERSION made current, if it went out. */
  readonly activated?: number;
  /** Records the pass emitted. */
  readonly rows: number;
  /** The row count the next pass is held against; absent: the last one stays. */
  readonly baseline?: number;
}

/** The bookmark after a dump read to its end, with the Last-Modified it had and what that answered. */
function bookmarkChange(selected: SelectedStream, { plan, cursor }: ReadResult, lastModified: string | undefined): StreamBookmark {
  const change: StreamBookmark = cursor.bookmark(selected.replicationKey);
  const bookmark = plan.incremental ? (change.replication_key_value ?? plan.previousValue) : undefined;
  change.last_modified = lastModified;
  change.last_modified_request = lastModified ? plan.requestFingerprint(bookmark) : undefined;
  return change;
}

/** A read's change: the bookmark (the main read; the open rows' Last-Modified too when it held them), or its own Last-Modified (the open rows). */
function readChange(selected: SelectedStream, run: RunPlan, result: ReadResult): StreamBookmark {
  if (result.outcome.status !== 200) return {};
  const lastModified = result.outcome.lastModified;
  const openRows = (fingerprint: string | undefined): StreamBookmark => ({ open_rows: { last_modified: lastModified, last_modified_request: lastModified ? fingerprint : undefined } });
  if (result.plan.lastModifiedIn === 'open_rows') return openRows(result.plan.requestFingerprint(null));
  const change = bookmarkChange(selected, result, lastModified);
  return run.openRowsFingerprint === undefined ? change : { ...change, ...openRows(run.openRowsFingerprint) };
}

/** When the run's pass ran, and the grid point it fell due at: the next pass of its kind falls due an interval after that point. */
function passTimes(run: RunPlan, now: number): PassRecord {
  return { at: formatInstant(now), due: formatInstant(run.passDue ?? now) };
}

/**
 * The full pass's record: when it ran and fell due (the next falls due an
 * interval after that grid point), the version its records carried, and the baseline the next pass is held
 * against (the verdict's, else the last one). A pass answered 304 changed
 * nothing.
 */
function fullPassChange(run: RunPlan, previous: StreamBookmark | undefined, results: readonly ReadResult[], pass: PassOutcome, now: number): StreamBookmark {
  const plan = run.fullPass;
  if (plan === undefined || results.some((r) => r.outcome.status !== 200)) return {};
  const baseline = pass.baseline ?? previous?.full_pass?.rows;
  return { full_pass: { ...passTimes(run, now), ...(plan.version === undefined ? {} : { version: plan.version }), ...(baseline === undefined ? {} : { rows: baseline }) } };
}

export function runStateChange(selected: SelectedStream, run: RunPlan, previous: StreamBookmark | undefined, results: readonly ReadResult[], pass: PassOutcome, now: number): StreamBookmark {
  return { ...readsChange(selected, run, results), ...fullPassChange(run, previous, results, pass, now) };
}

/**
 * What the reads done so far change in the bookmark (a checkpoint between
 * reads): the bookmark and the Last-Modified they got, never the pass's
 * record, which only a run whose every read is done may write.
 */
export function readsChange(selected: SelectedStream, run: RunPlan, results: readonly ReadResult[]): StreamBookmark {
  return Object.assign({}, ...results.map((result) => readChange(selected, run, result))) as StreamBookmark;
}

/**
 * What the change store leaves in the bookmark: the generation this run
 * wrote (the next run compares with it once the target confirmed this
 * state), and when the last change pass ran and fell due. A run without the
 * store that sent rows (`unrecorded`: send_changes_only off, a FULL_TABLE or
 * full_refresh run, a store that could not be written) drops the generation
 * the state named: the target holds rows it does not record, and a later run
 * comparing with it would leave out a row that went back to what it records.
 * It says so with an explicit null (UnrecordedStore), which a merge of states
 * keeps.
 */
export function storeChange(run: RunPlan, stored: StoreRecord | undefined, now: number, unrecorded = false): StreamBookmark {
  if (stored === undefined) return unrecorded ? { store: { generation: null } } : {};
  return { store: stored, ...(run.changePass ? { change_pass: passTimes(run, now) } : {}) };
}
