import { formatInstant } from '../dates.js';
import { metric, RecordCounter } from '../observe/metrics.js';
import { ProgressLine } from '../observe/progress.js';
import type { Logger } from '../observe/log.js';

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
  records: number;
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
 * One stream's counts while it syncs: records and bytes, the record_count
 * metric (at most once a minute, and at the end), the live progress line,
 * and the end-of-stream log lines and summary.
 */
export class StreamStats {
  records = 0;
  bytes = 0;
  private counted = 0;
  private readonly started = Date.now();
  private readonly counter: RecordCounter;
  private readonly progress: ProgressLine;

  constructor(
    private readonly logger: Logger,
    private readonly stream: string,
  ) {
    this.counter = new RecordCounter(logger, stream);
    this.progress = new ProgressLine(stream, { slot: logger.status });
  }

  /** A chunk was read; `records` emitted so far. */
  chunk(bytes: number, records: number): void {
    this.bytes += bytes;
    this.records = records;
    this.flushCount();
    this.progress.update(this.records, this.bytes);
  }

  /** The dump was read, `records` emitted: the last count goes out and the progress line goes away. */
  finish(records: number): void {
    this.records = records;
    this.progress.clear();
    this.flushCount();
    this.counter.flush();
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
    return { stream: this.stream, records: this.records, invalidSkipped, notModified, bookmark, durationMs: Date.now() - this.started, bytes: this.bytes, ...detail };
  }

  private flushCount(): void {
    this.counter.add(this.records - this.counted);
    this.counted = this.records;
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
