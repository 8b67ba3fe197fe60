import type { FullPassPlan, RunPlan } from '../plan/read-plans.js';
import type { ReadResult } from '../run-state.js';
import type { SourceCheck } from './source-check.js';

/**
 * Whether a full pass may activate its table version, decided once all its
 * reads are done. Targets delete every row the pass did not send when they
 * read ACTIVATE_VERSION, so the pass activates only when it provably holds
 * every row the source has: each read answered 200 with its whole dump, and
 * nothing hints that a row is missing. Pure: the stream's sync logs the
 * reason a pass is withheld, and records the baseline the verdict names.
 */

/** What the pass's reads amounted to, beside their results. */
export interface PassFacts {
  /** Records the pass emitted (all its reads). */
  readonly rows: number;
  /** Invalid records skipped (on_invalid_record: skip): their rows would be deleted. */
  readonly invalidSkipped: number;
  /** Reads the service refused, which the run went on without (their rows would be deleted). */
  readonly refused: readonly string[];
  /** The full_pass_min_ratio setting. */
  readonly minRatio: number;
  /** Whether the pass's reads saw one unchanged source (source-check.ts); undefined: they did, or it is one read. */
  readonly source?: SourceCheck;
}

export interface PassVerdict {
  /** The version ACTIVATE_VERSION makes current; absent: the pass sends its records without it. */
  readonly activated?: number;
  /** Why a pass that might have activated did not (a sentence after "…, so the target deletes nothing: "). */
  readonly withheld?: string;
  /** Rows the next pass is held against; absent: the last baseline stays. */
  readonly baseline?: number;
  /** The pass's reads saw the source change while they ran: reading it again may let it activate. */
  readonly retry?: boolean;
}

/**
 * Why the reads of a pass cannot prove that a row they did not see is gone,
 * or undefined when they can. `moved`: the source changed while they ran
 * (reading again may help).
 */
function unproven(facts: PassFacts): { reason: string; moved?: true } | undefined {
  if (facts.rows === 0) return { reason: 'the dump held no records (an empty dump never empties the warehouse)' };
  if (facts.refused.length > 0) return { reason: `the service refused the ${facts.refused.join(' and ')} read, and the rows it would have held must not be deleted for it` };
  if (facts.invalidSkipped > 0) return { reason: `${facts.invalidSkipped} invalid records were skipped (on_invalid_record: skip), and their rows must not be deleted for it` };
  const source = facts.source;
  if (source?.kind === 'unknown') return { reason: `${source.detail}, so the tap cannot tell that they saw one unchanged source, and a row that changed between them may be in none (without start_date a pass is one read)` };
  if (source !== undefined) return { reason: `${source.detail}, so a row that changed between its reads may be in none`, moved: true };
  return undefined;
}

export function passVerdict(run: RunPlan, results: readonly ReadResult[], facts: PassFacts): PassVerdict {
  const pass = run.fullPass;
  if (pass?.version === undefined) return pass === undefined ? {} : { baseline: facts.rows };
  // A read answered 304 holds nothing: such a pass is no pass (its state change records none).
  if (results.some((r) => r.outcome.status !== 200)) return {};
  const { rows } = facts;
  const withheld = (reason: string, more: Pick<PassVerdict, 'baseline' | 'retry'> = {}): PassVerdict => ({ withheld: reason, ...more });
  const why = unproven(facts);
  if (why?.moved) return withheld(why.reason, { retry: true });
  if (why !== undefined) return withheld(why.reason);
  if (pass.baselineMissing) {
    return withheld(`the state shows the table was loaded before but holds no row count of an earlier pass to judge ${rows} rows by; ${rows} is now that count, and the next pass activates if it holds at least full_pass_min_ratio (${facts.minRatio}) of it`, { baseline: rows });
  }
  if (!mayActivate(pass, rows, facts.minRatio)) {
    return withheld(`the last full pass held ${pass.previousRows} records, and ${rows} is fewer than full_pass_min_ratio (${facts.minRatio}) of that. If the source really shrank, lower full_pass_min_ratio for one run.`);
  }
  return { activated: pass.version, baseline: rows };
}

/** Whether a full pass that read `rows` may activate its version: not when it holds far fewer rows than the last one (a truncated or filtered dump). */
export function mayActivate(pass: FullPassPlan, rows: number, minRatio: number): boolean {
  return pass.previousRows === undefined || rows >= minRatio * pass.previousRows;
}

/** Whether a change pass may send delete records for the rows it did not see: the reason it may not, or undefined. */
export function deletionWithheld(facts: PassFacts & { readonly held: number }): string | undefined {
  const why = unproven(facts);
  if (why !== undefined) return why.moved ? `${why.reason}. The next change pass tries again` : why.reason;
  if (facts.rows < facts.minRatio * facts.held) {
    return `the target holds ${facts.held} rows, and the pass read ${facts.rows}, fewer than full_pass_min_ratio (${facts.minRatio}) of that. If the source really shrank, lower full_pass_min_ratio for one run.`;
  }
  return undefined;
}
