/**
 * The change store's costs at scale (not part of the test suite): for N
 * training-like rows (keys like ["usr-0000250","prog-02","mod-02-02"], 40
 * rows a user, random 64-bit key and content hashes), each phase in a
 * process of its own so its peak RSS is its own:
 *
 *   write    a generation from scratch (a first run: every row sent, then commit)
 *   load     the generation loaded (SentRows.load)
 *   check    N `check` calls, every row unchanged
 *   pass     a daily change pass on the loaded generation: N checks, 2 % of rows
 *            changed (sent), 1 % gone (unseen), then commit with drop
 *   same     a change pass in which nothing changed: load, N checks, unseen, commit
 *   compact  a change pass in which 30 % of the rows are gone: the dead entries pass a
 *            quarter of the rows, and the commit rewrites the keys without them
 *
 * and the bytes a row takes on disk, rows in key order (as the dump groups
 * them by user) and scattered (as a dump sorted by date has them). With
 * --pseudonymised the user ids are 64 hex digits, as personal_data's
 * pseudonymise makes them; with --levels, gzip levels 1 to 6 on the keys
 * section alone (bytes a row, time). Each phase runs with the tap's own
 * runtime settings (1 MB semi-spaces, two malloc arenas).
 *
 *   npm run build && node dist/bench/change-store.js [--rows 1000000] [--rounds 3] [--pseudonymised] [--levels]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, createReadStream, createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { createGzip } from 'node:zlib';
import { Writable } from 'node:stream';
import { createLogger } from '../src/observe/log.js';
import { ChangeStore } from '../src/store/change-store.js';
import { encodeKey } from '../src/store/generation-file.js';
import { SentRows, UNCHANGED } from '../src/store/sent-rows.js';

const SELF = fileURLToPath(import.meta.url);
const BASE_URL = 'https://api.example.com';
const FINGERPRINT = 'bench-fingerprint';
const STREAM = 'training';
const ROWS_A_USER = 40;

// ---- the rows: computed from their number, nothing held per row ----

/** murmur3's finaliser: row numbers to random-looking uint32. */
function mix(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

const keyHi = (i: number) => mix(i ^ 0x1234567);
const keyLo = (i: number) => mix(i + 0x7654321);
/** The content hash of row i in version v (v changes when the row changes). */
const contentHi = (i: number, v: number) => mix(i * 31 + v * 0x9e3779b1);
const contentLo = (i: number, v: number) => mix(i * 17 + 0x5bd1e995 + v);

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

const PSEUDONYMISED = process.argv.includes('--pseudonymised');

/** A user's id as emitted: `usr-0000250`, or 64 hex digits standing for an HMAC-SHA-256 (cheap to make, as random-looking). */
function userId(user: number): string {
  if (!PSEUDONYMISED) return `usr-${pad(user, 7)}`;
  let hex = '';
  for (let part = 0; part < 8; part++) hex += mix(user * 8 + part + 0x3c6ef372).toString(16).padStart(8, '0');
  return hex;
}

/** Row i's key JSON, as RowIdentity.keyJson would give it. */
function keyJson(i: number): Buffer {
  const user = Math.floor(i / ROWS_A_USER);
  const program = Math.floor((i % ROWS_A_USER) / 8) + 1;
  const module = (i % 8) + 1;
  return Buffer.from(`["${userId(user)}","prog-${pad(program, 2)}","mod-${pad(program, 2)}-${pad(module, 2)}"]`, 'latin1');
}

/** The order rows come in: key order, or scattered (n × a multiplier near rows / φ, prime to rows: a permutation). */
function orderOf(order: string, rows: number): (n: number) => number {
  if (order === 'keys') return (n) => n;
  let step = Math.round(rows * 0.618034) | 1;
  while (gcd(step, rows) !== 1) step += 2;
  return (n) => (n * step) % rows;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

// ---- phases, each in a process of its own ----

interface Result {
  ms: number;
  rssMiB: number;
  extra?: Record<string, number>;
}

function rssMiB(): number {
  return process.resourceUsage().maxRSS / 1024;
}

const noLog = createLogger({ write: () => undefined });

async function phase(name: string, root: string, rows: number, order: string): Promise<Result> {
  const at = orderOf(order, rows);
  const store = await ChangeStore.open({ root, baseUrl: BASE_URL, logger: noLog });
  if ('unwritable' in store) throw new Error(store.unwritable);
  const folder = join(store.folder, STREAM);
  const confirmed = (name === 'write' ? [] : readdirSync(folder)).find((name) => name.endsWith('.gen'))?.slice(0, -4);
  const baseline = process.memoryUsage().rss / 1_048_576;
  const started = performance.now();
  const extra: Record<string, number> = {};
  try {
    if (name === 'write') {
      const { next } = await store.stream(STREAM, undefined, FINGERPRINT);
      for (let n = 0; n < rows; n++) {
        const i = at(n);
        next.sent(keyHi(i), keyLo(i), contentHi(i, 0), contentLo(i, 0), keyJson(i));
      }
      extra.sentMs = performance.now() - started;
      extra.rows = await next.commit(SentRows.empty(), false);
      await store.keepOnly(STREAM, undefined, store.generation);
    } else if (name === 'load' || name === 'check') {
      const opened = await store.stream(STREAM, confirmed === undefined ? undefined : { generation: confirmed }, FINGERPRINT);
      if ('untrusted' in opened) throw new Error(opened.untrusted);
      extra.loadMs = performance.now() - started;
      if (name === 'check') {
        // The loop without the checks: what the bench itself spends making the hashes.
        const looping = performance.now();
        let sum = 0;
        for (let n = 0; n < rows; n++) {
          const i = at(n);
          sum += (keyHi(i) ^ keyLo(i) ^ contentHi(i, 0) ^ contentLo(i, 0)) & 1;
        }
        extra.loopMs = performance.now() - looping + (sum & 0);
        const checking = performance.now();
        let unchanged = 0;
        for (let n = 0; n < rows; n++) {
          const i = at(n);
          if (opened.sent.check(keyHi(i), keyLo(i), contentHi(i, 0), contentLo(i, 0)) === UNCHANGED) unchanged++;
        }
        extra.checkMs = performance.now() - checking;
        if (unchanged !== rows) throw new Error(`${unchanged} of ${rows} unchanged`);
      }
      await opened.next.discard();
    } else {
      const changing = name !== 'same';
      const gone = name === 'compact' ? (i: number) => i % 10 < 3 : (i: number) => i % 100 === 7;
      const opened = await store.stream(STREAM, confirmed === undefined ? undefined : { generation: confirmed }, FINGERPRINT);
      if ('untrusted' in opened) throw new Error(opened.untrusted);
      extra.loadMs = performance.now() - started;
      const checking = performance.now();
      let sent = 0;
      for (let n = 0; n < rows; n++) {
        const i = at(n);
        if (changing && gone(i)) continue;
        const version = changing && i % 50 === 3 ? 1 : 0;
        if (opened.sent.check(keyHi(i), keyLo(i), contentHi(i, version), contentLo(i, version)) !== UNCHANGED) {
          opened.next.sent(keyHi(i), keyLo(i), contentHi(i, version), contentLo(i, version), keyJson(i));
          sent++;
        }
      }
      extra.checkMs = performance.now() - checking;
      extra.sent = sent;
      const listing = performance.now();
      let unseen = 0;
      for await (const key of opened.sent.unseen()) unseen += key.length > 0 ? 1 : 0;
      extra.unseenMs = performance.now() - listing;
      extra.gone = unseen;
      const committing = performance.now();
      extra.rows = await opened.next.commit(opened.sent, true);
      extra.commitMs = performance.now() - committing;
      // The bench keeps its input: the new generation goes, the confirmed one stays for the next phase.
      await rmGeneration(folder, store.generation);
    }
  } finally {
    await store.close();
  }
  return { ms: performance.now() - started, rssMiB: rssMiB() - baseline, extra };
}

async function rmGeneration(folder: string, generation: string): Promise<void> {
  rmSync(join(folder, `${generation}.gen`), { force: true });
}

/** A phase `rounds` times (a process each): the median of each time, the highest peak. */
function timedPhase(name: string, root: string, rows: number, order: string, rounds: number): Result {
  const results = Array.from({ length: rounds }, () => runPhase(name, root, rows, order));
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const extra = Object.fromEntries(Object.keys(results[0].extra ?? {}).map((key) => [key, median(results.map((result) => result.extra?.[key] ?? 0))]));
  return { ms: median(results.map((result) => result.ms)), rssMiB: Math.max(...results.map((result) => result.rssMiB)), extra };
}

function runPhase(name: string, root: string, rows: number, order: string): Result {
  // The tap's own runtime settings (its shebang): 1 MB semi-spaces, two malloc arenas.
  const child = spawnSync(process.execPath, ['--max-semi-space-size=1', SELF, '--phase', name, '--root', root, '--rows', String(rows), '--order', order, ...(PSEUDONYMISED ? ['--pseudonymised'] : [])], { encoding: 'utf8', env: { ...process.env, MALLOC_ARENA_MAX: '2' } });
  if (child.status !== 0) throw new Error(`phase ${name} failed: ${child.stderr}`);
  return JSON.parse(child.stdout.trim().split('\n').at(-1) as string) as Result;
}

function bytesOnDisk(root: string): number {
  const tenant = join(root, readdirSync(root)[0], STREAM);
  return readdirSync(tenant)
    .filter((name) => name.endsWith('.gen'))
    .reduce((sum, name) => sum + statSync(join(tenant, name)).size, 0);
}

// ---- gzip levels on the same entries ----

async function levels(root: string, rows: number, order: string): Promise<void> {
  const at = orderOf(order, rows);
  const raw = join(root, 'keys.raw');
  const out = createWriteStream(raw);
  const block = Buffer.allocUnsafe(1 << 20);
  let used = 0;
  for (let i = 0; i < rows; i++) {
    if (used > block.length - 1024) {
      if (!out.write(Buffer.from(block.subarray(0, used)))) await new Promise<void>((done) => out.once('drain', () => done()));
      used = 0;
    }
    used = encodeKey(block, used, keyJson(at(i)));
  }
  out.end(block.subarray(0, used));
  await new Promise<void>((done) => out.once('finish', () => done()));
  console.log(`\nkeys section, ${order} order: gzip level, bytes/row, ms (raw ${(statSync(raw).size / rows).toFixed(1)} bytes/row)`);
  for (let level = 1; level <= 6; level++) {
    let bytes = 0;
    const started = performance.now();
    await pipeline(
      createReadStream(raw, { highWaterMark: 128 * 1024 }),
      createGzip({ level, chunkSize: 128 * 1024 }),
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          bytes += chunk.length;
          done();
        },
      }),
    );
    console.log(`  ${level}   ${(bytes / rows).toFixed(2).padStart(6)}   ${String(Math.round(performance.now() - started)).padStart(5)}`);
  }
}

// ---- main ----

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : process.argv[at + 1];
}

async function main(): Promise<void> {
  const rows = Number(option('rows', '1000000'));
  const rounds = Number(option('rounds', '3'));
  const phaseName = option('phase', '');
  if (phaseName !== '') {
    const result = await phase(phaseName, option('root', ''), rows, option('order', 'keys'));
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  console.log(`change store, ${rows} rows${PSEUDONYMISED ? ' (user ids pseudonymised)' : ''}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}; median of ${rounds} rounds, highest peak`);
  for (const order of ['keys', 'shuffled']) {
    const root = mkdtempSync(join(tmpdir(), 'bench-change-store-'));
    try {
      const write = runPhase('write', root, rows, order);
      // The timed writes, each into a root of its own: the first one's generation is the input of the phases after it.
      const writes = Array.from({ length: rounds - 1 }, () => {
        const scratch = mkdtempSync(join(tmpdir(), 'bench-change-store-'));
        try {
          return runPhase('write', scratch, rows, order);
        } finally {
          rmSync(scratch, { recursive: true, force: true });
        }
      });
      const median = [write, ...writes].sort((a, b) => a.ms - b.ms)[Math.floor(rounds / 2)];
      const bytes = bytesOnDisk(root);
      console.log(`\nrows in ${order === 'keys' ? 'key order' : 'shuffled order'}: ${(bytes / rows).toFixed(1)} bytes/row on disk (${(bytes / 1_048_576).toFixed(1)} MiB)`);
      const table = [['write from scratch', { ...median, rssMiB: Math.max(write.rssMiB, ...writes.map((w) => w.rssMiB)) }], ...(['load', 'check', 'same', 'pass', 'compact'] as const).map((name) => [name, timedPhase(name, root, rows, order, rounds)] as const)] as const;
      for (const [name, result] of table) {
        const details = Object.entries(result.extra ?? {})
          .map(([key, value]) => `${key} ${Math.round(value)}`)
          .join(', ');
        console.log(`  ${name.padEnd(20)} ${String(Math.round(result.ms)).padStart(6)} ms   peak RSS +${result.rssMiB.toFixed(1).padStart(5)} MiB   (${details})`);
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
  if (process.argv.includes('--levels')) {
    const root = mkdtempSync(join(tmpdir(), 'bench-change-store-'));
    try {
      for (const order of ['keys', 'shuffled']) await levels(root, rows, order);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
}

await main();
