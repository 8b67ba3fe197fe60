/** Retry timing: exponential backoff with full jitter, and the server's Retry-After. */

export const MAX_BACKOFF_MS = 60_000;

/** Node's timers hold at most 2^31 - 1 ms (about 24.8 days); a longer wait would fire at once. No wait here is longer. */
export const MAX_WAIT_MS = 2 ** 31 - 1;

/** Delay before retry number `attempt` (0-based): uniform in [0, min(cap, base * 2^attempt)]. */
export function backoffDelay(attempt: number, baseMs: number, random: () => number = Math.random, capMs = MAX_BACKOFF_MS): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** attempt);
  return Math.floor(random() * ceiling);
}

/** Retry-After as milliseconds from `now`: delta-seconds or an HTTP-date. Undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** The server's wish wins when it asks for longer than our jittered delay. */
export function retryDelay(attempt: number, baseMs: number, retryAfterMs: number | undefined, random?: () => number): number {
  const jittered = backoffDelay(attempt, baseMs, random);
  return retryAfterMs === undefined ? jittered : Math.max(retryAfterMs, jittered);
}

/**
 * The wait before the next try at a host that has not answered yet (its name
 * does not resolve, nothing accepts connections), or undefined once
 * connect_retry_seconds is spent. The count of retries does not matter here,
 * only the time: the backoff's own delay, cut to what is left of the budget,
 * so the last try falls at its end and a run fails after about the budget,
 * not sooner by chance of the jitter.
 */
export function connectRetryDelay(retry: number, elapsedMs: number, budgetMs: number, baseMs: number, random?: () => number): number | undefined {
  const left = budgetMs - elapsedMs;
  if (left <= 0) return undefined;
  return Math.min(backoffDelay(retry, baseMs, random), left);
}
