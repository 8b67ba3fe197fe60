import type { TokenGrant } from './auth.js';
import type { Faults } from './faults.js';
import type { RateLimit } from './rate-limit.js';
import type { StreamModel } from './model.js';
import type { LayoutName } from './layout.js';
import type { OrderName } from './order.js';

/** A report the sandbox serves besides training and phishing: its data model and initial size. */
export interface ServedReport {
  readonly model: StreamModel;
  readonly records: number;
}

/** Settings of a sandbox; every field has a default (see DEFAULT_OPTIONS). */
export interface SandboxOptions {
  /** Seed of the synthetic data: same seed, same bytes. */
  seed: number;
  /** Initial number of training records. */
  trainingRecords: number;
  /** Initial number of phishing records. */
  phishingRecords: number;
  /** Interface to listen on. */
  host: string;
  /** TCP port; 0 picks a free one. */
  port: number;
  /** Accepted bearer tokens; empty: only DEMO_TOKEN, with every scope. */
  tokens: readonly TokenGrant[] | ReadonlyMap<string, readonly string[]>;
  /** Per-credential limit on dump requests; null: unlimited. */
  rateLimit: RateLimit | null;
  /** Initial fault injection settings (all off by default). */
  faults: Partial<Faults>;
  /** Serve unfiltered dumps from files rendered once per data version. */
  prerender: boolean;
  /** With `prerender`, also keep gzip-compressed files for `Accept-Encoding: gzip`. */
  prerenderGzip: boolean;
  /** Offset used to write dates in records (`Z`, `+02:00`, `-05:30`): same instants, other notation. */
  dateOffset: string;
  /** Field names, date notation, boolean words and CSV delimiter of the records served (see layout.ts). */
  layout: LayoutName;
  /** IANA time zone of the dates the snake layout writes without a zone, and of the days a date alone names in its filters. */
  layoutTimeZone: string;
  /** Sequence of the rows in every dump (see order.ts): `generated` (default), `ascending`, `descending`, `shuffled` or `grouped`. */
  order: OrderName;
  /** Add the undeclared field `department` to every record (after `groupId`). */
  extraFields: boolean;
  /** More reports to serve, each at its descriptor's path (the in-process API only). */
  extraReports: readonly ServedReport[];
  /** Simulated days of churn applied before the first request (see churn.ts). */
  simulateDays: number;
  /**
   * A day `YYYY-MM-DD` the synthetic history ends before, whatever the clock
   * (placement.ts); FIXED_ANCHOR gives the dates of before. null: the dates
   * end the day before `now`.
   */
  anchor: string | null;
  /** The sandbox's clock at start, which the dates end before when there is no anchor; null: the wall clock. */
  now: Date | null;
  /** Log one line per request. */
  verbose: boolean;
  /** Receives log lines (default: stderr). Never receives tokens. */
  log: (line: string) => void;
}

export const DEFAULT_OPTIONS: SandboxOptions = {
  seed: 1,
  trainingRecords: 2000,
  phishingRecords: 2000,
  host: '127.0.0.1',
  port: 0,
  tokens: [],
  rateLimit: null,
  faults: {},
  prerender: false,
  prerenderGzip: false,
  dateOffset: 'Z',
  layout: 'packaged',
  layoutTimeZone: 'UTC',
  order: 'generated',
  extraFields: false,
  extraReports: [],
  simulateDays: 0,
  anchor: null,
  now: null,
  verbose: false,
  log: (line) => process.stderr.write(line + '\n'),
};

export function tokenGrants(tokens: SandboxOptions['tokens']): TokenGrant[] {
  if (Array.isArray(tokens)) return [...(tokens as readonly TokenGrant[])];
  return [...(tokens as ReadonlyMap<string, readonly string[]>)].map(([token, scopes]) => ({ token, scopes }));
}

export function validateCounts(options: SandboxOptions): void {
  for (const [name, v] of [
    ['seed', options.seed],
    ['trainingRecords', options.trainingRecords],
    ['phishingRecords', options.phishingRecords],
    ['simulateDays', options.simulateDays],
  ] as const) {
    if (!Number.isSafeInteger(v) || v < 0) throw new Error(`${name} must be a non-negative integer, got ${v}`);
  }
}
