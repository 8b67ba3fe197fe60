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
 * The trio runs once for each home a generation can live in (src/store/homes.ts):
 *
 * - the folder (store_directory), which keeps it between runs;
 * - a bucket (store_url, s3rver on loopback: bench/s3-bucket.ts);
 * - the state (the default state_store_max_kb): only a store of up to about
 *   120,000 rows fits, so bench/run.ts gives this trio a sandbox of its own.
 *
 * The folder and the bucket are pinned to their home (state_store_max_kb 0:
 * a small --records would fit in the state). With the bucket or the state,
 * every store run starts with a new empty store_directory, as a container
 * does, so a change pass fetches its generation from its home. Each run is
 * checked to be what it stands for: the first run sent every row and left
 * its generation in its home, the change pass's state names that home, and
 * the change pass sent nothing.
 *
 * Reported: each one's time over the plain sync's, its peak RSS, and the
 * bytes a row where the store lives (the generation's file or object; the
 * whole state for the state). Targets at 1,000,000 rows: the change pass
 * within 160 MiB and 1.3 times the plain sync (issues 29, 37); a first run
 * within 1.10 times the plain sync (issue 37); at most 48 bytes a row on
 * disk (issue 29), 16 in the state (issue 37).
 */
import { spawn } from 'node:child_process';
import { readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StoreRecord } from '../src/state.js';
import { median } from './median.js';
import { type BenchBucket, fileBytes } from './s3-bucket.js';

/** What a program's run measured (bench/run.ts measure). */
export interface Timed {
  seconds: number;
  maxRssKiB: number;
  stderr: string;
}

/** Where the trio's store runs keep their generations. */
export type StoreHome = { name: 'folder' } | { name: 'bucket'; bucket: BenchBucket } | { name: 'state' };
type HomeName = StoreHome['name'];

export interface ChangePassRow {
  home: HomeName;
  records: number;
  plainSeconds: number;
  firstRunOverPlain: number;
  changePassOverPlain: number;
  plainPeakMiB: number;
  firstRunPeakMiB: number;
  changePassPeakMiB: number;
  /** Bytes a row where the store lives: the generation's file or object, or the whole state the change pass received. */
  storeBytesPerRow: number;
}

export interface ChangePassSetup {
  cli: string;
  work: string;
  /** Config and catalog files of a training-only JSONL sync with these settings (bench/run.ts tapFiles). */
  files(name: string, settings: Record<string, unknown>): { config: string; catalog: string };
  /** Times a program; `env` is added to the environment. */
  measure(args: string[], env?: Record<string, string>): Promise<Timed>;
  log(line: string): void;
}

/** The last STATE line a sync prints, its other output thrown away. */
function lastState(cli: string, args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cli, args, { stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, ...env } });
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
function dueState(stateLine: string): { value: unknown; store: StoreRecord & { rows: number } } {
  const state = (JSON.parse(stateLine) as { value: { bookmarks: Record<string, { full_pass?: { at: string }; change_pass?: unknown; store?: StoreRecord & { rows: number } }> } }).value;
  const training = state.bookmarks.training;
  training.full_pass!.at = new Date(Date.now() - 2 * 86_400_000).toISOString();
  delete training.change_pass;
  return { value: state, store: training.store! };
}

/** What the store runs add to the config: the folder and the bucket pinned to their home, the state at the default state_store_max_kb. */
function homeSettings(home: StoreHome): Record<string, unknown> {
  if (home.name === 'bucket') return { store_url: home.bucket.url, state_store_max_kb: 0 };
  return home.name === 'folder' ? { state_store_max_kb: 0 } : {};
}

/** Where a state's store record says its generation lives. */
function homeOf(store: StoreRecord): HomeName {
  if (typeof store.data === 'string') return 'state';
  return typeof store.url === 'string' ? 'bucket' : 'folder';
}

/** Whether a store folder holds a generation (a first run in the state or a bucket leaves none there). */
function holdsGeneration(folder: string): boolean {
  try {
    return readdirSync(folder, { recursive: true, encoding: 'utf8' }).some((name) => name.endsWith('.gen'));
  } catch {
    return false;
  }
}

/** Bytes of the store where it lives, for the change pass's state `due` written at `statePath`. */
function storeBytes(home: StoreHome, folder: string, store: StoreRecord, statePath: string): number {
  if (home.name === 'state') return statSync(statePath).size;
  const end = `${store.generation}.gen`;
  return home.name === 'bucket' ? home.bucket.objectBytes(end) : fileBytes(folder, end);
}

/** A sync's summary line says it sent `records` records. */
function checkSent(what: string, run: Timed, records: number): void {
  const sent = /: (\d+) records in /.exec(run.stderr);
  if (sent === null || Number(sent[1]) !== records) throw new Error(`bench: the ${what} sent ${sent?.[1] ?? 'an unknown number of'} records, expected ${records}: ${run.stderr.slice(-800)}`);
}

/** The change pass ran as one: every row read and found unchanged, none sent. */
function checkChangePass(run: Timed, records: number): void {
  const pass = /: 0 records in .*; change pass; (\d+) rows read, (\d+) unchanged not sent/.exec(run.stderr);
  if (pass === null || Number(pass[1]) !== records || Number(pass[2]) !== records) throw new Error(`bench: the change pass did not run as one over ${records} unchanged rows: ${run.stderr.slice(-800)}`);
}

export async function runChangePass(setup: ChangePassSetup, home: StoreHome, records: number, rounds: number): Promise<ChangePassRow> {
  const { cli, work, files, measure, log } = setup;
  const env = home.name === 'bucket' ? home.bucket.env : {};
  const stores = { first: join(work, `${home.name}-store-first`), pass: join(work, `${home.name}-store-pass`) };
  const store = homeSettings(home);
  const plain = files(`${home.name}-change-plain`, { send_changes_only: false });
  const first = files(`${home.name}-change-first`, { send_changes_only: true, store_directory: stores.first, ...store });
  const pass = files(`${home.name}-change-pass`, { send_changes_only: true, store_directory: stores.pass, full_pass_interval_days: 30, ...store });
  const sync = (f: { config: string; catalog: string }, more: string[] = []): string[] => [cli, 'sync', '--config', f.config, '--catalog', f.catalog, ...more];
  // Away from the folder, every run of the pass's pipeline starts with a new empty store folder, as in a container.
  const newContainer = (): void => {
    if (home.name !== 'folder') rmSync(stores.pass, { recursive: true, force: true });
  };
  // The change pass's store and state, once: a first run, then its pipeline's second run, which builds on the
  // first generation (a lone root: store/retention.ts) even with nothing to send; later runs write nothing.
  const statePath = join(work, `${home.name}-change-pass-state.json`);
  newContainer();
  writeFileSync(statePath, JSON.stringify(dueState(await lastState(cli, sync(pass).slice(1), env)).value));
  newContainer();
  const due = dueState(await lastState(cli, sync(pass, ['--state', statePath]).slice(1), env));
  writeFileSync(statePath, JSON.stringify(due.value));
  if (homeOf(due.store) !== home.name) throw new Error(`bench: the change pass's state keeps its store in the ${homeOf(due.store)}, not in the ${home.name}`);
  const bytes = storeBytes(home, stores.pass, due.store, statePath);
  await measure(sync(plain)); // warm-up
  const times = { plain: [] as Timed[], first: [] as Timed[], pass: [] as Timed[] };
  for (let round = 0; round < rounds; round++) {
    times.plain.push(await measure(sync(plain)));
    checkSent('plain sync', times.plain.at(-1)!, records);
    rmSync(stores.first, { recursive: true, force: true });
    times.first.push(await measure(sync(first), env));
    checkSent('first run', times.first.at(-1)!, records);
    if (holdsGeneration(stores.first) !== (home.name === 'folder')) throw new Error(`bench: the first run did not keep its generation in the ${home.name}`);
    newContainer();
    times.pass.push(await measure(sync(pass, ['--state', statePath]), env));
    checkChangePass(times.pass.at(-1)!, records);
    log(`  change store in the ${home.name} round ${round + 1}: plain ${times.plain.at(-1)!.seconds.toFixed(2)} s, first run ${times.first.at(-1)!.seconds.toFixed(2)} s, change pass ${times.pass.at(-1)!.seconds.toFixed(2)} s`);
  }
  const over = (ms: Timed[]): number => median(ms.map((m, round) => m.seconds / times.plain[round].seconds));
  const peak = (ms: Timed[]): number => Math.max(...ms.map((m) => m.maxRssKiB)) / 1024;
  rmSync(stores.first, { recursive: true, force: true });
  rmSync(stores.pass, { recursive: true, force: true });
  return {
    home: home.name,
    records,
    plainSeconds: median(times.plain.map((m) => m.seconds)),
    firstRunOverPlain: over(times.first),
    changePassOverPlain: over(times.pass),
    plainPeakMiB: peak(times.plain),
    firstRunPeakMiB: peak(times.first),
    changePassPeakMiB: peak(times.pass),
    storeBytesPerRow: bytes / due.store.rows,
  };
}

/** How the report's line names each home, and what its bytes a row are of. */
const HOME_LINES: Record<HomeName, { where: string; bytes: string }> = {
  folder: { where: 'in the folder', bytes: 'the generation on disk' },
  bucket: { where: 'in a bucket (s3rver on loopback; a new empty store_directory every run)', bytes: 'the generation in the bucket' },
  state: { where: 'in the state (a sandbox of its own of at most 100,000 rows: a larger store does not fit; a new empty store_directory every run)', bytes: 'the state' },
};

/** The report's line. */
export function changePassLine(row: ChangePassRow, f: (n: number | undefined, digits?: number) => string): string {
  const { where, bytes } = HOME_LINES[row.home];
  return `change store ${where}, training jsonl, ${f(row.records)} rows: a first run (every row sent and noted) ${f(row.firstRunOverPlain, 2)}x the plain sync's time, peak ${f(row.firstRunPeakMiB, 1)} MiB; a change pass in which nothing changed ${f(row.changePassOverPlain, 2)}x, peak ${f(row.changePassPeakMiB, 1)} MiB (plain ${f(row.plainSeconds, 2)} s, ${f(row.plainPeakMiB, 1)} MiB); ${bytes} ${f(row.storeBytesPerRow, 1)} bytes a row`;
}

/** Each home's targets, named after it (folderChangePassTimeOverPlain, …). */
export function changePassTargets(rows: readonly ChangePassRow[]): Record<string, { value: number; target: string }> {
  return Object.fromEntries(
    rows.flatMap((row) => [
      [`${row.home}ChangePassTimeOverPlain`, { value: row.changePassOverPlain, target: '<= 1.3' }],
      [`${row.home}ChangePassPeakRssMiB`, { value: row.changePassPeakMiB, target: '<= 160' }],
      [`${row.home}FirstRunTimeOverPlain`, { value: row.firstRunOverPlain, target: '<= 1.10' }],
      [`${row.home}StoreBytesPerRow`, { value: row.storeBytesPerRow, target: row.home === 'state' ? '<= 16' : '<= 48' }],
    ]),
  );
}
