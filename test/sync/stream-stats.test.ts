import { afterEach, describe, expect, it, vi } from 'vitest';
import { StreamStats, timedSync } from '../../src/sync/stream-stats.js';
import { createLogger, type LogLevel } from '../../src/observe/log.js';

function collecting() {
  const lines: Array<{ level: LogLevel; message: string }> = [];
  return { lines, logger: createLogger({ level: 'debug', sink: (level, message) => lines.push({ level, message }) }) };
}

const metrics = (lines: Array<{ message: string }>) =>
  lines.filter((l) => l.message.startsWith('METRIC: ')).map((l) => JSON.parse(l.message.slice('METRIC: '.length)) as { metric: string; value: number; tags: Record<string, unknown> });

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
    expect(stats.summary(2, false, '2025-01-01T00:00:00Z')).toEqual({ stream: 'training', records: 31, invalidSkipped: 2, notModified: false, bookmark: '2025-01-01T00:00:00Z', durationMs: 65_000, bytes: 200 });
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
    expect(metrics(lines).map((m) => [m.metric, m.tags])).toEqual([
      ['sync_duration', { stream: 'training', status: 'succeeded' }],
      ['sync_duration', { stream: 'phishing', status: 'failed' }],
    ]);
  });
});
