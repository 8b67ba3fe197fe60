import { formatInstant } from '../../dates.js';
import { metric, RecordCounter } from '../../observe/metrics.js';
import { ProgressLine } from '../../observe/progress.js';
import type { Logger } from '../../observe/log.js';

/** What the run's reads of a stream did, and its full pass. */
export interface RunDetail {
  reads: Array<{ kind: string; records: number; notModified: boolean }>;
  /** Why the run was a full pass, if it was one. */
  fullPass?: string;
  /** The table version ACTIVATE_VERSION made current. */
  activated?: number;
  /** The run was a change pass. */
  changePass?: boolean;
  /** Records the target held as they were, not sent (the change store). */
  unchanged?: number;
  /** Delete records sent. */
  deleted?: number;
}

export interface StreamSummary extends Partial<RunDetail> {
  stream: string;
  /** RECORD messages sent (delete records included), as record_count counts them. */
  records: number;
  /** Rows the reads let through (the incremental cursor's), sent or not. */
  read: number;
  invalidSkipped: number;
  notModified: boolean;
  bookmark: string | null;
  durationMs: number;
  bytes: number;
}

/** What was skipped, and why, for the end-of-stream log lines. */
export interface SkipCounts {
  invalidSkipped: number;
  duplicatesSkipped: number;
  outOfRange: number;
  /** Emitted records too far in the future to move the bookmark. */
  future?: number;
}

/**
 * One stream's counts while it syncs: rows read and bytes, the records sent
 * (fewer than read when the change store leaves out what the target holds),
 * the record_count metric of the records sent and the rows_read metric (at
 * most once a minute, and at the end; delete records as a record_count of
 * their own, tagged `deleted`), the live progress line, and the
 * end-of-stream log lines and summary.
 */
export class StreamStats {
  /** Rows the reads let through. */
  records = 0;
  bytes = 0;
  private deletes = 0;
  private counted = { sent: 0, read: 0 };
  private readonly started = Date.now();
  private readonly counters: { sent: RecordCounter; read: RecordCounter };
  private readonly progress: ProgressLine;

  /** `sentSoFar`: the records sent so far, when not every row read is sent (the change store's). */
  constructor(
    private readonly logger: Logger,
    private readonly stream: string,
    private readonly sentSoFar?: () => number,
  ) {
    this.counters = { sent: new RecordCounter(logger, stream), read: new RecordCounter(logger, stream, 'rows_read') };
    this.progress = new ProgressLine(stream, { slot: logger.status });
  }

  /** Records sent so far, delete records included. */
  get sent(): number {
    return (this.sentSoFar?.() ?? this.records) + this.deletes;
  }

  /** A chunk was read; `records` let through so far. */
  chunk(bytes: number, records: number): void {
    this.bytes += bytes;
    this.records = records;
    this.flushCount();
    this.progress.update(this.records, this.bytes);
  }

  /** The dump was read, `records` let through, `deleted` delete records sent: the last counts go out and the progress line goes away. */
  finish(records: number, deleted = 0): void {
    this.records = records;
    this.progress.clear();
    this.flushCount();
    this.counters.sent.flush();
    this.counters.read.flush();
    this.deletes = deleted;
    if (deleted > 0) metric(this.logger, 'counter', 'record_count', deleted, { stream: this.stream, deleted: true });
  }

  report(skips: SkipCounts, replicationKey = '', futureBoundMs = 0): void {
    const { logger, stream } = this;
    if (skips.future) {
      logger.warn(
        `${stream}: ${skips.future} records have a ${replicationKey} after ${formatInstant(futureBoundMs)} (the run's start plus max_future_skew); they were emitted, but the bookmark does not move past that bound (a clock error at the service?)`,
      );
    }
    if (skips.invalidSkipped > 0) logger.warn(`${stream}: skipped ${skips.invalidSkipped} invalid records (on_invalid_record=skip)`);
    if (skips.duplicatesSkipped > 0) logger.info(`${stream}: skipped ${skips.duplicatesSkipped} records at the bookmark that were already emitted unchanged`);
    if (skips.outOfRange > 0) logger.debug(`${stream}: ${skips.outOfRange} records before the incremental window were not emitted`);
  }

  summary(invalidSkipped: number, notModified: boolean, bookmark: string | null, detail?: RunDetail): StreamSummary {
    return { stream: this.stream, records: this.sent, read: this.records, invalidSkipped, notModified, bookmark, durationMs: Date.now() - this.started, bytes: this.bytes, ...detail };
  }

  private flushCount(): void {
    const sent = this.sentSoFar?.() ?? this.records;
    this.counters.sent.add(sent - this.counted.sent);
    this.counters.read.add(this.records - this.counted.read);
    this.counted = { sent, read: this.records };
  }
}

/** Runs one stream's sync under the sync_duration metric; `sync` gets the start, so its summary can count the same time. */
export async function timedSync<T>(logger: Logger, stream: string, sync: (started: number) => Promise<T>): Promise<T> {
  const started = Date.now();
  const done = (status: string): void => metric(logger, 'timer', 'sync_duration', (Date.now() - started) / 1000, { stream, status });
  try {
    const result = await sync(started);
    done('succeeded');
    return result;
  } catch (error) {
    done('failed');
    throw error;
  }
}
