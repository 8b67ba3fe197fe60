import { join } from 'node:path';
import { fs } from '../builtins.js';
import { DAY_MS } from '../dates.js';
import { type GenerationExpectation, type GenerationHeader, generationFileName, readGenerationHeader } from './generation-file.js';

/**
 * How long the store keeps what no state of a run's own pipeline names: the
 * generations of other chains, seen by a run that cannot tell whose they are
 * (another pipeline's, with its own state; a run's whose state was lost; a
 * test's). Lineage (lineage.ts) removes what a pipeline's own state can no
 * longer name; this removes the rest, by two rules, so that a stream's
 * folder stays bounded however many runs start without a state:
 *
 *   - a generation no run has used for `retentionDays` (its file's time:
 *     written, or named again by a run that sent nothing, change-store.ts
 *     keepOnly) goes: a pipeline that has not run for that long makes a full
 *     pass on its next run, as after a lost store;
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

interface Known {
  generation: string;
  usedMs: number;
  /** Its header, when it can be read. */
  header: GenerationHeader | undefined;
}

/**
 * Of `candidates` (generations of `folder` that the run's own chain does not
 * hold), those to remove now; `present`: every generation in the folder
 * (whatever was built on a candidate is among them); `own`: the run's stream
 * and fingerprint.
 */
export function unneeded(folder: string, candidates: readonly string[], present: readonly string[], own: GenerationExpectation, now: number, retention: number): string[] {
  const known = candidates.map((generation) => knownOf(folder, generation)).filter((k): k is Known => k !== undefined);
  const stale = known.filter((k) => now - k.usedMs > retention * DAY_MS);
  const builtOn = new Set(present.map((generation) => readGenerationHeader(join(folder, generationFileName(generation)))?.parent).filter((p) => typeof p === 'string'));
  const ours = (header: GenerationHeader | undefined): boolean => header?.stream === own.stream && header.fingerprint === own.fingerprint;
  const loneRoots = known.filter((k) => ours(k.header) && k.header?.parent === null && !builtOn.has(k.generation) && !stale.includes(k)).sort((a, b) => b.usedMs - a.usedMs);
  return [...stale, ...loneRoots.slice(LONE_ROOTS_KEPT)].map((k) => k.generation);
}

function knownOf(folder: string, generation: string): Known | undefined {
  const path = join(folder, generationFileName(generation));
  try {
    return { generation, usedMs: fs.statSync(path).mtimeMs, header: readGenerationHeader(path) };
  } catch {
    // Gone meanwhile, or unreadable: nothing to judge it by.
    return undefined;
  }
}

/** Marks a generation as used now (its file's time): a run named it again without writing a new one. */
export function markUsed(folder: string, generation: string): void {
  const now = new Date();
  try {
    fs.utimesSync(join(folder, generationFileName(generation)), now, now);
  } catch {
    // Best effort: a generation whose time cannot be set is judged by its older one.
  }
}
