import { DAY_MS } from '../dates.js';
import type { StoreRecord } from '../state.js';
import type { Bucket } from './bucket.js';
import { generationFileName, type GenerationOrigin, GenerationRefused, isGenerationId } from './generation-file.js';
import { type ShelvedGeneration, type TidyRun, unneeded } from './retention.js';
import { decodeGeneration, encodeGeneration, MIN_STATE_BYTES_A_ROW } from './state-codec.js';

/**
 * Where a stream's generations live once written: in the state (the one
 * thing every orchestrator keeps), in a bucket (store_url), or in the store's
 * folder. The sync does not know which: a run reads the generation its
 * incoming state names as a file of the stream's folder (fetched there from
 * its home), writes the next one there, and hands it to its home's `keep`,
 * which puts it there and says what the state records of it (change-store.ts
 * chooses the home: the state when the generation fits state_store_max_kb,
 * else the bucket when there is one, else the folder).
 */
export interface GenerationHome {
  readonly kind: 'state' | 'bucket' | 'folder';
  /** How messages and the plan line name it. */
  readonly where: string;
  /** Makes the generation `record` names the file `path` of stream `stream`; throws GenerationRefused (gone, damaged) or a TapError (the home refused). */
  fetch(record: StoreRecord, path: string, stream: string): Promise<void>;
  /** Keeps the generation written at `path`; what the state records of it. */
  keep(path: string, record: StoreRecord, origin: GenerationOrigin): Promise<StoreRecord>;
}

/** The stream's folder: generations are its files, tidied by the store itself (change-store.ts keepOnly). */
export class FolderHome implements GenerationHome {
  readonly kind = 'folder';

  constructor(readonly where: string) {}

  async fetch(): Promise<void> {
    // The file is where the run reads it.
  }

  async keep(_path: string, record: StoreRecord): Promise<StoreRecord> {
    return { generation: record.generation, rows: record.rows };
  }
}

/** The state: the generation travels in the stream's bookmark (state-codec.ts); the folder holds it only while a run uses it. */
export class StateHome implements GenerationHome {
  readonly kind = 'state';
  readonly where = 'the state';

  async fetch(record: StoreRecord, path: string, stream: string): Promise<void> {
    if (typeof record.data !== 'string') throw new GenerationRefused(`The state names change store generation ${record.generation} of stream ${stream}, but does not hold it.`);
    await decodeGeneration(record.data, path, stream, `The change store's generation ${record.generation} of stream ${stream} in the state`);
  }

  async keep(path: string, record: StoreRecord, origin: GenerationOrigin): Promise<StoreRecord> {
    return { generation: record.generation, rows: record.rows, data: await encodeGeneration(path, origin) };
  }
}

/** A bucket (store_url): generations are immutable objects `<tenant>/<stream>/<generation>.gen`, their origin in metadata. */
export class BucketHome implements GenerationHome {
  readonly kind = 'bucket';
  readonly where: string;

  constructor(
    private readonly bucket: Bucket,
    /** `<tenant>/<stream>/`: where the stream's generations lie in the bucket. */
    private readonly place: string,
  ) {
    this.where = bucket.url;
  }

  async fetch(record: StoreRecord, path: string, stream: string): Promise<void> {
    if (await this.bucket.download(this.place + generationFileName(record.generation), path)) return;
    throw new GenerationRefused(`The change store holds no generation ${record.generation} of stream ${stream} in ${this.bucket.url} (removed, or another store_url).`);
  }

  async keep(path: string, record: StoreRecord, origin: GenerationOrigin): Promise<StoreRecord> {
    const metadata = { stream: encodeURIComponent(origin.stream), fingerprint: origin.fingerprint, parent: origin.parent ?? 'none', used: String(Date.now()) };
    await this.bucket.upload(this.place + generationFileName(record.generation), path, metadata);
    return { generation: record.generation, rows: record.rows, url: this.bucket.url };
  }

  /**
   * Removes the stream's generations in the bucket that no state can name any
   * more (retention.ts, as for the folder). A generation a run named again
   * without writing one is marked used, once a day at most (metadata `used`,
   * which also moves its last-modified time where the store does), as the
   * folder's file time is: another pipeline's run, which judges it by its
   * age, must not remove what this one still names.
   */
  async tidy(run: TidyRun): Promise<void> {
    const shelved: ShelvedGeneration[] = [];
    for (const object of await this.bucket.list(this.place)) {
      const generation = object.name.slice(this.place.length).replace(/\.gen$/, '');
      if (!isGenerationId(generation) || object.name !== this.place + generationFileName(generation)) continue;
      const metadata = await this.bucket.metadata(object.name);
      const header = metadata === undefined ? undefined : originOf(metadata);
      const usedMs = Math.max(object.lastModifiedMs, Number(metadata?.used) || 0);
      shelved.push({ generation, usedMs, header });
      if (generation === run.incoming && run.incoming === run.written && metadata !== undefined && run.now - usedMs > DAY_MS) await this.bucket.touch(object.name, { ...metadata, used: String(run.now) });
    }
    for (const generation of unneeded(shelved, run)) await this.bucket.remove(this.place + generationFileName(generation));
  }
}

/** A generation's origin from its object's metadata; undefined when it is not one the store wrote. */
function originOf(metadata: Record<string, string>): GenerationOrigin | undefined {
  const { stream, fingerprint, parent } = metadata;
  if (stream === undefined || fingerprint === undefined || parent === undefined) return undefined;
  if (parent !== 'none' && !isGenerationId(parent)) return undefined;
  try {
    return { stream: decodeURIComponent(stream), fingerprint, parent: parent === 'none' ? null : parent };
  } catch {
    return undefined;
  }
}

/** Whether a generation of `rows` rows may fit in `maxBytes` of state (before encoding it: base64 of the hashes alone takes MIN_STATE_BYTES_A_ROW a row). */
export function mayFitState(rows: number, maxBytes: number): boolean {
  return maxBytes > 0 && rows * MIN_STATE_BYTES_A_ROW <= maxBytes;
}

/** About the bytes a row takes in the state (state-codec.ts: 8 of hash, a few of key), for advice before a generation is encoded. */
const STATE_BYTES_A_ROW = 14;

/**
 * What to add when the folder lacks the generation the state names: the
 * rows, about what the state would take to carry them, and the setting that
 * makes them found by every run (a run in a new container finds no folder).
 */
export function goneFromFolder(rows: number | undefined, stateMaxBytes: number): string {
  if (rows === undefined) return '';
  const kib = Math.ceil((rows * STATE_BYTES_A_ROW) / 1024);
  const cap = Math.floor(stateMaxBytes / 1024);
  if (kib <= cap) return ` The state names ${rows} rows, about ${kib} KiB in the state: from this run on the change store travels in the state (state_store_max_kb ${cap}), and every run finds it.`;
  const raise = `raise state_store_max_kb to ${Math.ceil(kib * 1.25)}`;
  return ` The state names ${rows} rows, about ${kib} KiB in the state, more than state_store_max_kb (${cap}), so they live in the folder, and a run that starts without it (a new container or machine) makes this full pass every time: set store_url (s3://bucket/prefix or azure://container/prefix), ${raise}, or keep store_directory on a volume that outlives the run.`;
}
