import { describe, expect, it } from 'vitest';
import { backoffDelay, connectRetryDelay, MAX_BACKOFF_MS, parseRetryAfter, retryDelay } from '../../src/http/backoff.js';

describe('retry timing', () => {
  it('grows exponentially with full jitter and a cap', () => {
    expect(backoffDelay(0, 1000, () => 0.999)).toBe(999);
    expect(backoffDelay(3, 1000, () => 0.5)).toBe(4000);
    expect(backoffDelay(3, 1000, () => 0)).toBe(0);
    expect(backoffDelay(30, 1000, () => 0.999)).toBeLessThan(MAX_BACKOFF_MS);
  });

  it('reads Retry-After as seconds or as an HTTP-date', () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter(new Date(now + 30_000).toUTCString(), now)).toBe(30_000);
    expect(parseRetryAfter(new Date(now - 30_000).toUTCString(), now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('waits at least as long as the server asks', () => {
    expect(retryDelay(0, 1000, 5000, () => 0.5)).toBe(5000);
    expect(retryDelay(4, 1000, 100, () => 0.5)).toBe(8000);
    expect(retryDelay(1, 1000, undefined, () => 0.25)).toBe(500);
  });
});

describe('retrying a host that has not answered yet (connect_retry_seconds)', () => {
  it('waits the backoff\'s own delay while the budget has room for it', () => {
    expect(connectRetryDelay(0, 0, 15_000, 1000, () => 0.5)).toBe(500);
    expect(connectRetryDelay(3, 2000, 15_000, 1000, () => 0.5)).toBe(4000);
  });

  it('cuts the last wait to what is left, so the last try falls at the end of the budget, not sooner by chance of the jitter', () => {
    expect(connectRetryDelay(4, 12_000, 15_000, 1000, () => 0.999)).toBe(3000);
    expect(connectRetryDelay(5, 14_990, 15_000, 1000, () => 0.5)).toBe(10);
  });

  it('gives up once the budget is spent, or at once when it is 0', () => {
    expect(connectRetryDelay(5, 15_000, 15_000, 1000, () => 0.5)).toBeUndefined();
    expect(connectRetryDelay(6, 15_300, 15_000, 1000, () => 0)).toBeUndefined();
    expect(connectRetryDelay(0, 0, 0, 1000, () => 0.5)).toBeUndefined();
  });

  it('counts no retries: a raised budget keeps trying, each wait at most the backoff\'s cap', () => {
    expect(connectRetryDelay(40, 100_000, 600_000, 1000, () => 0.999)).toBeLessThan(MAX_BACKOFF_MS);
    expect(connectRetryDelay(40, 100_000, 600_000, 1000, () => 0.999)).toBeGreaterThan(MAX_BACKOFF_MS - 100);
  });
});
