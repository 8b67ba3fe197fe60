/**
 * npm run bench: whole-process measurements of full syncs against the sandbox
 * serving pre-rendered bytes, alternating the tap with three references on the
 * same bytes (the download floor, the readline pipeline and the strong
 * byte-splitting pipeline) so machine drift cancels out. Every main variant
 * runs on four orders of the same records (one sandbox per order: ascending
 * and descending by the replication key, shuffled, grouped by user). Prints
 * figures and ratios; writes bench/results.json.
 *
 * Further sandboxes serve the same records in other layouts (Title Case with
 * yes/no; snake_case with zone-less dates in Europe/Berlin; keys named in
 * settings with epoch dates); the tap discovers each live and is timed
 * against the packaged layout, the two alternating round by round; so is a
 * run with e-mail pseudonymised, one in BATCH mode (records into gzip files)
 * against RECORD messages, and a full pass with ACTIVATE_VERSION (its
 * records held in a spool until checked) against the same sync without and
 * the strong pipeline, the three in turn round by round. The change store
 * is timed against a plain sync with the store in each of its homes (the
 * folder, a bucket on s3rver, the state: bench/change-pass.ts), and a first
 * run with the defaults against the strong pipeline
 * (bench/default-first-run.ts).
 * The syncs timed are whole-dump syncs as the daily runs make them (no
 * versions): the full pass is timed in its trio.
 *
 * Options: bench/args.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, closeSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createInterface } from 'node:readline';
import { tapSettingsFor } from '../sandbox/layout.js';
import { FIXED_ANCHOR } from '../sandbox/placement.js';
import { parseArgs, type Args, type Order } from './args.js';
import { changePassLine, changePassTargets, runChangePass, type ChangePassRow, type StoreHome } from './change-pass.js';
import { defaultFirstRunLine, defaultFirstRunTargets, runDefaultFirstRun, type DefaultFirstRunRow } from './default-first-run.js';
import { median } from './median.js';
import { startBucket } from './s3-bucket.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');
const CLI = join(ROOT, 'dist', 'src', 'bin', 'tap.js');
const RSS = join(HERE, 'rss.js');
const TOKEN = 'demo-token';

const log = (line: string): void => void process.stderr.write(`${line}\n`);

interface Sandbox {
  url: string;
  process: ChildProcess;
}

async function startSandbox(records: number, extra: string[] = []): Promise<Sandbox> {
  const child = spawn(
    process.execPath,
    // The fixed anchor: the same bytes whatever the day, so that runs compare (and no start-up read to place the dates).
    [CLI, 'sandbox', '--port', '0', '--anchor', FIXED_ANCHOR, '--prerender', '--prerender-gzip', '--training-records', String(records), '--phishing-records', String(records), ...extra],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout! });
  for await (const line of lines) {
    if (line.startsWith('http://')) return { url: line.trim(), process: child };
  }
  throw new Error('bench: the sandbox did not print its URL');
}

interface Measurement {
  seconds: number;
  maxRssKiB: number;
  stderr: string;
}

/**
 * Runs one process with stdout to /dev/null and measures wall time and peak
 * RSS. The tap runs as its bin (with the Node flags of its shebang), the
 * references as plain `node script`. `extraEnv` is added to the environment.
 */
async function measure(args: string[], extraEnv: Record<string, string> = {}): Promise<Measurement> {
  const devNull = openSync('/dev/null', 'w');
  const started = process.hrtime.bigint();
  const env = { ...process.env, ...extraEnv, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${RSS}` };
  const [command, ...rest] = args[0] === CLI ? args : [process.execPath, ...args];
  const child = spawn(command, rest, { stdio: ['ignore', devNull, 'pipe'], env });
  const chunks: Buffer[] = [];
  child.stderr!.on('data', (c: Buffer) => chunks.push(c));
  const code: number = await new Promise((resolve) => child.on('close', (c) => resolve(c ?? 1)));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  closeSync(devNull);
  const stderr = Buffer.concat(chunks).toString();
  if (code !== 0) throw new Error(`bench: ${args.join(' ')} exited ${code}: ${stderr.slice(-2000)}`);
  const rss = /BENCH_MAX_RSS_KB (\d+)/.exec(stderr);
  return { seconds, maxRssKiB: rss ? Number(rss[1]) : Number.NaN, stderr };
}

interface Variant {
  name: string;
  stream: 'training' | 'phishing';
  format: 'jsonl' | 'csv';
  gzip: boolean;
  /** Also time the readline and the strong pipeline (JSONL only: they parse JSON). */
  baselines: boolean;
}

const work = mkdtempSync(join(tmpdir(), 'tap-bench-'));
// Configs, catalogs and stores of the runs: gone with the bench, however it ends.
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

/** The sandbox layout of the layout runs, and the settings that read it. */
interface BenchLayout {
  name: string;
  /** What sets it apart, for the log. */
  what: string;
  args: string[];
  settings: Record<string, unknown>;
}

/** Layouts the packaged schemas do not use: other names, yes/no and `;` (title); also zone-less dates to convert, three a record (snake). */
const LAYOUTS: readonly BenchLayout[] = [
  { name: 'title', what: 'Title Case names, yes/no booleans, ; in CSV', args: ['--layout', 'title'], settings: {} },
  { name: 'snake', what: 'snake_case names, dates without a zone in Europe/Berlin', args: ['--layout', 'snake', '--layout-timezone', 'Europe/Berlin'], settings: tapSettingsFor('snake', 'Europe/Berlin') },
  { name: 'epoch', what: 'key and replication fields named in settings, epoch-millisecond dates, Y/N, | in CSV', args: ['--layout', 'epoch'], settings: tapSettingsFor('epoch') },
];

/**
 * The timed syncs read the whole dump as the daily runs read it, RECORD lines straight to stdout: without state a run is a full pass,
 * which holds its records in a spool until the pass is known good (runFullPass times that against this).
 * Without the change store: every row goes out (bench/change-pass.ts times the store against this).
 */
const DAILY_SYNC = { emit_activate_version_messages: false, send_changes_only: false };

/** Config and catalog of a sync of the variant's stream alone: what a user sets, `base` (DAILY_SYNC unless told), then `settings`. */
function tapFiles(url: string, variant: Variant, catalogFile = 'catalog.json', settings: Record<string, unknown> = {}, base: Record<string, unknown> = DAILY_SYNC): { config: string; catalog: string } {
  const config = join(work, `${variant.name}-config.json`);
  writeFileSync(config, JSON.stringify({ base_url: url, access_token: TOKEN, format: variant.format, compression: variant.gzip ? 'gzip' : 'none', log_level: 'warn', ...base, ...settings }));
  const catalog = JSON.parse(readFileSync(join(work, catalogFile), 'utf8')) as { streams: Array<{ tap_stream_id: string; metadata: Array<{ breadcrumb: string[]; metadata: Record<string, unknown> }> }> };
  for (const stream of catalog.streams) {
    const top = stream.metadata.find((m) => m.breadcrumb.length === 0)!;
    top.metadata.selected = stream.tap_stream_id === variant.stream;
  }
  const catalogPath = join(work, `${variant.name}-catalog.json`);
  writeFileSync(catalogPath, JSON.stringify(catalog));
  return { config, catalog: catalogPath };
}

function dumpUrl(url: string, variant: Variant): string {
  return `${url}/public/v1/report/${variant.stream}/dump.${variant.format}`;
}

interface Summary {
  seconds: number;
  recordsPerSecond: number;
  mbPerSecond: number;
  maxRssMiB: number;
}

interface Row {
  order: string;
  variant: string;
  records: number;
  bytes: number;
  tap: Summary;
  readline?: Summary;
  strong?: Summary;
  floor: Summary;
  /** Median of the rounds' ratios of tap records/s to the reference's (each round times all of them in turn, so drift cancels). */
  ratios: { tapOverReadline?: number; tapOverStrong?: number; tapOverFloor: number };
  /** The tap's seconds in each round: the training variants of an order share their rounds, so they compare round by round too. */
  tapSeconds: number[];
}

type Program = 'floor' | 'readline' | 'strong' | 'tap';
const BASELINE_SCRIPTS: ReadonlyArray<[Program, string]> = [
  ['readline', 'naive.js'],
  ['strong', 'strong.js'],
];

/** The command lines a round of a variant times, in turn: the floor, the baselines, the tap. */
function programs(url: string, variant: Variant): Map<Program, string[]> {
  const files = tapFiles(url, variant);
  const key = variant.stream === 'training' ? 'completedAt' : 'sentAt';
  const encoding = variant.gzip ? 'gzip' : 'none';
  const commands = new Map<Program, string[]>([['floor', [join(HERE, 'floor.js'), dumpUrl(url, variant), TOKEN, encoding]]]);
  if (variant.baselines) {
    for (const [program, script] of BASELINE_SCRIPTS) commands.set(program, [join(HERE, script), dumpUrl(url, variant), TOKEN, variant.stream, key, encoding]);
  }
  commands.set('tap', [CLI, 'sync', '--config', files.config, '--catalog', files.catalog]);
  return commands;
}

function summarize(ms: readonly Measurement[], records: number, bytes: number): Summary {
  const seconds = median(ms.map((m) => m.seconds));
  return { seconds, recordsPerSecond: records / seconds, mbPerSecond: bytes / 1e6 / seconds, maxRssMiB: Math.max(...ms.map((m) => m.maxRssKiB)) / 1024 };
}

/** Tap records/s over the reference's, round by round, median. */
function pairedRatio(reference: readonly Measurement[], tap: readonly Measurement[]): number {
  return median(tap.map((run, round) => reference[round].seconds / run.seconds));
}

function checkEmitted(run: Measurement, records: number): void {
  const emitted = /(\d+) records in/.exec(run.stderr);
  if (emitted && Number(emitted[1]) !== records) throw new Error(`bench: the tap emitted ${emitted[1]} records, expected ${records}`);
}

/** A variant's programs and their measurements so far. */
interface VariantRun {
  variant: Variant;
  bytes: number;
  commands: Map<Program, string[]>;
  times: Map<Program, Measurement[]>;
}

async function startVariant(url: string, variant: Variant, bytes: number): Promise<VariantRun> {
  const commands = programs(url, variant);
  await measure(commands.get('floor')!); // warm-up: renders the dump once and fills the page cache
  return { variant, bytes, commands, times: new Map([...commands.keys()].map((program) => [program, []])) };
}

/** One round of a variant: each of its programs once, in turn. */
async function runRound(run: VariantRun, order: string, round: number): Promise<void> {
  for (const [program, args] of run.commands) run.times.get(program)!.push(await measure(args));
  log(`  ${order} ${run.variant.name} round ${round + 1}: ${[...run.times].map(([program, ms]) => `${program} ${ms.at(-1)!.seconds.toFixed(2)} s`).join(', ')}`);
}

function variantRow(run: VariantRun, order: string, records: number): Row {
  const tap = run.times.get('tap')!;
  checkEmitted(tap[0], records);
  const summary = (program: Program): Summary | undefined => {
    const ms = run.times.get(program);
    return ms && summarize(ms, records, run.bytes);
  };
  const ratio = (program: Program): number | undefined => {
    const ms = run.times.get(program);
    return ms && pairedRatio(ms, tap);
  };
  return {
    order,
    variant: run.variant.name,
    records,
    bytes: run.bytes,
    tap: summary('tap')!,
    readline: summary('readline'),
    strong: summary('strong'),
    floor: summary('floor')!,
    ratios: { tapOverReadline: ratio('readline'), tapOverStrong: ratio('strong'), tapOverFloor: ratio('floor')! },
    tapSeconds: tap.map((m) => m.seconds),
  };
}

/** Variants timed round by round together: round 1 of each, then round 2 of each, … so that drift cancels between them too. */
async function runVariants(url: string, order: string, variants: ReadonlyArray<{ variant: Variant; bytes: number }>, records: number, rounds: number): Promise<Row[]> {
  const runs: VariantRun[] = [];
  for (const { variant, bytes } of variants) runs.push(await startVariant(url, variant, bytes));
  for (let round = 0; round < rounds; round++) for (const run of runs) await runRound(run, order, round);
  return runs.map((run) => variantRow(run, order, records));
}

async function runVariant(url: string, order: string, variant: Variant, records: number, rounds: number, bytes: number): Promise<Row> {
  return (await runVariants(url, order, [{ variant, bytes }], records, rounds))[0];
}

/** The main variants, run on every order. */
const VARIANTS: readonly Variant[] = [
  { name: 'training-jsonl', stream: 'training', format: 'jsonl', gzip: false, baselines: true },
  { name: 'training-csv', stream: 'training', format: 'csv', gzip: false, baselines: false },
  { name: 'training-jsonl-gzip', stream: 'training', format: 'jsonl', gzip: true, baselines: true },
  { name: 'phishing-jsonl', stream: 'phishing', format: 'jsonl', gzip: false, baselines: true },
];

/** Every main variant against a sandbox serving the records in `order`. */
async function runOrder(order: Order, args: Args): Promise<Row[]> {
  log(`bench: ${order} order: starting its sandbox (${args.records} records per stream, pre-rendered)`);
  const sandbox = await startSandbox(args.records, ['--order', order]);
  try {
    const sized: Array<{ variant: Variant; bytes: number }> = [];
    for (const variant of VARIANTS) {
      const bytes = await dumpBytes(sandbox.url, variant);
      log(`bench: ${order} ${variant.name} (${(bytes / 1e6).toFixed(0)} MB uncompressed)`);
      sized.push({ variant, bytes });
    }
    // The training variants share their rounds (CSV and gzip are compared with plain JSONL); phishing gets one round: it checks the second stream.
    const training = await runVariants(sandbox.url, order, sized.filter((v) => v.variant.stream === 'training'), args.records, args.orderRounds);
    const phishing = await runVariants(sandbox.url, order, sized.filter((v) => v.variant.stream === 'phishing'), args.records, 1);
    return [...training, ...phishing];
  } finally {
    sandbox.process.kill('SIGTERM');
  }
}

interface PairedRow {
  name: string;
  records: number;
  baselineRecordsPerSecond: number;
  variantRecordsPerSecond: number;
  /** Median of the per-round ratios variant/baseline in records/s. */
  variantOverBaseline: number;
  variantPeakMiB: number;
}

type TapFiles = { config: string; catalog: string };

/** Two syncs of the same records, timed alternately round by round so that drift cancels out. */
async function runPaired(name: string, baseline: TapFiles, variant: TapFiles, records: number, rounds: number): Promise<PairedRow> {
  const sync = (files: TapFiles) => measure([CLI, 'sync', '--config', files.config, '--catalog', files.catalog]);
  await sync(variant); // warm-up: renders the variant's dump once
  const ratios: number[] = [];
  const baselineSeconds: number[] = [];
  const variantSeconds: number[] = [];
  let variantPeakKiB = 0;
  for (let round = 0; round < rounds; round++) {
    baselineSeconds.push((await sync(baseline)).seconds);
    const run = await sync(variant);
    const emitted = /(\d+) records in/.exec(run.stderr);
    if (emitted && Number(emitted[1]) !== records) throw new Error(`bench: ${name} emitted ${emitted[1]} records, expected ${records}`);
    variantSeconds.push(run.seconds);
    variantPeakKiB = Math.max(variantPeakKiB, run.maxRssKiB);
    ratios.push(baselineSeconds.at(-1)! / run.seconds);
    log(`  ${name} round ${round + 1}: ${run.seconds.toFixed(2)} s, baseline ${baselineSeconds.at(-1)!.toFixed(2)} s`);
  }
  return {
    name,
    records,
    baselineRecordsPerSecond: records / median(baselineSeconds),
    variantRecordsPerSecond: records / median(variantSeconds),
    variantOverBaseline: median(ratios),
    variantPeakMiB: variantPeakKiB / 1024,
  };
}

const training = (format: 'jsonl' | 'csv', name: string): Variant => ({ name, stream: 'training', format, gzip: false, baselines: false });

/** The packaged layout against another one, discovered live from its own sandbox, in both formats. */
async function runLayout(packagedUrl: string, layout: BenchLayout, records: number, rounds: number): Promise<PairedRow[]> {
  log(`bench: the same records in the ${layout.name} layout (${layout.what}), discovered live`);
  const served = await startSandbox(records, layout.args);
  try {
    const catalog = `${layout.name}-catalog.json`;
    writeFileSync(join(work, catalog), await discover({ base_url: served.url, access_token: TOKEN, ...layout.settings }));
    const rows: PairedRow[] = [];
    for (const format of ['jsonl', 'csv'] as const) {
      const packaged = tapFiles(packagedUrl, training(format, `packaged-${format}`));
      const other = tapFiles(served.url, training(format, `${layout.name}-${format}`), catalog, layout.settings);
      rows.push(await runPaired(`${layout.name} layout, ${format}`, packaged, other, records, rounds));
    }
    return rows;
  } finally {
    served.process.kill('SIGTERM');
  }
}

/** Plain JSONL against the same with e-mail pseudonymised (and names dropped: the recommended setup). */
function runPersonalPair(url: string, records: number, rounds: number): Promise<PairedRow> {
  const plain = tapFiles(url, training('jsonl', 'plain-jsonl'));
  const personal = tapFiles(url, training('jsonl', 'personal-jsonl'), 'catalog.json', PERSONAL_SETTINGS);
  return runPaired('e-mail pseudonymised, jsonl', plain, personal, records, rounds);
}

/** RECORD messages against BATCH mode (gzip files of 100,000 records in the bench's work folder, removed afterwards). */
async function runBatchPair(url: string, records: number, rounds: number): Promise<PairedRow> {
  const folder = join(work, 'batches');
  const plain = tapFiles(url, training('jsonl', 'record-jsonl'));
  const batch = tapFiles(url, training('jsonl', 'batch-jsonl'), 'catalog.json', { batch_config: { encoding: { format: 'jsonl', compression: 'gzip' }, storage: { root: pathToFileURL(folder).href } } });
  try {
    return await runPaired('BATCH mode (gzip files), jsonl', plain, batch, records, rounds);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** A full pass with ACTIVATE_VERSION timed in turn with the same sync without versions and with the strong pipeline. */
interface FullPassRow {
  name: string;
  records: number;
  /** Records/s of each, from its median time. */
  heldRecordsPerSecond: number;
  plainRecordsPerSecond: number;
  strongRecordsPerSecond: number;
  /** Medians of the rounds' ratios: held records/s over the strong pipeline's, and held seconds over plain's. */
  heldOverStrong: number;
  heldTimeOverPlain: number;
  heldPeakMiB: number;
  plainPeakMiB: number;
  /** The spool's compressed size, as the held run logs it. */
  spoolMiB: number;
}

/**
 * A full pass with ACTIVATE_VERSION (its records spooled, checked, then
 * sent), the same sync without versions (records straight to stdout) and the
 * strong pipeline (lines split on bytes: the "naive" baseline of design.md
 * and issue 29), in turn round by round, so drift cancels in both ratios.
 */
async function runFullPass(url: string, records: number, rounds: number): Promise<FullPassRow> {
  const name = 'full pass with ACTIVATE_VERSION (spooled), jsonl';
  // Info: the held run logs its spool's size.
  const plain = tapFiles(url, training('jsonl', 'plain-jsonl'), 'catalog.json', { log_level: 'info' });
  const held = tapFiles(url, training('jsonl', 'full-pass-jsonl'), 'catalog.json', { log_level: 'info', emit_activate_version_messages: true });
  const variant = training('jsonl', 'strong-jsonl');
  const commands = {
    strong: [join(HERE, 'strong.js'), dumpUrl(url, variant), TOKEN, variant.stream, 'completedAt', 'none'],
    plain: [CLI, 'sync', '--config', plain.config, '--catalog', plain.catalog],
    held: [CLI, 'sync', '--config', held.config, '--catalog', held.catalog],
  };
  await measure(commands.held); // warm-up: renders the dump once and fills the page cache
  const times = { strong: [] as Measurement[], plain: [] as Measurement[], held: [] as Measurement[] };
  for (let round = 0; round < rounds; round++) {
    for (const program of ['strong', 'plain', 'held'] as const) times[program].push(await measure(commands[program]));
    checkEmitted(times.held.at(-1)!, records);
    log(`  ${name} round ${round + 1}: held ${times.held.at(-1)!.seconds.toFixed(2)} s, plain ${times.plain.at(-1)!.seconds.toFixed(2)} s, strong ${times.strong.at(-1)!.seconds.toFixed(2)} s`);
  }
  const perSecond = (ms: readonly Measurement[]): number => records / median(ms.map((m) => m.seconds));
  const peak = (ms: readonly Measurement[]): number => Math.max(...ms.map((m) => m.maxRssKiB)) / 1024;
  const spool = /held in a spool: \d+ records, ([\d.]+) MiB on disk/.exec(times.held[0].stderr);
  return {
    name,
    records,
    heldRecordsPerSecond: perSecond(times.held),
    plainRecordsPerSecond: perSecond(times.plain),
    strongRecordsPerSecond: perSecond(times.strong),
    heldOverStrong: pairedRatio(times.strong, times.held),
    heldTimeOverPlain: median(times.held.map((run, round) => run.seconds / times.plain[round].seconds)),
    heldPeakMiB: peak(times.held),
    plainPeakMiB: peak(times.plain),
    spoolMiB: spool ? Number(spool[1]) : Number.NaN,
  };
}

/** The recommended personal-data setup of the README. */
const PERSONAL_SETTINGS = { personal_data: [{ field: 'email', policy: 'hash' }, { field: 'firstName', policy: 'drop' }, { field: 'lastName', policy: 'drop' }], pseudonymisation_key: 'bench-pseudonymisation-key-0123456789abcdef' };

/** The catalog `discover` writes for a config: live discovery when the config names a service. */
async function discover(config?: Record<string, unknown>): Promise<string> {
  const args = [CLI, 'discover'];
  if (config) {
    const path = join(work, 'discover-config.json');
    writeFileSync(path, JSON.stringify(config));
    args.push('--config', path);
  }
  return new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    const out: Buffer[] = [];
    child.stdout!.on('data', (c: Buffer) => out.push(c));
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out).toString()) : reject(new Error(`bench: ${args.slice(1).join(' ')} failed`))));
  });
}

async function dumpBytes(url: string, variant: Variant): Promise<number> {
  const m = await measure([join(HERE, 'floor.js'), dumpUrl(url, variant), TOKEN, 'none']);
  return Number(/floor: (\d+) bytes/.exec(m.stderr)![1]);
}

interface SlowRun {
  gzip: boolean;
  bytesPerSecond: number;
  samplesMiB: number[];
  maxMiB: number;
  consumedMB: number;
}

/** Peak RSS of the tap while a consumer reads its stdout at `bytesPerSecond`, sampled from /proc. */
async function slowConsumer(url: string, seconds: number, bytesPerSecond: number, gzip: boolean): Promise<SlowRun> {
  const variant: Variant = { name: 'slow-consumer', stream: 'training', format: 'jsonl', gzip, baselines: false };
  const files = tapFiles(url, variant);
  const tap = spawn(CLI, ['sync', '--config', files.config, '--catalog', files.catalog], { stdio: ['ignore', 'pipe', 'ignore'] });
  const samples: number[] = [];
  let consumed = 0;
  const stdout = tap.stdout!;
  stdout.pause();
  const started = Date.now();
  while (Date.now() - started < seconds * 1000) {
    // Read at most bytesPerSecond/10 every 100 ms.
    let budget = bytesPerSecond / 10;
    for (let chunk: Buffer | null; budget > 0 && (chunk = stdout.read() as Buffer | null) !== null; ) {
      consumed += chunk.length;
      budget -= chunk.length;
    }
    await new Promise((r) => setTimeout(r, 100));
    if ((Date.now() - started) % 1000 < 100) {
      try {
        const status = readFileSync(`/proc/${tap.pid}/status`, 'utf8');
        const rss = /VmRSS:\s+(\d+) kB/.exec(status);
        if (rss) samples.push(Number(rss[1]) / 1024);
      } catch {
        break;
      }
    }
  }
  tap.kill('SIGKILL');
  return { gzip, bytesPerSecond, samplesMiB: samples.map((s) => Math.round(s)), maxMiB: Math.max(...samples), consumedMB: consumed / 1e6 };
}

interface Target {
  value: number | undefined;
  target: string;
  /** For a target met on every order: the order with the lowest value. */
  worstOrder?: string;
}

/** A variant's tap records/s over another's, the median of their rounds' ratios (they share their rounds, and their record count). */
function tapRatio(variant: Row, reference: Row): number {
  return median(variant.tapSeconds.map((seconds, round) => reference.tapSeconds[round] / seconds));
}

/** The issue's targets on one order, from that order's rows; null when a variant is missing. */
function orderTargets(rows: readonly Row[], order: string): Record<string, Target> | null {
  const find = (variant: string): Row | undefined => rows.find((r) => r.order === order && r.variant === variant);
  const [jsonl, csv, gz] = [find('training-jsonl'), find('training-csv'), find('training-jsonl-gzip')];
  if (!jsonl || !csv || !gz) return null;
  return {
    jsonlOverStrong: { value: jsonl.ratios.tapOverStrong, target: '>= 1.5 (stretch 2)' },
    jsonlOverReadline: { value: jsonl.ratios.tapOverReadline, target: '>= 1.5' },
    csvOverJsonl: { value: tapRatio(csv, jsonl), target: '>= 0.8' },
    gzipOverPlain: { value: tapRatio(gz, jsonl), target: '>= 1.0' },
  };
}

/** Each per-order target at its worst order: a target holds when it holds on every order. */
function worstOverOrders(byOrder: Record<string, Record<string, Target>>): Record<string, Target> {
  const worst: Record<string, Target> = {};
  for (const [order, targets] of Object.entries(byOrder)) {
    for (const [name, t] of Object.entries(targets)) {
      const current = worst[name];
      if (t.value !== undefined && (current?.value === undefined || t.value < current.value)) worst[name] = { ...t, worstOrder: order };
    }
  }
  return worst;
}

/** The runs on the default order: the layouts, the personal-data pair and the slow consumer. */
async function runDefaultOrder(args: Args, results: Record<string, unknown>): Promise<void> {
  log(`bench: default order: starting the sandbox with ${args.records} records per stream (pre-rendered)`);
  const sandbox = await startSandbox(args.records);
  try {
    const layouts: PairedRow[] = [];
    for (const layout of LAYOUTS) layouts.push(...(await runLayout(sandbox.url, layout, args.records, args.rounds)));
    results.layouts = layouts;
    log('bench: e-mail pseudonymised and names dropped, against plain JSONL');
    results.personal = await runPersonalPair(sandbox.url, args.records, args.rounds);
    log('bench: BATCH mode (records into gzip JSONL files) against RECORD messages');
    results.batch = await runBatchPair(sandbox.url, args.records, args.rounds);
    results.fullPass = await runFullPassOf(sandbox.url, args);
    results.changeStore = await runChangeStore(sandbox.url, args);
    if (args.slowSeconds > 0) {
      // Backpressure must reach the socket, also through the decompressor: a gzip body read at 0.7 MB/s once grew to 247 MB.
      log(`bench: slow consumer (1 MB/s plain, 0.7 MB/s gzip, ${args.slowSeconds} s each)`);
      results.slowConsumer = [await slowConsumer(sandbox.url, args.slowSeconds, 1_000_000, false), await slowConsumer(sandbox.url, args.slowSeconds, 700_000, true)];
    }
  } finally {
    sandbox.process.kill('SIGTERM');
  }
}

function runFullPassOf(url: string, args: Args): Promise<FullPassRow> {
  log('bench: a full pass with ACTIVATE_VERSION (held in a spool), the same sync without versions and the strong pipeline, in turn');
  return runFullPass(url, args.records, args.rounds);
}

/** The most rows the state home is timed with: a store of more does not fit the default state_store_max_kb (about 8.5 bytes a row, 1024 KiB). */
const STATE_HOME_RECORDS = 100_000;

interface ChangeStoreResults {
  homes: ChangePassRow[];
  defaultFirstRun: DefaultFirstRunRow;
}

/** The change store's trio with the store in each home, and the default first run against the strong pipeline. */
async function runChangeStore(url: string, args: Args): Promise<ChangeStoreResults> {
  log('bench: the change store: a plain sync, a first run with the store and a change pass in which nothing changed, in turn; the store in the folder');
  const homes = [await runChangePassOf(url, { name: 'folder' }, args.records, args.rounds)];
  log('bench: the same with the store in a bucket (s3rver), a new empty store_directory every run');
  const bucket = await startBucket(join(work, 's3rver'));
  try {
    homes.push(await runChangePassOf(url, { name: 'bucket', bucket }, args.records, args.rounds));
  } finally {
    await bucket.close();
  }
  const defaultFirstRun = await runDefaultFirstRunOf(url, args);
  const stateRecords = Math.min(args.records, STATE_HOME_RECORDS);
  log(`bench: the same with the store in the state, a new empty store_directory every run, on a sandbox of ${stateRecords} records (pre-rendered)`);
  const sandbox = await startSandbox(stateRecords);
  try {
    homes.push(await runChangePassOf(sandbox.url, { name: 'state' }, stateRecords, args.rounds));
  } finally {
    sandbox.process.kill('SIGTERM');
  }
  return { homes, defaultFirstRun };
}

function runChangePassOf(url: string, home: StoreHome, records: number, rounds: number): Promise<ChangePassRow> {
  const files = (name: string, settings: Record<string, unknown>) => tapFiles(url, training('jsonl', name), 'catalog.json', { log_level: 'info', ...settings });
  return runChangePass({ cli: CLI, work, files, measure, log }, home, records, rounds);
}

/** A first run with what a user sets (info: its summary line is checked), against the strong pipeline on the same dump. */
function runDefaultFirstRunOf(url: string, args: Args): Promise<DefaultFirstRunRow> {
  log('bench: the default first run (no state, the defaults) and the strong pipeline, in turn');
  const variant = training('jsonl', 'default-first-run');
  const storeDirectory = join(work, 'default-first-run-store');
  const files = tapFiles(url, variant, 'catalog.json', { log_level: 'info', store_directory: storeDirectory }, {});
  const strong = [join(HERE, 'strong.js'), dumpUrl(url, variant), TOKEN, variant.stream, 'completedAt', 'none'];
  const tap = [CLI, 'sync', '--config', files.config, '--catalog', files.catalog];
  return runDefaultFirstRun({ strong, tap, storeDirectory, measure, log }, args.records, args.rounds);
}

/** The full pass's trio, or the change store's runs (bench/change-pass.ts, bench/default-first-run.ts), alone on a sandbox of their own. */
async function runFullPassOnly(args: Args, results: Record<string, unknown>): Promise<void> {
  log(`bench: default order: starting the sandbox with ${args.records} records per stream (pre-rendered)`);
  const sandbox = await startSandbox(args.records);
  try {
    if (args.fullPassOnly) results.fullPass = await runFullPassOf(sandbox.url, args);
    if (args.storeOnly) results.changeStore = await runChangeStore(sandbox.url, args);
  } finally {
    sandbox.process.kill('SIGTERM');
  }
}

/** Peak RSS at `args.big` records against the training JSONL run of the main size (grouped: for training the default order's bytes). */
async function runFlatness(args: Args, rows: readonly Row[]): Promise<Record<string, unknown>> {
  log(`bench: flatness, ${args.big} records (pre-rendering takes a while)`);
  const big = await startSandbox(args.big);
  try {
    const variant: Variant = { name: 'training-jsonl-big', stream: 'training', format: 'jsonl', gzip: false, baselines: false };
    const bytes = await dumpBytes(big.url, variant);
    const row = await runVariant(big.url, 'generated', variant, args.big, 1, bytes);
    const jsonl = rows.filter((r) => r.variant === 'training-jsonl');
    const small = jsonl.find((r) => r.order === 'grouped') ?? jsonl[0];
    if (!small) return { bigRecords: args.big, bigPeakMiB: row.tap.maxRssMiB, big: row };
    return { smallRecords: args.records, smallPeakMiB: small.tap.maxRssMiB, bigRecords: args.big, bigPeakMiB: row.tap.maxRssMiB, growth: row.tap.maxRssMiB / small.tap.maxRssMiB - 1, target: '<= 0.10', big: row };
  } finally {
    big.process.kill('SIGTERM');
  }
}

function fullPassTargets(row: FullPassRow | undefined): Record<string, Target> {
  if (row === undefined) return {};
  return {
    fullPassOverStrong: { value: row.heldOverStrong, target: '>= 1.0' },
    fullPassTimeOverPlain: { value: row.heldTimeOverPlain, target: '<= 1.3' },
    fullPassPeakRssMiB: { value: row.heldPeakMiB, target: '<= 128' },
  };
}

function allTargets(results: Record<string, unknown>, rows: readonly Row[], orders: readonly Order[]): void {
  const layouts = (results.layouts as PairedRow[] | undefined) ?? [];
  const personal = results.personal as PairedRow | undefined;
  const batch = results.batch as PairedRow | undefined;
  const byOrder = Object.fromEntries(orders.flatMap((order) => {
    const targets = orderTargets(rows, order);
    return targets ? [[order, targets]] : [];
  }));
  results.targetsByOrder = byOrder;
  results.targets = {
    ...Object.fromEntries(layouts.map((row) => [`${row.name}OverPackaged`.replace(/[ ,]+(\w)/g, (_m, c: string) => c.toUpperCase()), { value: row.variantOverBaseline, target: '>= 0.9' }])),
    ...(personal ? { pseudonymisedOverPlain: { value: personal.variantOverBaseline, target: '>= 0.85' } } : {}),
    ...(batch ? { batchPeakRssMiB: { value: batch.variantPeakMiB, target: '<= 128' } } : {}),
    ...fullPassTargets(results.fullPass as FullPassRow | undefined),
    ...changePassTargets((results.changeStore as ChangeStoreResults | undefined)?.homes ?? []),
    ...defaultFirstRunTargets((results.changeStore as ChangeStoreResults | undefined)?.defaultFirstRun),
    ...worstOverOrders(byOrder),
    ...(rows.length > 0 ? { peakRssMiB: { value: Math.max(...rows.map((r) => r.tap.maxRssMiB)), target: '<= 128' } } : {}),
  };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;
  log(`bench: ${machine}`);
  const results: Record<string, unknown> = { machine, date: new Date().toISOString(), records: args.records, rounds: args.rounds, orderRounds: args.orderRounds, orders: args.orders };
  writeFileSync(join(work, 'catalog.json'), await discover());
  const rows: Row[] = [];
  const alone = args.fullPassOnly || args.storeOnly;
  if (alone) await runFullPassOnly(args, results);
  else {
    for (const order of args.orders) rows.push(...(await runOrder(order, args)));
    if (!args.mainOnly) await runDefaultOrder(args, results);
  }
  results.rows = rows;
  allTargets(results, rows, alone ? [] : args.orders);
  if (args.big > 0 && !alone) results.flatness = await runFlatness(args, rows);

  const text = JSON.stringify(results, null, 2);
  writeFileSync(join(ROOT, 'bench', 'results.json'), `${text}\n`);
  if (args.json) process.stdout.write(`${text}\n`);
  else report(results);
}

const f = (n: number | undefined, digits = 0): string => (n === undefined ? '-' : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));

function reportRows(rows: readonly Row[]): void {
  console.log('| order | variant | tap records/s | tap MB/s | tap peak RSS MiB | readline records/s | strong records/s | floor records/s | tap/readline | tap/strong | tap/floor |');
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const r of rows) {
    const figures = [r.tap.recordsPerSecond, r.tap.mbPerSecond, r.tap.maxRssMiB, r.readline?.recordsPerSecond, r.strong?.recordsPerSecond, r.floor.recordsPerSecond];
    const ratios = [r.ratios.tapOverReadline, r.ratios.tapOverStrong, r.ratios.tapOverFloor];
    console.log(`| ${r.order} | ${r.variant} | ${figures.map((n, i) => f(n, i === 1 || i === 2 ? 1 : 0)).join(' | ')} | ${ratios.map((n) => f(n, 2)).join(' | ')} |`);
  }
}

function reportTargets(results: Record<string, unknown>): void {
  console.log('\nTargets (per-order ones at their worst order):');
  for (const [name, t] of Object.entries(results.targets as Record<string, Target>)) console.log(`- ${name}: ${f(t.value, 2)} (target ${t.target})${t.worstOrder ? ` on ${t.worstOrder}` : ''}`);
  for (const [order, targets] of Object.entries(results.targetsByOrder as Record<string, Record<string, Target>>)) {
    console.log(`- ${order}: ${Object.entries(targets).map(([name, t]) => `${name} ${f(t.value, 2)}`).join(', ')}`);
  }
  for (const s of (results.slowConsumer as SlowRun[] | undefined) ?? []) {
    const what = `${s.gzip ? 'gzip' : 'plain'}, ${f(s.bytesPerSecond / 1e6, 1)} MB/s`;
    console.log(`- slow consumer (${what}): peak RSS ${f(s.maxMiB, 1)} MiB (target <= 128) over ${s.samplesMiB.length} s (samples ${s.samplesMiB.join(', ')}), ${f(s.consumedMB, 1)} MB consumed`);
  }
  if (results.flatness) {
    const fl = results.flatness as { smallRecords?: number; smallPeakMiB?: number; bigRecords: number; bigPeakMiB: number; growth?: number };
    console.log(`- flatness: peak ${f(fl.smallPeakMiB, 1)} MiB at ${f(fl.smallRecords)} records, ${f(fl.bigPeakMiB, 1)} MiB at ${f(fl.bigRecords)} records (${f(fl.growth === undefined ? undefined : fl.growth * 100, 1)} %, target <= 10 %)`);
  }
}

function report(results: Record<string, unknown>): void {
  const rows = results.rows as Row[];
  // A run of the full pass or the change store alone times no order.
  const rounds = rows.length > 0 ? `median of ${results.orderRounds} rounds on each order, ${results.rounds} for the pairs` : `median of ${results.rounds} rounds`;
  console.log(`\n${results.machine}; ${f(results.records as number)} records; ${rounds}\n`);
  if (rows.length > 0) {
    reportRows(rows);
    console.log('');
  }
  const pairs = [results.personal, results.batch].filter((row): row is PairedRow => row !== undefined);
  for (const l of [...((results.layouts as PairedRow[] | undefined) ?? []), ...pairs]) {
    console.log(`${l.name}: ${f(l.variantRecordsPerSecond)} records/s against ${f(l.baselineRecordsPerSecond)} (median ratio of paired rounds ${f(l.variantOverBaseline, 2)})`);
  }
  const full = results.fullPass as FullPassRow | undefined;
  if (full) {
    console.log(
      `${full.name}: ${f(full.heldRecordsPerSecond)} records/s against ${f(full.plainRecordsPerSecond)} for the same sync without versions and ${f(full.strongRecordsPerSecond)} for the strong pipeline; ` +
        `held/strong ${f(full.heldOverStrong, 2)}, held time/plain time ${f(full.heldTimeOverPlain, 2)} (medians of the rounds' ratios); peak RSS ${f(full.heldPeakMiB, 1)} MiB (plain ${f(full.plainPeakMiB, 1)}); spool ${f(full.spoolMiB, 1)} MiB`,
    );
  }
  const store = results.changeStore as ChangeStoreResults | undefined;
  for (const row of store?.homes ?? []) console.log(changePassLine(row, f));
  if (store) console.log(defaultFirstRunLine(store.defaultFirstRun, f));
  reportTargets(results);
  console.log('\nWritten to bench/results.json');
}

await main();
