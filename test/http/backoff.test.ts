import { describe, expect, it } from 'vitest';
import { backoffDelay, MAX_BACKOFF_MS, parseRetryAfter, retryDelay } from '../../src/http/backoff.js';

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
