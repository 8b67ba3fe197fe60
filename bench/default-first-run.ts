/**
 * The default first run against the strong pipeline, for npm run bench: the
 * tap with only what a user sets (the service, the token, the dump's format
 * and compression, the log level, a store_directory), so a first run without
 * state is what a new pipeline's is: a full pass held in its spool until
 * checked, then sent with ACTIVATE_VERSION, the change store built and kept
 * where the defaults put it; against the strong pipeline (bench/strong.ts,
 * the "naive" baseline of design.md) on the same dump, in turn round by
 * round. Each round starts with a new empty store_directory. Target (issue
 * 37): at least 1.0 times the strong pipeline's records/s.
 */
import { rmSync } from 'node:fs';
import type { Timed } from './change-pass.js';
import { median } from './median.js';

export interface DefaultFirstRunSetup {
  /** The strong pipeline's command line on the training JSONL dump. */
  strong: string[];
  /** The tap's command line: a sync of training JSONL with the user's settings and `storeDirectory`. */
  tap: string[];
  storeDirectory: string;
  measure(args: string[]): Promise<Timed>;
  log(line: string): void;
}

export interface DefaultFirstRunRow {
  records: number;
  tapRecordsPerSecond: number;
  strongRecordsPerSecond: number;
  /** Median of the rounds' ratios of the tap's records/s to the strong pipeline's. */
  tapOverStrong: number;
  tapPeakMiB: number;
  strongPeakMiB: number;
}

/** The run was a first run's full pass that activated its version and sent every record; the strong pipeline sent them all too. */
function checkRuns(tap: Timed, strong: Timed, records: number): void {
  const sent = /: (\d+) records in .*; full pass \(first run\), version \d+ activated/.exec(tap.stderr);
  if (sent === null || Number(sent[1]) !== records) throw new Error(`bench: the default first run was not a full pass that sent ${records} records and activated its version: ${tap.stderr.slice(-800)}`);
  const strongSent = /strong: (\d+) records/.exec(strong.stderr);
  if (strongSent === null || Number(strongSent[1]) !== records) throw new Error(`bench: the strong pipeline sent ${strongSent?.[1] ?? 'an unknown number of'} records, expected ${records}`);
}

export async function runDefaultFirstRun(setup: DefaultFirstRunSetup, records: number, rounds: number): Promise<DefaultFirstRunRow> {
  const { strong, tap, storeDirectory, measure, log } = setup;
  const firstRun = (): Promise<Timed> => {
    rmSync(storeDirectory, { recursive: true, force: true });
    return measure(tap);
  };
  await firstRun(); // warm-up
  const times = { strong: [] as Timed[], tap: [] as Timed[] };
  for (let round = 0; round < rounds; round++) {
    times.strong.push(await measure(strong));
    times.tap.push(await firstRun());
    checkRuns(times.tap.at(-1)!, times.strong.at(-1)!, records);
    log(`  default first run round ${round + 1}: tap ${times.tap.at(-1)!.seconds.toFixed(2)} s, strong ${times.strong.at(-1)!.seconds.toFixed(2)} s`);
  }
  rmSync(storeDirectory, { recursive: true, force: true });
  const perSecond = (ms: readonly Timed[]): number => records / median(ms.map((m) => m.seconds));
  const peak = (ms: readonly Timed[]): number => Math.max(...ms.map((m) => m.maxRssKiB)) / 1024;
  return {
    records,
    tapRecordsPerSecond: perSecond(times.tap),
    strongRecordsPerSecond: perSecond(times.strong),
    tapOverStrong: median(times.tap.map((run, round) => times.strong[round].seconds / run.seconds)),
    tapPeakMiB: peak(times.tap),
    strongPeakMiB: peak(times.strong),
  };
}

/** The report's line. */
export function defaultFirstRunLine(row: DefaultFirstRunRow, f: (n: number | undefined, digits?: number) => string): string {
  return (
    `default first run (no state; a full pass held in its spool, sent with ACTIVATE_VERSION, the change store built), training jsonl, ${f(row.records)} rows: ` +
    `${f(row.tapRecordsPerSecond)} records/s against ${f(row.strongRecordsPerSecond)} for the strong pipeline; tap/strong ${f(row.tapOverStrong, 2)} (median of the rounds' ratios); peak ${f(row.tapPeakMiB, 1)} MiB (strong ${f(row.strongPeakMiB, 1)})`
  );
}

export function defaultFirstRunTargets(row: DefaultFirstRunRow | undefined): Record<string, { value: number; target: string }> {
  return row === undefined ? {} : { defaultFirstRunOverStrong: { value: row.tapOverStrong, target: '>= 1.0' } };
}
