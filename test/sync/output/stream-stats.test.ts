import { afterEach, describe, expect, it, vi } from 'vitest';
import { StreamStats, timedSync } from '../../../src/sync/output/stream-stats.js';
import { createLogger, type LogLevel } from '../../../src/observe/log.js';

function collecting() {
  const lines: Array<{ level: LogLevel; message: string }> = [];
  return { lines, logger: createLogger({ level: 'debug', sink: (level, message) => lines.push({ level, message }) }) };
}

const allMetrics = (lines: Array<{ message: string }>) =>
  lines.filter((l) => l.message.startsWith('METRIC: ')).map((l) => JSON.parse(l.message.slice('METRIC: '.length)) as { metric: string; value: number; tags: Record<string, unknown> });
/** The record_count metrics (rows_read goes beside them: its own test). */
const metrics = (lines: Array<{ message: string }>) => allMetrics(lines).filter((m) => m.metric === 'record_count');

afterEach(() => vi.useRealTimers());

describe('stream statistics', () => {
  it('counts bytes and records, and sends record_count once a minute and at the end, never twice for one record', () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    const { lines, logger } = collecting();
    const stats = new StreamStats(logger, 'training');
    stats.chunk(100, 10);
    expect(metrics(lines)).toEqual([]);
    vi.setSystemTime(new Date('2026-01-01T00:01:00Z'));
    stats.chunk(50, 25);
    expect(metrics(lines).map((m) => [m.metric, m.value, m.tags])).toEqual([['record_count', 25, { stream: 'training' }]]);
    stats.chunk(50, 30);
    stats.finish(31);
    expect(metrics(lines).map((m) => m.value)).toEqual([25, 6]);
    vi.setSystemTime(new Date('2026-01-01T00:01:05Z'));
    expect(stats.summary(2, false, '2025-01-01T00:00:00Z')).toEqual({ stream: 'training', records: 31, read: 31, invalidSkipped: 2, notModified: false, bookmark: '2025-01-01T00:00:00Z', durationMs: 65_000, bytes: 200 });
  });

  it('counts in record_count the records sent, not the rows read, in rows_read the rows read, and the delete records as a record_count of their own tagged deleted; the summary says both', () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    const { lines, logger } = collecting();
    let sent = 0;
    const stats = new StreamStats(logger, 'training', () => sent);
    sent = 2;
    stats.chunk(100, 40);
    vi.setSystemTime(new Date('2026-01-01T00:01:00Z'));
    sent = 3;
    stats.chunk(50, 90);
    expect(allMetrics(lines).map((m) => [m.metric, m.value, m.tags])).toEqual([
      ['record_count', 3, { stream: 'training' }],
      ['rows_read', 90, { stream: 'training' }],
    ]);
    sent = 5;
    stats.finish(100, 4);
    expect(allMetrics(lines).slice(2).map((m) => [m.metric, m.value, m.tags])).toEqual([
      ['record_count', 2, { stream: 'training' }],
      ['rows_read', 10, { stream: 'training' }],
      ['record_count', 4, { stream: 'training', deleted: true }],
    ]);
    expect(stats.sent).toBe(9);
    expect(stats.summary(0, false, null)).toMatchObject({ records: 9, read: 100 });
  });

  it('reports skips at their levels: invalid records warn, unchanged boundary records inform, records before the window are debug', () => {
    const { lines, logger } = collecting();
    const stats = new StreamStats(logger, 'phishing');
    stats.report({ invalidSkipped: 0, duplicatesSkipped: 0, outOfRange: 0 });
    expect(lines).toEqual([]);
    stats.report({ invalidSkipped: 3, duplicatesSkipped: 2, outOfRange: 7 });
    expect(lines).toEqual([
      { level: 'warn', message: 'phishing: skipped 3 invalid records (on_invalid_record=skip)' },
      { level: 'info', message: 'phishing: skipped 2 records at the bookmark that were already emitted unchanged' },
      { level: 'debug', message: 'phishing: 7 records before the incremental window were not emitted' },
    ]);
  });

  it('times a stream sync with its outcome, and lets its error through', async () => {
    const { lines, logger } = collecting();
    await expect(timedSync(logger, 'training', async () => 42)).resolves.toBe(42);
    await expect(timedSync(logger, 'phishing', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(allMetrics(lines).map((m) => [m.metric, m.tags])).toEqual([
      ['sync_duration', { stream: 'training', status: 'succeeded' }],
      ['sync_duration', { stream: 'phishing', status: 'failed' }],
    ]);
  });
});
