import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { announcingWait, limitedWait, waitedSeconds } from '../../src/http/wait-notice.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('a limited wait', () => {
  it('gives a notice every interval and expires at the limit, also when the limit is not a multiple of the interval', () => {
    const notices: number[] = [];
    let expired = 0;
    limitedWait(100_000, 30_000, (waited) => notices.push(waited), () => expired++);
    vi.advanceTimersByTime(99_999);
    expect([notices, expired]).toEqual([[30_000, 60_000, 90_000], 0]);
    vi.advanceTimersByTime(1);
    expect([notices, expired]).toEqual([[30_000, 60_000, 90_000], 1]);
    vi.advanceTimersByTime(120_000);
    expect([notices.length, expired]).toEqual([3, 1]);
  });

  it('shorter than the interval: no notice, one timer, as a plain timeout', () => {
    const notices: number[] = [];
    let expired = 0;
    limitedWait(5_000, 30_000, (waited) => notices.push(waited), () => expired++);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(5_000);
    expect([notices, expired]).toEqual([[], 1]);
  });

  it('ended: neither notices nor expires, and leaves no timer', () => {
    const notices: number[] = [];
    let expired = 0;
    const end = limitedWait(100_000, 30_000, (waited) => notices.push(waited), () => expired++);
    vi.advanceTimersByTime(45_000);
    end();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(100_000);
    expect([notices, expired]).toEqual([[30_000], 0]);
  });
});

describe('an announced wait', () => {
  it('says every interval how long it has waited, until the awaited promise settles either way', async () => {
    const notices: number[] = [];
    let settle!: (value: string) => void;
    const done = announcingWait(new Promise<string>((resolve) => (settle = resolve)), 30_000, (waited) => notices.push(waited));
    await vi.advanceTimersByTimeAsync(95_000);
    settle('headers');
    await expect(done).resolves.toBe('headers');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(notices).toEqual([30_000, 60_000, 90_000]);

    const failed = announcingWait(Promise.reject(new Error('refused')), 30_000, (waited) => notices.push(waited));
    await expect(failed).rejects.toThrow('refused');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('names the time in seconds: whole seconds as such, tenths for short test intervals', () => {
    expect([waitedSeconds(30_000), waitedSeconds(300_000), waitedSeconds(30_001), waitedSeconds(160)]).toEqual(['30 s', '300 s', '30 s', '0.2 s']);
  });
});
