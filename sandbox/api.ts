import type { ChangeResult } from './dataset.js';
import type { DayChanges } from './churn.js';
import type { Faults } from './faults.js';
import type { SandboxOptions } from './options.js';
import type { DumpFormat } from '../src/catalog/reports.js';

/** What a running sandbox offers its owner (tests, the demo, the CLI, the admin endpoints). */

/** Counters of dump-endpoint traffic (admin requests are not counted). */
export interface SandboxStats {
  /** Requests received on dump paths, whatever their outcome. */
  requests: number;
  /** Responses by status code. */
  byStatus: Record<string, number>;
  /** Responses failed on purpose by `failRate`. */
  injectedFailures: number;
  /** Connections cut on purpose by `dropAfterBytes`. */
  dropped: number;
}

/** A dump request the sandbox answered past its filter check: the stream, the format and its filters by name. */
export interface DumpRequestSeen {
  stream: string;
  format: DumpFormat;
  filters: Record<string, string>;
}

/** A running sandbox. */
export interface Sandbox {
  /** Base URL, e.g. `http://127.0.0.1:41234` (no trailing slash). */
  readonly url: string;
  readonly port: number;
  /** The options in force, defaults filled in. */
  readonly options: Readonly<SandboxOptions>;
  /** True when no token was configured and DEMO_TOKEN is accepted. */
  readonly usingDemoToken: boolean;
  /** Number of requests received on dump paths (same as `stats().requests`). */
  readonly requestCount: number;
  /** Stops listening, cuts open connections and removes pre-rendered files. */
  close(): Promise<void>;
  /**
   * Adds `count` records whose replication-key values (training completedAt,
   * phishing sentAt) lie strictly after every existing one; moves Last-Modified.
   */
  append(stream: string, count: number): ChangeResult;
  /**
   * Changes up to `count` existing records: training rows get completed (new,
   * later completedAt); phishing rows get openedAt/clickedAt/reportedAt (sentAt
   * unchanged). Moves Last-Modified when anything changed.
   */
  update(stream: string, count: number): ChangeResult;
  /**
   * Advances the organisation by `days` simulated days (churn.ts): joiners,
   * progress, completions, corrections, reassignments, new phishing waves,
   * late events and leavers, each day on the next calendar day. Returns what
   * each day changed.
   */
  simulateDays(days: number): DayChanges[];
  /**
   * Makes `change` just before the `request`-th dump request from now is
   * served (1: the next): the source changes between two reads of a client,
   * as a live service's may.
   */
  beforeRequest(request: number, change: () => void): void;
  /** Changes fault injection settings at run time (merged; restarts the fault PRNG). */
  setFaults(faults: Partial<Faults>): Faults;
  faults(): Faults;
  /** The stream's Last-Modified (whole seconds). */
  lastModified(stream: string): Date;
  /** The last (at most 100) dump requests that passed the filter check, oldest first. */
  requestsSeen(): DumpRequestSeen[];
  /** Names of the reports served. */
  streams(): string[];
  /** Current number of records in the stream. */
  recordCount(stream: string): number;
  stats(): SandboxStats;
  resetStats(): void;
  /**
   * The records the JSONL dump carries, same order and values, with the same
   * filter semantics. Keys may be `completedAt` or `filter[completedAt]`;
   * values as in the query (`>=2024-05-01`). Throws FilterError on bad filters.
   */
  records(stream: string, filters?: Readonly<Record<string, string>>): Iterable<Record<string, unknown>>;
  /** The exact body of an (uncompressed) dump response, built in memory: for small datasets in tests. */
  dump(stream: string, format: DumpFormat, filters?: Readonly<Record<string, string>>): string;
}
