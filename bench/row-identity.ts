/**
 * Micro-benchmark of RowIdentity.read (src/records/row-identity.ts), the
 * per-record step of a change-only run: records/s and MB/s over records as
 * the tap emits them: the median of several runs in wall-clock and in CPU
 * time (the machine is shared: CPU time is less moved by the other
 * processes), and the best run. Not part of the test suite.
 *
 *   npm run build && node dist/bench/row-identity.js [--records 200000] [--runs 9] [--per-run 1000000]
 *
 * The records come from an in-process sandbox (packaged layout):
 * - training JSONL lines as served, which the tap emits as they are;
 * - the same rows from the CSV dump, encoded to JSON by the tap's CSV encoder
 *   (compact; the packaged layout makes them the same bytes: the script says so);
 * - the JSONL lines with the Airbyte face's `_ab_extracted_at` member last,
 *   excluded from the content hash.
 * Each run reads `--per-run` records (the set cycled) and times them.
 */
import { loadSchema } from '../src/catalog/schemas.js';
import { TRAINING } from '../src/catalog/reports.js';
import { CsvScanner, type CsvRow } from '../src/records/csv.js';
import { CsvRecordEncoder } from '../src/records/csv-record.js';
import { FieldTable } from '../src/records/fields.js';
import { RowIdentity } from '../src/records/row-identity.js';
import { startSandbox } from '../sandbox/server.js';
import { FIXED_ANCHOR } from '../sandbox/placement.js';

interface Args {
  records: number;
  runs: number;
  perRun: number;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { records: 200_000, runs: 9, perRun: 1_000_000 };
  for (let i = 0; i < argv.length; i++) {
    const value = Number(argv[i + 1]);
    if (argv[i] === '--records') args.records = value;
    else if (argv[i] === '--runs') args.runs = value;
    else if (argv[i] === '--per-run') args.perRun = value;
    else throw new Error(`row-identity bench: unknown option ${argv[i]}`);
    i++;
  }
  return args;
}

/** Records laid end to end in one buffer, as a chunk holds them: where each starts and ends. */
interface RecordSet {
  name: string;
  bytes: Buffer;
  starts: Int32Array;
  ends: Int32Array;
}

function recordSet(name: string, records: readonly Buffer[]): RecordSet {
  const starts = new Int32Array(records.length);
  const ends = new Int32Array(records.length);
  let p = 0;
  records.forEach((record, i) => {
    starts[i] = p;
    p += record.length + 1;
    ends[i] = p - 1;
  });
  return { name, bytes: Buffer.concat(records.flatMap((record) => [record, Buffer.from('\n')])), starts, ends };
}

function jsonlLines(text: string): Buffer[] {
  return text.split('\n').filter((line) => line !== '').map((line) => Buffer.from(line));
}

/** The CSV dump through the tap's CSV encoder, each record's JSON alone (no envelope). */
function csvRecords(text: string): Buffer[] {
  const schema = loadSchema(TRAINING.schemaFile);
  const table = new FieldTable(schema, {
    declaredFields: new Set(Object.keys(schema.properties ?? {})),
    keyProperties: TRAINING.keyProperties,
    replicationKey: TRAINING.replicationKey,
    personalFields: TRAINING.personalFields,
    onUndeclaredField: () => undefined,
  });
  const none = Buffer.alloc(0);
  const records: Buffer[] = [];
  let encoder: CsvRecordEncoder | undefined;
  const scanner = new CsvScanner(1 << 20, (row: CsvRow) => {
    if (!encoder) return void (encoder = new CsvRecordEncoder(row.texts(), table));
    encoder.inspect(row);
    const out = Buffer.alloc(encoder.maxBytes(row, none, none));
    records.push(out.subarray(0, encoder.encode(row, out, 0, none, none)));
  }, (error) => {
    throw error;
  });
  scanner.push(Buffer.from(text));
  scanner.end();
  return records;
}

function withExtractionCursor(records: readonly Buffer[]): Buffer[] {
  const member = Buffer.from(`,"_ab_extracted_at":"${new Date().toISOString()}"}`);
  return records.map((record) => Buffer.concat([record.subarray(0, record.length - 1), member]));
}

function sameRecords(a: readonly Buffer[], b: readonly Buffer[]): boolean {
  return a.length === b.length && a.every((record, i) => record.equals(b[i]));
}

interface Timing {
  /** Wall-clock seconds. */
  wall: number;
  /** Seconds of this process on a core (user and system): less moved by other processes on the machine. */
  cpu: number;
}

/** Times `count` reads over the set, cycled; throws if a record is refused. */
function timeReads(set: RecordSet, identity: RowIdentity, count: number): Timing {
  const { bytes, starts, ends } = set;
  let check = 0;
  const cpuBefore = process.cpuUsage();
  const began = process.hrtime.bigint();
  for (let n = 0, i = 0; n < count; n++, i = i + 1 === starts.length ? 0 : i + 1) {
    if (!identity.read(bytes, starts[i], ends[i])) throw new Error(`${set.name}: record ${i} refused`);
    check ^= identity.contentLo;
  }
  const wall = Number(process.hrtime.bigint() - began) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  // Keeps the hashes live, so the loop cannot be optimised away.
  if (check === 0.5) console.log(check);
  return { wall, cpu: (cpu.user + cpu.system) / 1e6 };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function report(set: RecordSet, timings: readonly Timing[], perRun: number): void {
  const bytesPerRecord = (set.bytes.length - set.starts.length) / set.starts.length;
  const line = (what: string, seconds: number): string =>
    `  ${what}: ${(perRun / seconds / 1e6).toFixed(2)} M records/s, ${((perRun * bytesPerRecord) / seconds / 1e6).toFixed(0)} MB/s, 1,000,000 records in ${((seconds * 1e6) / perRun).toFixed(3)} s`;
  console.log(`${set.name} (${bytesPerRecord.toFixed(0)} bytes/record), ${timings.length} runs of ${perRun.toLocaleString('en')} reads:`);
  console.log(line('median, wall clock', median(timings.map((t) => t.wall))));
  console.log(line('median, CPU time  ', median(timings.map((t) => t.cpu))));
  console.log(line('best run, wall    ', Math.min(...timings.map((t) => t.wall))));
}

const args = parseArgs(process.argv.slice(2));
const sandbox = await startSandbox({ anchor: FIXED_ANCHOR, trainingRecords: args.records, phishingRecords: 1, log: () => undefined });
const jsonl = jsonlLines(sandbox.dump('training', 'jsonl'));
const csv = csvRecords(sandbox.dump('training', 'csv'));
await sandbox.close();
console.log(`Node ${process.version}; ${jsonl.length} training records; CSV-encoded records ${sameRecords(jsonl, csv) ? 'are byte for byte the JSONL lines' : 'differ from the JSONL lines'}`);

const keys = TRAINING.keyProperties;
const sets = [
  { set: recordSet('training JSONL as served and emitted', jsonl), identity: new RowIdentity(keys) },
  { set: recordSet('training from CSV, as the CSV encoder emits them', csv), identity: new RowIdentity(keys) },
  { set: recordSet('Airbyte face: _ab_extracted_at last, excluded', withExtractionCursor(jsonl)), identity: new RowIdentity(keys, '_ab_extracted_at') },
];
const times = sets.map(() => [] as Timing[]);
for (const { set, identity } of sets) timeReads(set, identity, Math.min(args.perRun, 200_000));
// Runs alternate between the sets, so drift in the machine's load spreads over all of them.
for (let run = 0; run < args.runs; run++) sets.forEach(({ set, identity }, s) => times[s].push(timeReads(set, identity, args.perRun)));
sets.forEach(({ set }, s) => report(set, times[s], args.perRun));
