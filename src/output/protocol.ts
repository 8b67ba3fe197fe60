import type { JsonSchema } from '../catalog/schemas.js';
import type { TapState } from '../state.js';
import type { StdoutReader } from '../errors.js';

/**
 * How the engine's output is spelled. The sync engine is the same for Singer
 * and Airbyte; each face implements these few message shapes.
 */
export interface OutputProtocol {
  /** What reads the messages, in the face's words (a Singer target, an Airbyte destination): the line saying stdout was closed names it. */
  readonly reader: StdoutReader;
  /** The member a delete record sets to the deletion's instant (its other fields null but the key): Singer's `_sdc_deleted_at`, Airbyte's `_ab_cdc_deleted_at`. */
  readonly deletionMember: string;
  /** The member the protocol adds to every record (recordEnvelope's `members`: Airbyte's extraction cursor), which changes every run: left out of a record's content in the change store. */
  readonly recordMember?: string;
  /**
   * Whether the reader keeps the last of a key's records when one run sends
   * it several: a Singer target upserts in order; an Airbyte destination
   * dedups by cursor and extraction time, which a run's records of one read
   * share, and keeps either on a tie (the change store then sends such a
   * key's last row once more, alone, next run).
   */
  readonly lastRecordWins: boolean;
  /**
   * Whether a stream whose incoming bookmark lies after the run's start plus
   * max_future_skew is read not at all, with a warning, its state sent back
   * as it came (Airbyte: the platform hands back the state it stored), rather
   * than the state refused (Singer: a state edited by hand is more likely
   * wrong, and says so before any record).
   */
  readonly skipsFutureBookmarks?: boolean;
  /**
   * Whether a stream's state also goes out between the reads of its run
   * (checkpoints the reader may resume from: Airbyte's platform commits each
   * STATE once the records before it are stored), not only after them.
   */
  readonly checkpointsBetweenReads?: boolean;
  /** The stream's schema message, or undefined when the protocol has none at sync time. */
  schema(stream: string, schema: JsonSchema, keyProperties: readonly string[], bookmarkProperties: readonly string[]): string | undefined;
  /**
   * Prefix and suffix of every RECORD line of one stream; a record's JSON text
   * goes between them. `version`: the table version the record belongs to,
   * where the protocol has one. `members`: JSON text of members the protocol
   * adds to every record after its own, each with its leading comma
   * (`,"name":value`), or absent.
   */
  recordEnvelope(stream: string, extractedAt: Date, version?: number): { head: string; tail: string; members?: string };
  /** The state message after `stream` changed; `whole` is the state of every stream; `records`: the stream's records sent since its previous state message. */
  state(stream: string, whole: TapState, records: number): string;
  /** The line telling where a stream's sync is (Airbyte's STREAM_STATUS trace), or absent when the protocol has none (Singer). */
  streamStatus?(stream: string, status: StreamStatus): string;
  /** The message announcing finished batch files, or absent when the protocol has none (Airbyte). */
  batch?(stream: string, encoding: BatchEncoding, manifest: readonly string[]): string;
  /** The message that makes `version` the stream's table version (targets drop rows of older versions), or absent when the protocol has none (Airbyte). */
  activateVersion?(stream: string, version: number): string;
}

/**
 * Where a stream's sync is: started (nothing read yet), running (its dump
 * answered, or its state is next), complete (its last state sent), incomplete
 * (it failed).
 */
export type StreamStatus = 'started' | 'running' | 'complete' | 'incomplete';

/** How batch files are written, as the BATCH message names it. */
export interface BatchEncoding {
  format: 'jsonl';
  compression: 'gzip' | 'none';
}
