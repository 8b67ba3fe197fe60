import { Rng, hashInts } from './prng.js';

/** Fault injection settings; everything off by default. Applies to dump endpoints only. */
export interface Faults {
  /** Fraction (0..1) of dump requests answered with one of `failStatuses` instead of data. */
  failRate: number;
  /** Statuses picked (uniformly) for failed requests. */
  failStatuses: number[];
  /** Retry-After seconds sent with injected 503 answers; null sends none. */
  retryAfterSeconds: number | null;
  /** Cut the connection after this many body bytes: a number, or [min, max] drawn per request; null: never. */
  dropAfterBytes: number | readonly [number, number] | null;
  /** Fraction (0..1) of dump responses that get cut when `dropAfterBytes` is set. */
  dropRate: number;
  /** Delay before anything is answered, in milliseconds. */
  latencyMs: number;
  /** Throttles response bodies to this rate; null: unthrottled. */
  bodyBytesPerSecond: number | null;
  /** Seed of the PRNG deciding which requests fail or get cut. */
  seed: number;
  /** Filter names the service refuses: a request carrying one is answered 400 (a service that does not know the filter). */
  rejectFilters: string[];
}

export const DEFAULT_FAULTS: Faults = {
  failRate: 0,
  failStatuses: [500, 503],
  retryAfterSeconds: null,
  dropAfterBytes: null,
  dropRate: 1,
  latencyMs: 0,
  bodyBytesPerSecond: null,
  seed: 1,
  rejectFilters: [],
};

/** What happens to one request. */
export interface FaultDecision {
  readonly failStatus: number | null;
  readonly dropAfterBytes: number | null;
}

function checkFraction(name: string, v: number): void {
  if (!(v >= 0 && v <= 1)) throw new Error(`${name} must be between 0 and 1, got ${v}`);
}

export function validateFaults(f: Faults): void {
  checkFraction('failRate', f.failRate);
  checkFraction('dropRate', f.dropRate);
  if (f.failStatuses.length === 0 || f.failStatuses.some((s) => !Number.isInteger(s) || s < 400 || s > 599)) {
    throw new Error(`failStatuses must be a non-empty list of 4xx/5xx statuses, got ${JSON.stringify(f.failStatuses)}`);
  }
  if (!Array.isArray(f.rejectFilters) || f.rejectFilters.some((name) => typeof name !== 'string' || name === '')) {
    throw new Error(`rejectFilters must be a list of filter names, got ${JSON.stringify(f.rejectFilters)}`);
  }
  if (f.latencyMs < 0) throw new Error('latencyMs must be >= 0');
  if (f.bodyBytesPerSecond !== null && !(f.bodyBytesPerSecond > 0)) throw new Error('bodyBytesPerSecond must be > 0');
  if (f.retryAfterSeconds !== null && !(Number.isInteger(f.retryAfterSeconds) && f.retryAfterSeconds >= 0)) {
    throw new Error('retryAfterSeconds must be a non-negative integer');
  }
  const d = f.dropAfterBytes;
  if (d !== null) {
    const [lo, hi] = typeof d === 'number' ? [d, d] : d;
    if (!(Number.isInteger(lo) && Number.isInteger(hi) && lo >= 0 && hi >= lo)) {
      throw new Error(`dropAfterBytes must be K or [min, max] with 0 <= min <= max, got ${JSON.stringify(d)}`);
    }
  }
}

/** Parses `K` or `MIN-MAX` (CLI syntax of --drop-after-bytes). */
export function parseByteRange(text: string): number | [number, number] {
  const m = /^(\d+)(?:-(\d+))?$/.exec(text.trim());
  if (!m) throw new Error(`invalid byte count or range ${JSON.stringify(text)}: expected K or MIN-MAX`);
  return m[2] === undefined ? Number(m[1]) : [Number(m[1]), Number(m[2])];
}

/**
 * Decides faults from a PRNG seeded with `faults.seed`: the n-th dump request
 * after the last `set` always gets the same decision.
 */
export class FaultInjector {
  private faults: Faults = { ...DEFAULT_FAULTS };
  private rng = new Rng(hashInts(DEFAULT_FAULTS.seed));

  constructor(initial: Partial<Faults> = {}) {
    this.set(initial);
  }

  get current(): Faults {
    return { ...this.faults, failStatuses: [...this.faults.failStatuses], rejectFilters: [...this.faults.rejectFilters] };
  }

  /** Merges `changes` into the settings and restarts the PRNG. */
  set(changes: Partial<Faults>): Faults {
    const next: Faults = { ...this.faults, ...changes };
    validateFaults(next);
    this.faults = next;
    this.rng = new Rng(hashInts(next.seed >>> 0));
    return this.current;
  }

  decide(): FaultDecision {
    const f = this.faults;
    // Always draw the same number of values, so one setting does not shift another's sequence.
    const failRoll = this.rng.next();
    const statusRoll = this.rng.next();
    const dropRoll = this.rng.next();
    const bytesRoll = this.rng.next();
    const failStatus = failRoll < f.failRate ? f.failStatuses[Math.floor(statusRoll * f.failStatuses.length)] : null;
    let dropAfterBytes: number | null = null;
    if (f.dropAfterBytes !== null && dropRoll < f.dropRate) {
      const [lo, hi] = typeof f.dropAfterBytes === 'number' ? [f.dropAfterBytes, f.dropAfterBytes] : f.dropAfterBytes;
      dropAfterBytes = lo + Math.floor(bytesRoll * (hi - lo + 1));
    }
    return { failStatus, dropAfterBytes };
  }
}
