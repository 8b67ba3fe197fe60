import { rename, rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { fs } from '../builtins.js';
import { runtimeError, type TapError } from '../errors.js';
import { PRIVATE_FILE_MODE } from '../output/private-files.js';

/**
 * Object storage for change store generations too large for the state
 * (store_url): an S3 bucket (AWS or S3-compatible) or an Azure Blob Storage
 * container, through the providers' own SDKs, loaded only when store_url
 * names them. Generations are immutable objects: a run writes a generation
 * of its own id once and never overwrites one, so no conditional write and
 * no lock is needed. Credentials come only from the SDKs' own chains
 * (environment, profiles, instance or workload identity), never from the
 * config, and never reach a message.
 */

/** An object of the bucket under the store's prefix. */
export interface BucketObject {
  /** Its name after the store's prefix (`<tenant>/<stream>/<generation>.gen`). */
  readonly name: string;
  readonly lastModifiedMs: number;
}

export interface Bucket {
  /** store_url as configured: how messages name the place. */
  readonly url: string;
  /** Writes the object `name` to the new owner-only file `path`; false when there is no such object. */
  download(name: string, path: string): Promise<boolean>;
  /** Writes the file `path` as the object `name`, with `metadata` (short ASCII values). */
  upload(name: string, path: string, metadata: Readonly<Record<string, string>>): Promise<void>;
  /** The objects whose names start with `prefix`. */
  list(prefix: string): Promise<BucketObject[]>;
  /** An object's metadata, or undefined when it is gone. */
  metadata(name: string): Promise<Record<string, string> | undefined>;
  /** Marks the object as used now (its last-modified time), its bytes and metadata as they are. */
  touch(name: string, metadata: Readonly<Record<string, string>>): Promise<void>;
  /** Removes the object, if it is there. */
  remove(name: string): Promise<void>;
}

/** store_url's parts: the provider, the bucket or container, and the prefix (no slash at either end; may be empty). */
export interface StoreUrl {
  readonly provider: 's3' | 'azure';
  readonly container: string;
  readonly prefix: string;
}

export function parseStoreUrl(url: string): StoreUrl {
  const match = /^(s3|azure):\/\/([^/]+)\/?(.*)$/.exec(url);
  if (match === null) throw new Error(`${url} is not a store URL (the config's format checks it)`);
  return { provider: match[1] as 's3' | 'azure', container: match[2], prefix: match[3].replace(/^\/+|\/+$/g, '') };
}

/** What a provider's error was, in the words a fix needs. */
export type BucketFailure = 'missing bucket' | 'refused' | 'no credentials' | 'no region' | 'unreachable' | 'other';

const FIXES: Record<BucketFailure, string> = {
  'missing bucket': 'create it, or fix store_url',
  refused: "give the credentials the SDK finds read, write, list and delete rights on it (the tap's own store only), or fix store_url",
  'no credentials': "set the provider's credentials where its SDK looks for them (for S3: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or an instance or workload role; for Azure: AZURE_STORAGE_CONNECTION_STRING, or AZURE_STORAGE_ACCOUNT with a managed identity or az login)",
  'no region': 'set AWS_REGION (or a region in the AWS profile)',
  unreachable: 'check the network, and the endpoint (AWS_ENDPOINT_URL_S3 for an S3-compatible store)',
  other: 'check store_url and the credentials, then run the tap again',
};

const WHAT: Record<BucketFailure, (place: string) => string> = {
  'missing bucket': (place) => `${place} does not exist`,
  refused: (place) => `${place} refused the credentials the SDK found`,
  'no credentials': () => 'the SDK found no credentials',
  'no region': () => 'the AWS SDK knows no region',
  unreachable: (place) => `${place} could not be reached`,
  other: (place) => `${place} answered with an error`,
};

/**
 * One line for a failure while the store used the bucket: what, the fix, and
 * the provider's error code (never its message, which may quote a
 * credential's id); the run fails before its STATE.
 */
export function bucketError(doing: string, place: string, failure: BucketFailure, code: string | undefined, cause: unknown): TapError {
  const detail = code === undefined ? '' : ` (${code.replace(/[^A-Za-z0-9_.-]/g, '').slice(0, 60)})`;
  return runtimeError(`The change store could not ${doing}: ${WHAT[failure](place)}${detail}; ${FIXES[failure]}. Nothing was sent as this run's state.`, cause);
}

/** Errors of the folder a download is written to, not of the bucket: said as the folder's. */
const LOCAL_WRITE_CODES = new Set(['ENOSPC', 'EDQUOT', 'EACCES', 'EPERM', 'EROFS']);

/**
 * An object's body, as a provider's SDK opens it (`body`), saved as the
 * owner-only file `path`: true; false when the provider says there is no such
 * object (`missing`); any other failure thrown as `failed` makes it. The body
 * goes to `path.partial` first and is renamed over `path` only when whole: a
 * copy a failed run left (or this run's first read of a pass read again) is
 * replaced, never refused, and a cut download never takes the final name.
 * The generation is immutable, so a copy replaced held the same bytes.
 */
export async function saveObject(path: string, body: () => Promise<NodeJS.ReadableStream>, missing: (error: unknown) => boolean, failed: (error: unknown) => TapError): Promise<boolean> {
  const partial = `${path}.partial`;
  try {
    await pipeline(await body(), fs.createWriteStream(partial, { flags: 'w', mode: PRIVATE_FILE_MODE }));
    await rename(partial, path);
    return true;
  } catch (error) {
    await rm(partial, { force: true });
    if (missing(error)) return false;
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== undefined && LOCAL_WRITE_CODES.has(code)) {
      throw runtimeError(`The change store could not write ${path} (${code}): free space in the store folder or let the tap write there (store_directory). Nothing was sent as this run's state.`, error);
    }
    throw failed(error);
  }
}
