/** Requests allowed per credential and window. */
export interface RateLimit {
  readonly requests: number;
  readonly windowSeconds: number;
}

export type RateDecision = { readonly allowed: true; readonly remaining: number } | { readonly allowed: false; readonly retryAfterSeconds: number };

/** Fixed-window counter per credential key (a hash of the token, never the token itself). */
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(private readonly limit: RateLimit) {
    if (!(Number.isInteger(limit.requests) && limit.requests > 0) || !(limit.windowSeconds > 0)) {
      throw new Error(`invalid rate limit ${JSON.stringify(limit)}: requests and windowSeconds must be positive`);
    }
  }

  check(key: string, nowMs: number): RateDecision {
    const windowMs = this.limit.windowSeconds * 1000;
    let w = this.windows.get(key);
    if (!w || nowMs - w.start >= windowMs) {
      w = { start: nowMs, count: 0 };
      this.windows.set(key, w);
    }
    if (w.count >= this.limit.requests) {
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((w.start + windowMs - nowMs) / 1000)) };
    }
    w.count++;
    return { allowed: true, remaining: this.limit.requests - w.count };
  }
}
