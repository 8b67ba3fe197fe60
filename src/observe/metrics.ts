import type { Logger } from './log.js';

/**
 * Singer metrics, in the layout Meltano and singer-python use: a log line
 * `METRIC: {"type": ..., "metric": ..., "value": ..., "tags": {...}}`
 * (in JSON logs, the same object as the line's `metric` member: log.ts).
 */
export type MetricType = 'counter' | 'timer';

export function metric(logger: Logger, type: MetricType, name: string, value: number, tags: Record<string, string | number | boolean>): void {
  logger.metric({ type, metric: name, value, tags });
}

const COUNTER_INTERVAL_MS = 60_000;

/** A counter (record_count, rows_read) emitted at most once a minute during a long dump, and once at the end. */
export class RecordCounter {
  private count = 0;
  private lastReport = Date.now();

  constructor(
    private readonly logger: Logger,
    private readonly stream: string,
    private readonly name = 'record_count',
  ) {}

  add(n: number): void {
    this.count += n;
    const now = Date.now();
    if (now - this.lastReport >= COUNTER_INTERVAL_MS) this.flush(now);
  }

  flush(now = Date.now()): void {
    if (this.count > 0) metric(this.logger, 'counter', this.name, this.count, { stream: this.stream });
    this.count = 0;
    this.lastReport = now;
  }
}
