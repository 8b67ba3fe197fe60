/**
 * What the change store costs a run, for npm run bench: three programs on the
 * same training dump, in turn round by round so drift cancels in the ratios:
 *
 * - a plain sync (every row to stdout, no store): the baseline;
 * - a first run with the store (a full pass: every row sent and noted, the
 *   generation written), each round from an empty store;
 * - a change pass in which nothing changed (the whole dump read, every row
 *   compared with the store, none sent, no generation written), each round
 *   from the state a second run left, made due (a pipeline's second run
 *   writes a generation even with nothing to send; later ones do not).
 *
 * Reported: each one's time over the plain sync's, its peak RSS, and the
 * store's bytes a row on disk. Issue 29's targets at 1,000,000 rows: the
 * change pass within 160 MiB and 1.3 times the plain sync; at most 48 bytes a row.
 */
import { spawn } from 'node:child_process';
import { readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What a program's run measured (bench/run.ts measure). */
export interface Timed {
  seconds: number;
  maxRssKiB: number;
  stderr: string;
}

export interface ChangePassRow {
  records: number;
  plainSeconds: number;
  firstRunOverPlain: number;
  changePassOverPlain: number;
  plainPeakMiB: number;
  firstRunPeakMiB: number;
  changePassPeakMiB: number;
  storeBytesPerRow: number;
}

export interface ChangePassSetup {
  cli: string;
  work: string;
  /** Config and catalog files of a training-only JSONL sync with these settings (bench/run.ts tapFiles). */
  files(name: string, settings: Record<string, unknown>): { config: string; catalog: string };
  measure(args: string[]): Promise<Timed>;
  log(line: string): void;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** The last STATE line a sync prints, its other output thrown away. */
function lastState(cli: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cli, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    let last = '';
    let rest = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString('utf8')).split('\n');
      rest = lines.pop()!;
      for (const line of lines) if (line.startsWith('{"type":"STATE"')) last = line;
    });
    child.on('close', (code) => (code === 0 && last !== '' ? resolve(last) : reject(new Error(`bench: ${args.join(' ')} exited ${code}`))));
  });
}

/** The state made due for a change pass: its last pass two days ago. */
function dueState(stateLine: string): { value: unknown; rows: number; generation: string } {
  const state = (JSON.parse(stateLine) as { value: { bookmarks: Record<string, { full_pass?: { at: string }; change_pass?: unknown; store?: { generation: string; rows: number } }> } }).value;
  const training = state.bookmarks.training;
  training.full_pass!.at = new Date(Date.now() - 2 * 86_400_000).toISOString();
  delete training.change_pass;
  return { value: state, rows: training.store!.rows, generation: training.store!.generation };
}

function storeBytes(folder: string, generation: string): number {
  const file = readdirSync(folder, { recursive: true, encoding: 'utf8' }).find((name) => name.endsWith(`${generation}.gen`));
  return file === undefined ? Number.NaN : statSync(join(folder, file)).size;
}

export async function runChangePass(setup: ChangePassSetup, records: number, rounds: number): Promise<ChangePassRow> {
  const { cli, work, files, measure, log } = setup;
  const stores = { first: join(work, 'store-first'), pass: join(work, 'store-pass') };
  const plain = files('change-plain', { send_changes_only: false });
  const first = files('change-first', { send_changes_only: true, store_directory: stores.first });
  const pass = files('change-pass', { send_changes_only: true, store_directory: stores.pass, full_pass_interval_days: 30 });
  const sync = (f: { config: string; catalog: string }, more: string[] = []): string[] => [cli, 'sync', '--config', f.config, '--catalog', f.catalog, ...more];
  // The change pass's store and state, once: a first run, then its pipeline's second run, which builds on the
  // first generation (a lone root: store/retention.ts) even with nothing to send; later runs write nothing.
  const statePath = join(work, 'change-pass-state.json');
  writeFileSync(statePath, JSON.stringify(dueState(await lastState(cli, sync(pass).slice(1))).value));
  const due = dueState(await lastState(cli, sync(pass, ['--state', statePath]).slice(1)));
  writeFileSync(statePath, JSON.stringify(due.value));
  const bytes = storeBytes(stores.pass, due.generation);
  await measure(sync(plain)); // warm-up
  const times = { plain: [] as Timed[], first: [] as Timed[], pass: [] as Timed[] };
  for (let round = 0; round < rounds; round++) {
    times.plain.push(await measure(sync(plain)));
    rmSync(stores.first, { recursive: true, force: true });
    times.first.push(await measure(sync(first)));
    const run = await measure(sync(pass, ['--state', statePath]));
    if (!/change pass/.test(run.stderr) || !/(\d+) unchanged not sent/.test(run.stderr)) throw new Error(`bench: the change pass did not run as one: ${run.stderr.slice(-800)}`);
    times.pass.push(run);
    log(`  change store round ${round + 1}: plain ${times.plain.at(-1)!.seconds.toFixed(2)} s, first run ${times.first.at(-1)!.seconds.toFixed(2)} s, change pass ${run.seconds.toFixed(2)} s`);
  }
  const over = (ms: Timed[]): number => median(ms.map((m, round) => m.seconds / times.plain[round].seconds));
  const peak = (ms: Timed[]): number => Math.max(...ms.map((m) => m.maxRssKiB)) / 1024;
  rmSync(stores.first, { recursive: true, force: true });
  rmSync(stores.pass, { recursive: true, force: true });
  return {
    records,
    plainSeconds: median(times.plain.map((m) => m.seconds)),
    firstRunOverPlain: over(times.first),
    changePassOverPlain: over(times.pass),
    plainPeakMiB: peak(times.plain),
    firstRunPeakMiB: peak(times.first),
    changePassPeakMiB: peak(times.pass),
    storeBytesPerRow: bytes / due.rows,
  };
}

/** The report's line. */
export function changePassLine(row: ChangePassRow, f: (n: number | undefined, digits?: number) => string): string {
  return `change store, training jsonl, ${f(row.records)} rows: a first run (every row sent and noted) ${f(row.firstRunOverPlain, 2)}x the plain sync's time, peak ${f(row.firstRunPeakMiB, 1)} MiB; a change pass in which nothing changed ${f(row.changePassOverPlain, 2)}x, peak ${f(row.changePassPeakMiB, 1)} MiB (plain ${f(row.plainSeconds, 2)} s, ${f(row.plainPeakMiB, 1)} MiB); the store ${f(row.storeBytesPerRow, 1)} bytes a row`;
}

export function changePassTargets(row: ChangePassRow | undefined): Record<string, { value: number; target: string }> {
  if (row === undefined) return {};
  return {
    changePassTimeOverPlain: { value: row.changePassOverPlain, target: '<= 1.3' },
    changePassPeakRssMiB: { value: row.changePassPeakMiB, target: '<= 160' },
    storeBytesPerRow: { value: row.storeBytesPerRow, target: '<= 48' },
  };
}

