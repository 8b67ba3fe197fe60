import { mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { TapError } from '../../src/errors.js';
import { createLogger } from '../../src/observe/log.js';
import { ChangeStore, type ChangeStoreOptions, newGenerationId } from '../../src/store/change-store.js';
import { readGenerationHeader } from '../../src/store/generation-file.js';
import { PID_SPACE, processStart } from '../../src/output/process-alive.js';
import { SentRows, UNCHANGED } from '../../src/store/sent-rows.js';
import { tenantName } from '../../src/store/store-directory.js';
import { retentionDays } from '../../src/store/retention.js';
import { tempFolder } from '../helpers/files.js';
import { modeOf, row, UMASKS, withUmask, writeGenerationFile } from '../helpers/store-rows.js';
import { deadPid } from '../helpers/processes.js';

const BASE_URL = 'https://api.example.com';
const logger = createLogger({ write: () => undefined });

async function opened(root: string, baseUrl = BASE_URL, options: Partial<ChangeStoreOptions> = {}): Promise<ChangeStore> {
  const store = await ChangeStore.open({ root, baseUrl, logger, ...options });
  if ('unwritable' in store) throw new Error(store.unwritable);
  return store;
}

/** A run that sends `rows` rows of the stream and commits: the generation its state would name. */
async function runSending(root: string, rows: number, confirmed?: string): Promise<string> {
  const store = await opened(root);
  try {
    const stream = await store.stream('training', confirmed === undefined ? undefined : { generation: confirmed }, 'fp-1');
    for (let i = 0; i < rows; i++) {
      const r = row(i);
      stream.next.sent(r.keyHi, r.keyLo, r.contentHi, r.contentLo, r.key);
    }
    await stream.next.commit('sent' in stream ? stream.sent : SentRows.empty(), false);
    return store.generation;
  } finally {
    await store.close();
  }
}

/** A run without a state that sends rows, then tidies the stream's folder as the end of a run does: the generation it wrote. */
async function runWithoutState(root: string): Promise<string> {
  const written = await runSending(root, 2);
  const store = await opened(root);
  const stream = await store.stream('training', undefined, 'fp-1');
  await store.keepOnly('training', undefined, written);
  await stream.next.discard();
  await store.close();
  return written;
}

/** Generations of two pipelines' chains, by name. */
const G = {
  g1: '20261101T020000Z-00000001',
  g2: '20261102T020000Z-00000002',
  g2b: '20261102T030000Z-0000002b',
  g3x: '20261103T020000Z-0000003f',
  h1: '20261101T020000Z-0000000a',
  h2: '20261102T020000Z-0000000b',
} as const;

/** A generation of one row in the stream's folder, built on `parent`. */
async function generationOf(folder: string, generation: string, parent: string | null, fingerprint = 'fp-1'): Promise<void> {
  await writeGenerationFile(join(folder, `${generation}.gen`), [row(1)], { stream: 'training', fingerprint, parent });
}

/** The generations in a stream's folder, sorted. */
function generationsIn(folder: string): string[] {
  return readdirSync(folder).filter((name) => name.endsWith('.gen')).map((name) => name.slice(0, -4)).sort();
}

describe('ChangeStore', () => {
  it('opens the tenant\'s store with every folder it makes owner-only (0700 whatever the umask), holds a stream\'s lock once asked for it, and releases it on close', async () => {
    for (const umask of UMASKS) {
      const root = join(tempFolder('change-store-'), 'state', 'tap-report-dump');
      const store = await withUmask(umask, () => opened(root));
      expect(store.folder).toBe(join(root, tenantName(BASE_URL)));
      await withUmask(umask, () => store.stream('training', undefined, 'fp-1'));
      for (const folder of [join(root, '..'), root, store.folder, join(store.folder, 'training')]) expect(modeOf(folder), `${folder}, umask ${umask.toString(8)}`).toBe(0o700);
      expect(modeOf(join(store.folder, 'training', 'lock'))).toBe(0o600);
      await store.close();
      expect(readdirSync(store.folder)).toEqual(['training']);
      expect(readdirSync(join(store.folder, 'training'))).toEqual([]);
    }
  });

  it('releases its locks at once when a stop asks, so the next run takes them without a takeover warning', async () => {
    const root = join(tempFolder('change-store-'), 'store');
    const lines: string[] = [];
    const first = await opened(root);
    await first.stream('training', undefined, 'fp-1');
    expect(readdirSync(join(first.folder, 'training'))).toContain('lock');
    first.releaseLocks();
    expect(readdirSync(join(first.folder, 'training'))).not.toContain('lock');
    const second = await opened(root, BASE_URL, { logger: createLogger({ write: (line) => lines.push(line) }), lockWait: { pollMs: 10 } });
    await second.stream('training', undefined, 'fp-1');
    expect(lines.filter((line) => line.includes('lock'))).toEqual([]);
    await second.close();
  });

  it('says, in one sentence, why there is no store when its root cannot be made or written, and the run goes on without one', async () => {
    const file = join(tempFolder('change-store-'), 'a-file');
    writeFileSync(file, '');
    const root = join(file, 'store');
    expect(await ChangeStore.open({ root, baseUrl: BASE_URL, logger })).toEqual({
      unwritable: `The change store's folder ${join(root, tenantName(BASE_URL))} cannot be made or written (ENOTDIR); set store_directory to a folder this user can write, with room.`,
    });
  });

  it('takes no lock when opened: runs of the tenant open it at once', async () => {
    const root = tempFolder('change-store-');
    const first = await opened(root);
    const second = await opened(root);
    expect(readdirSync(first.folder)).toEqual([]);
    await second.close();
    await first.close();
  });

  it('lets runs of other streams of the tenant go on at once, each holding its stream\'s lock', async () => {
    const root = tempFolder('change-store-');
    const training = await opened(root);
    const phishing = await opened(root);
    await training.stream('training', undefined, 'fp-1');
    await phishing.stream('phishing', undefined, 'fp-1');
    expect(JSON.parse(readFileSync(join(training.folder, 'training', 'lock'), 'utf8')).run).toBe(training.generation);
    expect(JSON.parse(readFileSync(join(phishing.folder, 'phishing', 'lock'), 'utf8')).run).toBe(phishing.generation);
    await training.close();
    await phishing.close();
  });

  it('has a second run of a stream wait for the first, logging it, and go on once the first closed', async () => {
    const root = tempFolder('change-store-');
    const first = await opened(root);
    await first.stream('training', undefined, 'fp-1');
    const lines: string[] = [];
    const second = await opened(root, BASE_URL, { logger: createLogger({ write: (line) => lines.push(line) }), lockWait: { pollMs: 10 } });
    let asked = false;
    const stream = second.stream('training', undefined, 'fp-1').then((got) => {
      asked = true;
      return got;
    });
    await vi.waitFor(() => expect(lines).toEqual([expect.stringContaining(`change store: waiting for run ${first.generation} (pid ${process.pid} on host `)]), { timeout: 5000, interval: 5 });
    expect(asked).toBe(false);
    await first.close();
    await expect(stream).resolves.toMatchObject({ untrusted: expect.any(String) });
    expect(JSON.parse(readFileSync(join(second.folder, 'training', 'lock'), 'utf8')).run).toBe(second.generation);
    await second.close();
  });

  it('fails a run of a stream, in one line naming the stream and the run holding it, once it has waited its longest', async () => {
    const root = tempFolder('change-store-');
    const first = await opened(root);
    await first.stream('training', undefined, 'fp-1');
    const second = await opened(root, BASE_URL, { lockWait: { longestWaitMs: 50, pollMs: 10 } });
    const asking = second.stream('training', undefined, 'fp-1');
    await expect(asking).rejects.toBeInstanceOf(TapError);
    await expect(asking).rejects.toThrow(`Another run holds the change store of stream training: run ${first.generation} (pid ${process.pid}`);
    await second.close();
    expect(JSON.parse(readFileSync(join(first.folder, 'training', 'lock'), 'utf8')).run).toBe(first.generation);
    expect(readdirSync(join(first.folder, 'training')).filter((name) => name.startsWith(second.generation))).toEqual([]);
    await first.close();
  });

  it('takes over the lock of a stream whose run died, with a log line', async () => {
    const root = tempFolder('change-store-');
    const store = await opened(root);
    const folder = join(store.folder, 'training');
    mkdirSync(folder, { mode: 0o700 });
    writeFileSync(join(folder, 'lock'), `${JSON.stringify({ tap: 'tap-report-dump', run: '20261101T020000Z-9a9b9c9d', pid: deadPid(), process_started: processStart(), host: hostname(), pid_space: PID_SPACE, since: '2026-11-01T02:00:00.000Z' })}\n`);
    const lines: string[] = [];
    const again = await opened(root, BASE_URL, { logger: createLogger({ write: (line) => lines.push(line) }) });
    await again.stream('training', undefined, 'fp-1');
    expect(lines).toEqual([expect.stringContaining('change store: took over the lock of stream training from run 20261101T020000Z-9a9b9c9d')]);
    await again.close();
    await store.close();
  });

  it('gives the next run the rows of the generation its state names; tells why when the state names none, a name not of this tap, or one that is gone', async () => {
    const root = tempFolder('change-store-');
    const generation = await runSending(root, 50);
    const store = await opened(root);
    try {
      const named = await store.stream('training', { generation: generation }, 'fp-1');
      if (!('sent' in named)) throw new Error(named.untrusted);
      expect(named.sent.rows).toBe(50);
      const r = row(7);
      expect(named.sent.check(r.keyHi, r.keyLo, r.contentHi, r.contentLo)).toBe(UNCHANGED);
      expect(named.next.generation).toBe(store.generation);
      expect(await store.stream('phishing', undefined, 'fp-1')).toEqual({ untrusted: 'The state names no change store generation for stream phishing (a first run, a state from a version without the store, or a run since that sent rows without it).', next: expect.anything() });
      expect(await store.stream('events', { generation: '../../../etc/passwd' }, 'fp-1')).toEqual({ untrusted: 'The state names a change store generation for stream events that is not one this tap makes.', next: expect.anything() });
      expect(await store.stream('users', { generation: '20261201T020000Z-0a0b0c0d' }, 'fp-1')).toEqual({ untrusted: expect.stringContaining('holds no generation 20261201T020000Z-0a0b0c0d of stream users'), next: expect.anything() });
    } finally {
      await store.close();
    }
    const another = await opened(root);
    expect(await another.stream('training', { generation: generation }, 'fp-2')).toEqual({ untrusted: expect.stringContaining('another tenant, config, layout or personal-data policy'), next: expect.anything() });
    await another.close();
  });

  it('writes each generation naming the confirmed one the run built on as its parent; none on a first run or one that cannot trust its state\'s', async () => {
    const root = tempFolder('change-store-');
    const first = await runSending(root, 3);
    const second = await runSending(root, 4, first);
    const untrusted = await runSending(root, 5, '20261101T020000Z-9a9b9c9d');
    const folder = join(root, tenantName(BASE_URL), 'training');
    const parentOf = (generation: string) => readGenerationHeader(join(folder, `${generation}.gen`))?.parent;
    expect([parentOf(first), parentOf(second), parentOf(untrusted)]).toEqual([null, first, null]);
  });

  it('keeps the generations named, its own, other chains\' and files that are not the store\'s; removes what dead runs left half-written', async () => {
    const root = tempFolder('change-store-');
    const kept = await runSending(root, 3);
    const other = await runSending(root, 2);
    const store = await opened(root);
    const { next } = await store.stream('training', { generation: kept }, 'fp-1');
    const folder = join(store.folder, 'training');
    const dead = '20261101T020000Z-9a9b9c9d';
    for (const name of [`${dead}.gen.partial`, `${dead}.gen.sent-hashes.partial`, `${dead}.gen.sent-keys.partial`, 'notes.txt']) writeFileSync(join(folder, name), 'x');
    await store.keepOnly('training', kept, next.generation);
    expect(readdirSync(folder).sort()).toEqual([`${kept}.gen`, `${other}.gen`, `${next.generation}.gen.sent-hashes.partial`, `${next.generation}.gen.sent-keys.partial`, 'lock', 'notes.txt'].sort());
    await expect(store.keepOnly('phishing', undefined, next.generation)).rejects.toThrow('The change store was asked to tidy stream phishing, which this run has not opened.');
    await store.close();
  });

  it('removes the generations of its own chain no state can name (the incoming one\'s ancestors, and branches from it or them), and keeps another pipeline\'s chain', async () => {
    const root = tempFolder('change-store-');
    const folder = join(root, tenantName(BASE_URL), 'training');
    mkdirSync(folder, { recursive: true });
    // Ours: g1 <- g2 (incoming) <- the run's own; g2b from g1 and g3x from g2, runs whose state never reached the target. Another pipeline's: h1 <- h2.
    const chains = { g1: null, g2: G.g1, g2b: G.g1, g3x: G.g2, h1: null, h2: G.h1 } as const;
    for (const [name, parent] of Object.entries(chains)) await generationOf(folder, G[name as keyof typeof G], parent);
    const store = await opened(root);
    const stream = await store.stream('training', { generation: G.g2 }, 'fp-1');
    if (!('sent' in stream)) throw new Error(stream.untrusted);
    await stream.next.commit(stream.sent, false);
    await store.keepOnly('training', G.g2, stream.next.generation);
    await store.close();
    expect(generationsIn(folder)).toEqual([G.g2, G.h1, G.h2, stream.next.generation].sort());
    expect(readGenerationHeader(join(folder, `${stream.next.generation}.gen`))?.parent).toBe(G.g2);
  });

  it('leaves a generation it cannot tell is of its own chain: another fingerprint, a damaged header', async () => {
    const root = tempFolder('change-store-');
    const folder = join(root, tenantName(BASE_URL), 'training');
    mkdirSync(folder, { recursive: true });
    await generationOf(folder, G.g1, null, 'fp-2');
    await generationOf(folder, G.g2, G.g1);
    await generationOf(folder, G.g2b, G.g1, 'fp-2');
    writeFileSync(join(folder, `${G.g3x}.gen`), 'damaged');
    const store = await opened(root);
    const stream = await store.stream('training', { generation: G.g2 }, 'fp-1');
    await store.keepOnly('training', G.g2, stream.next.generation);
    await store.close();
    expect(generationsIn(folder)).toEqual([G.g1, G.g2, G.g2b, G.g3x]);
  });

  it('removes nothing of any chain on a first run (no incoming generation): it knows no chain of its own', async () => {
    const root = tempFolder('change-store-');
    const folder = join(root, tenantName(BASE_URL), 'training');
    mkdirSync(folder, { recursive: true });
    for (const [name, parent] of Object.entries({ g1: null, g2: G.g1, h1: null, h2: G.h1 })) await generationOf(folder, G[name as keyof typeof G], parent);
    writeFileSync(join(folder, `${G.g3x}.gen.partial`), 'a dead run\'s');
    const store = await opened(root);
    const stream = await store.stream('training', undefined, 'fp-1');
    const r = row(1);
    stream.next.sent(r.keyHi, r.keyLo, r.contentHi, r.contentLo, r.key);
    await stream.next.commit(SentRows.empty(), false);
    await store.keepOnly('training', undefined, stream.next.generation);
    await store.close();
    expect(generationsIn(folder)).toEqual([G.g1, G.g2, G.h1, G.h2, stream.next.generation].sort());
    expect(readdirSync(folder).filter((name) => name.endsWith('.partial'))).toEqual([]);
  });

  it('keeps, of the lone roots of other runs (built on none, nothing built on them: runs without a usable state), the two used last beside its own; ten runs without a state leave three', async () => {
    const root = tempFolder('change-store-');
    const written: string[] = [];
    for (let run = 0; run < 10; run++) written.push(await runWithoutState(root));
    const folder = join(root, tenantName(BASE_URL), 'training');
    expect(generationsIn(folder)).toEqual(written.slice(-3).sort());
  });

  it('counts only the lone roots of its own config (another config\'s are another pipeline\'s) and of none built on: those stay whatever their number', async () => {
    const root = tempFolder('change-store-');
    const folder = join(root, tenantName(BASE_URL), 'training');
    mkdirSync(folder, { recursive: true });
    // Another config's lone roots, and a root of ours that something was built on.
    for (const [name, parent, fingerprint] of [['h1', null, 'fp-2'], ['h2', null, 'fp-2'], ['g3x', null, 'fp-2'], ['g1', null, 'fp-1'], ['g2', G.g1, 'fp-1']] as const) {
      await generationOf(folder, G[name], parent, fingerprint);
    }
    const written: string[] = [];
    for (let run = 0; run < 4; run++) written.push(await runWithoutState(root));
    expect(generationsIn(folder)).toEqual([G.g1, G.g2, G.g3x, G.h1, G.h2, ...written.slice(-3)].sort());
  });

  it('removes a generation of another chain no run used for the retention time, and keeps one used within it', async () => {
    const root = tempFolder('change-store-');
    const folder = join(root, tenantName(BASE_URL), 'training');
    mkdirSync(folder, { recursive: true });
    for (const [name, parent] of Object.entries({ h1: null, h2: G.h1, g1: null, g2: G.g1 })) await generationOf(folder, G[name as keyof typeof G], parent);
    const longAgo = new Date(Date.now() - 61 * 86_400_000);
    for (const generation of [G.h1, G.h2]) utimesSync(join(folder, `${generation}.gen`), longAgo, longAgo);
    const store = await opened(root, BASE_URL, { retentionDays: 60 });
    const stream = await store.stream('training', undefined, 'fp-1');
    await store.keepOnly('training', undefined, stream.next.generation);
    await store.close();
    expect(generationsIn(folder)).toEqual([G.g1, G.g2]);
  });

  it('keeps what no run used for twice the longest pass interval, sixty days at least', () => {
    expect(retentionDays({ full_pass_interval_days: 30, change_pass_interval_days: 1 })).toBe(60);
    expect(retentionDays({ full_pass_interval_days: 90, change_pass_interval_days: 1 })).toBe(180);
    expect(retentionDays({ full_pass_interval_days: 0, change_pass_interval_days: 45 })).toBe(90);
  });

  it('follows a loop of parents (files edited by hand) to its end, without hanging', async () => {
    const root = tempFolder('change-store-');
    const folder = join(root, tenantName(BASE_URL), 'training');
    mkdirSync(folder, { recursive: true });
    await generationOf(folder, G.g3x, G.g2);
    await generationOf(folder, G.g2, G.g1);
    await generationOf(folder, G.g1, G.g2);
    const store = await opened(root);
    const stream = await store.stream('training', { generation: G.g3x }, 'fp-1');
    await store.keepOnly('training', G.g3x, stream.next.generation);
    await store.close();
    expect(generationsIn(folder)).toEqual([G.g3x]);
  });

  it('fails the run with one line naming the stream, the folder and the cause when it cannot start a stream\'s generation', async () => {
    const root = tempFolder('change-store-');
    const store = await opened(root);
    writeFileSync(join(store.folder, 'training'), 'a file where the stream\'s folder goes');
    const starting = store.stream('training', undefined, 'fp-1');
    await expect(starting).rejects.toBeInstanceOf(TapError);
    await expect(starting).rejects.toThrow(`The change store could not start the next generation of stream training in ${join(store.folder, 'training')} (EEXIST); free space there, or set store_directory to a folder this user can write, with room.`);
    await expect(store.stream('phishing', undefined, 'fp-1')).resolves.toMatchObject({ untrusted: expect.any(String) });
    await expect(store.stream('phishing', undefined, 'fp-1')).rejects.toThrow('The change store was asked twice for stream phishing in one run.');
    await store.close();
  });

  it('discards, on close, the generations of the run not committed', async () => {
    const root = tempFolder('change-store-');
    const store = await opened(root);
    const { next } = await store.stream('training', undefined, 'fp-1');
    const r = row(1);
    next.sent(r.keyHi, r.keyLo, r.contentHi, r.contentLo, r.key);
    await store.close();
    expect(readdirSync(join(store.folder, 'training'))).toEqual([]);
  });
});

describe('newGenerationId', () => {
  it('sorts by time (UTC, to the second) and keeps two of one second apart', () => {
    const at = new Date('2026-12-01T02:03:04.567Z');
    const id = newGenerationId(at);
    expect(id).toMatch(/^20261201T020304Z-[0-9a-f]{8}$/);
    expect(newGenerationId(at)).not.toBe(id);
    expect(newGenerationId(new Date('2026-12-01T02:03:05Z')) > id).toBe(true);
  });
});
