import { DAY_MS } from '../dates.js';
import type { GenerationExpectation, GenerationOrigin } from './generation-file.js';
import { Lineage } from './lineage.js';

/**
 * Which of a stream's generations a run removes once its state went out,
 * wherever they live (a folder, a bucket: `Shelf`). Lineage (lineage.ts)
 * removes what the run's own pipeline can no longer name; two rules remove
 * the rest of what a run cannot tell whose it is (another pipeline's, with
 * its own state; a run's whose state was lost; a test's), so that the
 * generations of a stream stay bounded however many runs start without a
 * state:
 *
 *   - a generation no run has used for `retentionDays` (written, or named
 *     again by a run that sent nothing) goes: a pipeline that has not run for
 *     that long makes a full pass on its next run, as after a lost store;
 *   - of the lone roots of the run's own stream and fingerprint
 *     (generations built on none that nothing was built on: what a run
 *     without a usable state writes, until its pipeline's next run builds on
 *     it, which it always does: stream-store.ts commit), the
 *     `LONE_ROOTS_KEPT` written last stay, with the run's own: ten runs
 *     without a state leave three generations. A pipeline whose first
 *     generation is pushed out so (by three runs of the same config without
 *     a state between its first and second run) makes a full pass on its
 *     next run. Other configs' roots are other pipelines': only their age
 *     removes them.
 */

/** Lone roots of other runs a run keeps beside its own generation. */
export const LONE_ROOTS_KEPT = 2;

/** The shortest time a generation no run used is kept: a monthly pipeline's stays. */
const MIN_RETENTION_DAYS = 60;

/** Days a generation no run used is kept: twice the longest pass interval, at least MIN_RETENTION_DAYS. */
export function retentionDays(settings: { full_pass_interval_days: number; change_pass_interval_days: number }): number {
  return Math.max(MIN_RETENTION_DAYS, 2 * settings.full_pass_interval_days, 2 * settings.change_pass_interval_days);
}

/** A generation where the stream's generations live: when a run last used it, and its header (undefined: it cannot be read). */
export interface ShelvedGeneration {
  readonly generation: string;
  readonly usedMs: number;
  readonly header: GenerationOrigin | undefined;
}

/** What a run tidies after its state went out. */
export interface TidyRun {
  /** The stream and fingerprint of the run. */
  readonly own: GenerationExpectation;
  /** The generation the incoming state named, and the one this run's state names. */
  readonly incoming: string | undefined;
  readonly written: string;
  readonly now: number;
  readonly retentionDays: number;
  /**
   * Headers the run knows of generations that may live elsewhere (the
   * incoming one, fetched from the state; the one it wrote): a chain that
   * moved from a bucket or the folder into the state is followed back into
   * the place it left, whose generations then go by lineage, not by age.
   */
  readonly known?: ReadonlyMap<string, GenerationOrigin>;
}

/** The generations of `shelved` (every one of the stream there) that the run removes. */
export function unneeded(shelved: readonly ShelvedGeneration[], run: TidyRun): string[] {
  const headers = new Map<string, GenerationOrigin | undefined>(run.known ?? []);
  for (const s of shelved) headers.set(s.generation, s.header ?? headers.get(s.generation));
  const lineage = Lineage.of((generation) => headers.get(generation), run.incoming, run.own);
  const kept = (s: ShelvedGeneration): boolean => s.generation === run.incoming || s.generation === run.written;
  const superseded = shelved.filter((s) => !kept(s) && lineage.superseded(s.generation));
  const others = shelved.filter((s) => !kept(s) && !superseded.includes(s));
  const stale = others.filter((s) => run.now - s.usedMs > run.retentionDays * DAY_MS);
  const builtOn = new Set(shelved.map((s) => s.header?.parent).filter((p) => typeof p === 'string'));
  const ours = (header: GenerationOrigin | undefined): boolean => header?.stream === run.own.stream && header.fingerprint === run.own.fingerprint;
  const loneRoots = others.filter((s) => ours(s.header) && s.header?.parent === null && !builtOn.has(s.generation) && !stale.includes(s)).sort((a, b) => b.usedMs - a.usedMs);
  return [...superseded, ...stale, ...loneRoots.slice(LONE_ROOTS_KEPT)].map((s) => s.generation);
}
