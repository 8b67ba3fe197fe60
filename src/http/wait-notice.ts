/**
 * Notices while the tap waits for the server: a server that accepts and
 * never answers must not make a run that is silent until request_timeout.
 */

/** How often a wait is announced, unless a client is told otherwise (tests use less). */
export const WAIT_NOTICE_MS = 30_000;

/** Milliseconds as seconds for a log line: whole seconds in practice, tenths for the short intervals of tests. */
export function waitedSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

/** A configured limit in seconds, as the user set it (to the millisecond). */
export function limitSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}

/** Settles as `waiting` does, calling `notice` with the time waited every `noticeMs` until then. */
export async function announcingWait<T>(waiting: Promise<T>, noticeMs: number, notice: (waitedMs: number) => void): Promise<T> {
  const startedAt = Date.now();
  const timer = setInterval(() => notice(Date.now() - startedAt), noticeMs);
  try {
    return await waiting;
  } finally {
    clearInterval(timer);
  }
}

/**
 * One wait with a limit: `notice` every `noticeMs`, `expire` once `limitMs`
 * passed. One timer at a time, re-armed at each notice, so a wait shorter than
 * the notice interval (every chunk of a healthy body) costs one timer, as a
 * plain timeout would. Returns the function that ends the wait.
 */
export function limitedWait(limitMs: number, noticeMs: number, notice: (waitedMs: number) => void, expire: () => void): () => void {
  // Time waited is counted in the steps armed, not read from the clock: a timer that fires a millisecond early cannot skip the expiry.
  let waited = 0;
  let step = Math.min(noticeMs, limitMs);
  const tick = (): void => {
    waited += step;
    if (waited >= limitMs) return expire();
    notice(waited);
    step = Math.min(noticeMs, limitMs - waited);
    timer = setTimeout(tick, step);
  };
  let timer = setTimeout(tick, step);
  return () => clearTimeout(timer);
}
