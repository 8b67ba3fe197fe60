import { setTimeout as sleep } from 'node:timers/promises';

/** Spaces request starts at least `intervalMs` apart, across every stream of a run. */
export class RequestPacer {
  private nextStart = 0;

  constructor(private readonly intervalMs: number) {}

  async wait(): Promise<void> {
    if (this.intervalMs <= 0) return;
    const now = Date.now();
    const start = Math.max(now, this.nextStart);
    this.nextStart = start + this.intervalMs;
    if (start > now) await sleep(start - now);
  }
}
