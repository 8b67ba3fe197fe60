import { createHash } from 'node:crypto';
import { configError } from './errors.js';
import { readJsonFile } from './config/json-file.js';
import { normalizeInstant } from './dates.js';
import { shown } from './records/fields.js';
import { REPORTS, type StreamDescriptor } from './catalog/reports.js';

/** When a pass ran, and the grid point it fell due at (sync/plan/pass-schedule.ts; absent in states of earlier versions). */
export interface PassRecord {
  at: string;
  due?: string;
}

/** The last full pass of a stream: when it ran and fell due, the table version it activated (or wrote), and the rows it held. */
export interface FullPassRecord extends PassRecord {
  version?: number;
  rows?: number;
}

/**
 * The generation of the change store this run wrote: what the target holds
 * once it confirmed this state; where it lives: in `data` (the state carries
 * it: store/state-codec.ts), in the bucket `url` (store_url), else in the
 * store's folder.
 */
export interface StoreRecord {
  generation: string;
  rows?: number;
  /**
   * The generation itself when it lives in the state, its bucket when it lives
   * there. The tap writes the one it does not use as an explicit null, never
   * an omission: an orchestrator that merges a run's state into the last one
   * (Meltano with --merge-state, a partial state over a completed one) would
   * keep an omitted member's old value, and a later run would read a stale
   * generation under the new one's name.
   */
  data?: string | null;
  url?: string | null;
}

/**
 * What a run that sent rows without the store leaves in its bookmark: no
 * generation a later run may trust. An explicit null, not an omission: an
 * orchestrator that merges a run's state into the last one (Meltano with
 * --merge-state) would keep an omitted member's old value.
 */
export interface UnrecordedStore {
  generation: null;
}

/** The generation a bookmark's store member names, if it names one (not an UnrecordedStore). */
export function storeRecordOf(bookmark: StreamBookmark | undefined): StoreRecord | undefined {
  const store = bookmark?.store;
  return store === undefined || store.generation === null ? undefined : (store as StoreRecord);
}

/** A Last-Modified and the fingerprint of the request it answered. */
export interface LastModified {
  last_modified?: string;
  last_modified_request?: string;
}

/**
 * Per-stream bookmark, in Meltano's layout plus what this tap needs:
 * - boundary_hashes: content hashes of the records emitted at exactly
 *   replication_key_value, so an unchanged one is not emitted again next run;
 * - last_modified / last_modified_request: the dump's Last-Modified and a
 *   fingerprint of the request it answered, for If-Modified-Since;
 * - open_rows: the same for the read of the open rows;
 * - full_pass: the last full pass (when it ran and fell due, its table
 *   version, its rows);
 * - change_pass: when the last change pass ran and fell due;
 * - store: the change store's generation this state confirms (store/).
 * Unknown keys (from other tools or newer versions) are kept as they are.
 */
export interface StreamBookmark extends LastModified {
  replication_key?: string;
  replication_key_value?: string | null;
  boundary_hashes?: string[];
  open_rows?: LastModified;
  full_pass?: FullPassRecord;
  change_pass?: PassRecord;
  store?: StoreRecord | UnrecordedStore;
  [key: string]: unknown;
}

export interface TapState {
  bookmarks?: Record<string, StreamBookmark>;
  [key: string]: unknown;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Accepts a bare state, a STATE message, Meltano's wrappers of one, or an
 * older layout keeping the key value under its field name.
 */
export function parseState(value: unknown, source: string, reports: readonly StreamDescriptor[] = REPORTS): TapState {
  if (value === null || value === undefined) return {};
  if (!isObject(value)) throw configError(`State ${source} is not a JSON object like {"bookmarks": {...}}. Pass the last STATE the target wrote, or run without --state for a full sync.`);
  const state: TapState = structuredClone(unwrapped(value.type === 'STATE' && isObject(value.value) ? value.value : value));
  if (state.bookmarks === undefined || state.bookmarks === null) {
    state.bookmarks = {};
    return state;
  }
  if (!isObject(state.bookmarks)) throw configError(`State ${source}: "bookmarks" is not an object keyed by stream name. Fix it, or run without --state for a full sync.`);
  for (const [stream, bookmark] of Object.entries(state.bookmarks)) {
    if (!isObject(bookmark)) throw configError(`State ${source}: bookmarks.${stream} is not an object. Fix or remove that bookmark.`);
    checkDate(bookmark, 'replication_key_value', stream, source);
    // The older layout keeps the value under the replication key's own name.
    const legacy = reports.find((r) => r.name === stream)?.replicationKey;
    if (legacy !== undefined && bookmark.replication_key_value === undefined) checkDate(bookmark, legacy, stream, source);
    if (bookmark.boundary_hashes !== undefined && !(Array.isArray(bookmark.boundary_hashes) && bookmark.boundary_hashes.every((h) => typeof h === 'string'))) {
      throw configError(`State ${source}: bookmarks.${stream}.boundary_hashes is not an array of strings. Fix or remove that bookmark.`);
    }
    if (bookmark.last_modified !== undefined && typeof bookmark.last_modified !== 'string') {
      throw configError(`State ${source}: bookmarks.${stream}.last_modified is not a string. Fix or remove that bookmark.`);
    }
    checkMember(bookmark, 'open_rows', stream, source, () => true);
    checkMember(bookmark, 'full_pass', stream, source, (pass) => passTimesValid(pass) && [pass.version, pass.rows].every((n) => n === undefined || Number.isSafeInteger(n)));
    checkMember(bookmark, 'change_pass', stream, source, passTimesValid);
    checkMember(bookmark, 'store', stream, source, validStoreRecord);
  }
  return state;
}

/** A pass's `at` and `due`: RFC 3339 instants (`due` may be absent: states of earlier versions). */
function passTimesValid(pass: Record<string, unknown>): boolean {
  const instant = (value: unknown): boolean => typeof value === 'string' && normalizeInstant(value) !== undefined;
  return instant(pass.at) && (pass.due === undefined || instant(pass.due));
}

/** Meltano keeps a tap's state under this member (`meltano state get` prints `{"singer_state": {...}}`). */
const MELTANO_STATE = 'singer_state';

/**
 * The tap's state inside Meltano's wrappers: `{"singer_state": S}` (what
 * `meltano state get` prints), and a state backend's file
 * `{"completed": {"singer_state": C}, "partial": {"singer_state": P}}`, P
 * merged over C as Meltano merges them. A state of the tap's own (with
 * `bookmarks`) is as it is.
 */
function unwrapped(value: Record<string, unknown>): Record<string, unknown> {
  if (value.bookmarks !== undefined) return value;
  const inner = (member: unknown): Record<string, unknown> | undefined => (isObject(member) && isObject(member[MELTANO_STATE]) ? member[MELTANO_STATE] : undefined);
  if (inner(value) !== undefined) return inner(value)!;
  const [completed, partial] = [inner(value.completed), inner(value.partial)];
  if (completed === undefined && partial === undefined) return value;
  return mergedOver(partial ?? {}, completed ?? {});
}

/** `over` merged onto `under`, objects member by member, anything else replaced. */
function mergedOver(over: Record<string, unknown>, under: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...under };
  for (const [key, value] of Object.entries(over)) merged[key] = isObject(value) && isObject(under[key]) ? mergedOver(value, under[key]) : value;
  return merged;
}

/**
 * One sentence when a state holds something but no bookmark of the selected
 * streams (another tap's state, one of another pipeline, a wrapper this tap
 * does not know): which members and streams it held, by name only (values
 * may be personal), and what to pass instead. Undefined for an empty state,
 * or one that holds a selected stream's bookmark.
 */
export function foreignState(state: TapState | undefined, selected: readonly string[]): string | undefined {
  if (state === undefined) return undefined;
  const streams = Object.keys(state.bookmarks ?? {});
  if (streams.some((stream) => selected.includes(stream))) return undefined;
  const members = Object.keys(state).filter((key) => key !== 'bookmarks');
  if (streams.length === 0 && members.length === 0) return undefined;
  const held = [...(streams.length > 0 ? [`bookmarks of ${shownNames(streams)}`] : []), ...(members.length > 0 ? [`the members ${shownNames(members)}`] : [])].join(' and ');
  return `The state holds no bookmark of ${selected.join(', ')} (it holds ${held}), so they start as a first run. If this was not meant, pass the last STATE this tap's target wrote for this pipeline (with Meltano: meltano state get <state id>).`;
}

/** The change store's record in a bookmark, as this tap writes it. */
function validStoreRecord(store: Record<string, unknown>): boolean {
  const { generation, rows, data, url } = store;
  // A run that sent rows without the store says so with a null generation (UnrecordedStore); a merge may leave other members beside it.
  if (generation === null) return true;
  if (typeof generation !== 'string' || !/^[A-Za-z0-9-]{1,64}$/.test(generation)) return false;
  if (rows !== undefined && !Number.isSafeInteger(rows)) return false;
  if (data !== undefined && data !== null && !(typeof data === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(data))) return false;
  return url === undefined || url === null || (typeof url === 'string' && /^(s3|azure):\/\/[a-z0-9]/.test(url));
}

/** The first few names of a state another tool wrote, as a line may show them: no control characters, cut short, and one that looks like an e-mail address counted, not shown. */
function shownNames(names: readonly string[]): string {
  const MAX_NAMES = 5;
  const shown = names.filter((name) => !name.includes('@')).slice(0, MAX_NAMES).map((name) => {
    const plain = name.replace(/[\u0000-\u001f\u007f]/g, '?');
    return plain.length > 40 ? `${plain.slice(0, 39)}…` : plain;
  });
  const others = names.length - shown.length;
  return [...shown, ...(others > 0 ? [`${others} more`] : [])].join(', ');
}

/** A member the tap keeps in a bookmark: absent, or an object of its shape. */
function checkMember(bookmark: Record<string, unknown>, key: string, stream: string, source: string, valid: (member: Record<string, unknown>) => boolean): void {
  const member = bookmark[key];
  if (member === undefined || (isObject(member) && valid(member))) return;
  throw configError(`State ${source}: bookmarks.${stream}.${key} is not what this tap writes there. Remove that member (the next run rebuilds it), or fix it.`);
}

function checkDate(bookmark: Record<string, unknown>, key: string, stream: string, source: string): void {
  const value = bookmark[key];
  if (value === undefined || value === null) return;
  if (typeof value !== 'string' || normalizeInstant(value) === undefined) {
    // Not a date, so possibly anything a mistake put there: a value that may be personal (an e-mail) is not quoted.
    throw configError(`State ${source}: bookmarks.${stream}.${key} is not an RFC 3339 date${shown({ personal: false }, String(value))}. Fix or remove that bookmark.`);
  }
}

export function readStateFile(path: string): TapState {
  const parsed = readJsonFile(path, 'state file', { unreadable: 'Check the --state path.', invalid: 'Fix it, or run without --state for a full sync.' });
  return parsed === undefined ? { bookmarks: {} } : parseState(parsed, `file ${path}`);
}

/** The replication key value of a bookmark, also from older layouts that stored it under the field's own name. */
export function bookmarkValue(bookmark: StreamBookmark | undefined, replicationKey: string): string | undefined {
  if (!bookmark) return undefined;
  const value = bookmark.replication_key_value ?? bookmark[replicationKey];
  return typeof value === 'string' ? normalizeInstant(value) : undefined;
}

/** Holds the whole state of a run; every STATE message carries all of it. */
export class StateStore {
  private readonly state: TapState;

  constructor(initial: TapState = {}) {
    this.state = structuredClone(initial);
    this.state.bookmarks ??= {};
  }

  get(stream: string): StreamBookmark | undefined {
    return this.state.bookmarks?.[stream];
  }

  /** Merges a change into one stream's bookmark, keeping keys the change does not name. */
  update(stream: string, change: StreamBookmark): void {
    const bookmarks = (this.state.bookmarks ??= {});
    const next: StreamBookmark = { ...bookmarks[stream], ...change };
    for (const [key, value] of Object.entries(next)) if (value === undefined) delete next[key];
    bookmarks[stream] = next;
  }

  snapshot(): TapState {
    return structuredClone(this.state);
  }
}

/** Compact content hash of a record as emitted, for boundary dedupe. 72 bits: collisions are negligible for the few thousand records at one instant. */
export function recordHash(recordJson: string): string {
  return createHash('sha1').update(recordJson).digest('base64url').slice(0, 12);
}
