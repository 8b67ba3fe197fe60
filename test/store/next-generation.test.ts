import fs, { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TapError } from '../../src/errors.js';
import { GenerationFile, keyEntryLength, keyOf } from '../../src/store/generation-file.js';
import { NextGeneration } from '../../src/store/next-generation.js';
import { REPEATS, SentRows, UNCHANGED } from '../../src/store/sent-rows.js';
import { tempFolder } from '../helpers/files.js';
import { EXPECT, modeOf, row, type StoreRow, UMASKS, withUmask } from '../helpers/store-rows.js';

const FIRST = '20261201T020000Z-0a0b0c0d';
const SECOND = '20261202T020000Z-1a1b1c1d';
const THIRD = '20261203T020000Z-2a2b2c2d';

/** The generation's stream and fingerprint, built on none: these tests are about its rows (its parent is told apart below). */
const ORIGIN = { ...EXPECT, parent: null };

/** An entry of a generation file as a test reads it: the key and the content hashes, or a dead entry's key. */
type Entry = { key: string; content: [number, number] } | { dead: string };

async function entriesOf(path: string): Promise<Entry[]> {
  const file = GenerationFile.open(path, EXPECT);
  try {
    const hashes = new Uint32Array(file.entries * 4);
    file.readHashes(hashes);
    const entries: Entry[] = [];
    for await (const block of file.keyBlocks()) {
      for (let at = 0; at < block.length; at += keyEntryLength(block, at)) {
        const e = entries.length * 4;
        const key = keyOf(block, at).toString();
        entries.push(hashes[e] === 0 && hashes[e + 1] === 0 && hashes[e + 2] === 0 && hashes[e + 3] === 0 ? { dead: key } : { key, content: [hashes[e + 2], hashes[e + 3]] });
      }
    }
    return entries;
  } finally {
    file.close();
  }
}

const live = (r: StoreRow): Entry => ({ key: r.key.toString(), content: [r.contentHi, r.contentLo] });
const dead = (r: StoreRow): Entry => ({ dead: r.key.toString() });
const send = (next: NextGeneration, r: StoreRow) => next.sent(r.keyHi, r.keyLo, r.contentHi, r.contentLo, r.key);
const check = (sent: SentRows, r: StoreRow) => sent.check(r.keyHi, r.keyLo, r.contentHi, r.contentLo);

/** A generation of `rows` written from scratch, loaded as the confirmed one. */
async function confirmedOf(folder: string, rows: readonly StoreRow[], generation = FIRST): Promise<SentRows> {
  const next = await NextGeneration.create(folder, generation, ORIGIN);
  for (const r of rows) send(next, r);
  await next.commit(SentRows.empty(), false);
  return load(folder, generation);
}

async function load(folder: string, generation: string): Promise<SentRows> {
  const sent = await SentRows.load(join(folder, `${generation}.gen`), EXPECT);
  if ('untrusted' in sent) throw new Error(sent.untrusted);
  return sent;
}

const rows = (n: number, from = 0) => Array.from({ length: n }, (_, i) => row(from + i));

describe('NextGeneration', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('writes the rows sent as a generation when there is no confirmed one, keeping the sent rows meanwhile in owner-only files (0600 whatever the umask) it then removes', async () => {
    for (const umask of UMASKS) {
      const folder = tempFolder('next-generation-');
      const next = await withUmask(umask, () => NextGeneration.create(folder, FIRST, ORIGIN));
      for (const r of rows(3)) send(next, r);
      expect(readdirSync(folder).sort()).toEqual([`${FIRST}.gen.sent-hashes.partial`, `${FIRST}.gen.sent-keys.partial`]);
      for (const name of readdirSync(folder)) expect(modeOf(join(folder, name)), `${name}, umask ${umask.toString(8)}`).toBe(0o600);
      expect(await withUmask(umask, () => next.commit(SentRows.empty(), false))).toBe(3);
      expect(readdirSync(folder)).toEqual([`${FIRST}.gen`]);
      expect(modeOf(next.path), `umask ${umask.toString(8)}`).toBe(0o600);
      expect(await entriesOf(next.path)).toEqual(rows(3).map(live));
    }
  });

  it('names in its header the generation it built on, or none (null)', async () => {
    const folder = tempFolder('next-generation-');
    await confirmedOf(folder, rows(2));
    const next = await NextGeneration.create(folder, SECOND, { ...EXPECT, parent: FIRST });
    send(next, row(5));
    await next.commit(await load(folder, FIRST), false);
    expect(GenerationFile.open(next.path, EXPECT).header.parent).toBe(FIRST);
    expect(GenerationFile.open(join(folder, `${FIRST}.gen`), EXPECT).header.parent).toBeNull();
  });

  it('keeps a key sent twice once, with its last content', async () => {
    const folder = tempFolder('next-generation-');
    const next = await NextGeneration.create(folder, FIRST, ORIGIN);
    [row(1), row(2), row(1, 1), row(1, 2)].forEach((r) => send(next, r));
    expect(await next.commit(SentRows.empty(), false)).toBe(2);
    expect(await entriesOf(next.path)).toEqual([live(row(2)), live(row(1, 2))]);
  });

  /** The keys a generation file names as repeated, as rows of `rows` (by number). */
  function repeatedIn(path: string, candidates: readonly number[]): number[] {
    const file = GenerationFile.open(path, EXPECT);
    try {
      const repeats = new Uint32Array(file.header.repeats * 2);
      file.readHashes(new Uint32Array(file.entries * 4), repeats);
      return candidates.filter((i) => [...Array(repeats.length / 2).keys()].some((k) => repeats[k * 2] === row(i).keyHi && repeats[k * 2 + 1] === row(i).keyLo));
    } finally {
      file.close();
    }
  }

  it('names as repeated the keys that came more than once in the run: a new key sent twice, a confirmed key seen twice; a repeated key not seen stays so, one seen once no longer; and counts them', async () => {
    const folder = tempFolder('next-generation-');
    const first = await NextGeneration.create(folder, FIRST, ORIGIN);
    [row(1), row(2), row(3), row(2, 1), row(4), row(4, 1)].forEach((r) => send(first, r));
    await first.commit(SentRows.empty(), false);
    expect(first.repeated).toBe(2);
    expect(repeatedIn(first.path, [1, 2, 3, 4])).toEqual([2, 4]);
    const confirmed = await load(folder, FIRST);
    // Row 1 twice (unchanged both times), row 4 once, row 2 not at all, and a new row 7 twice.
    [row(1), row(1), row(4, 1)].forEach((r) => check(confirmed, r));
    const second = await NextGeneration.create(folder, SECOND, ORIGIN);
    [row(7), row(7, 1)].forEach((r) => send(second, r));
    await second.commit(confirmed, false);
    expect(second.repeated).toBe(2);
    expect(repeatedIn(second.path, [1, 2, 3, 4, 7])).toEqual([1, 2, 7]);
  });

  it('unsure (a reader that keeps either of a key\'s rows on a tie): writes a key sent more than once with no content, which no row matches, and any other with its content', async () => {
    const folder = tempFolder('next-generation-');
    const confirmed = await confirmedOf(folder, rows(3));
    rows(3).forEach((r) => check(confirmed, r));
    const next = await NextGeneration.create(folder, SECOND, ORIGIN);
    [row(1, 1), row(1, 2), row(2, 1), row(8), row(8, 1), row(9)].forEach((r) => send(next, r));
    await next.commit(confirmed, false, true);
    expect(await entriesOf(next.path)).toEqual([live(row(0)), { key: row(1).key.toString(), content: [0, 0] }, live(row(2, 1)), { key: row(8).key.toString(), content: [0, 0] }, live(row(9))]);
    const reloaded = await load(folder, SECOND);
    expect([check(reloaded, row(1, 2)), check(reloaded, row(8, 1)), check(reloaded, row(9))]).toEqual([REPEATS, REPEATS, UNCHANGED]);
  });

  it('carries the confirmed rows in their order, a row sent again in its place with its new content, then the new rows', async () => {
    const folder = tempFolder('next-generation-');
    const confirmed = await confirmedOf(folder, rows(5));
    rows(5).forEach((r) => check(confirmed, r));
    const next = await NextGeneration.create(folder, SECOND, ORIGIN);
    [row(9), row(2, 1), row(2, 2)].forEach((r) => send(next, r));
    expect(await next.commit(confirmed, false)).toBe(6);
    expect(await entriesOf(next.path)).toEqual([live(row(0)), live(row(1)), live(row(2, 2)), live(row(3)), live(row(4)), live(row(9))]);
  });

  it('leaves out, when it may delete (drop), the confirmed rows this run did not see, as dead entries; keeps them when it may not', async () => {
    const folder = tempFolder('next-generation-');
    const confirmed = await confirmedOf(folder, rows(10));
    rows(9).forEach((r) => check(confirmed, r));
    const dropping = await NextGeneration.create(folder, SECOND, ORIGIN);
    expect(await dropping.commit(confirmed, true)).toBe(9);
    expect(await entriesOf(dropping.path)).toEqual([...rows(9).map(live), dead(row(9))]);
    const reloaded = await load(folder, SECOND);
    expect([reloaded.rows, reloaded.entries]).toEqual([9, 10]);
    const keeping = await NextGeneration.create(folder, THIRD, ORIGIN);
    expect(await keeping.commit(confirmed, false)).toBe(10);
    expect(await entriesOf(keeping.path)).toEqual(rows(10).map(live));
  });

  it('copies the confirmed keys as they are stored when it leaves out no entry, and appends the new keys', async () => {
    const folder = tempFolder('next-generation-');
    const confirmed = await confirmedOf(folder, rows(1000));
    rows(1000).forEach((r) => check(confirmed, r));
    const next = await NextGeneration.create(folder, SECOND, ORIGIN);
    send(next, row(5000));
    send(next, row(3, 1));
    await next.commit(confirmed, true);
    const keysSection = (path: string) => {
      const bytes = readFileSync(path);
      const header = JSON.parse(bytes.toString('latin1', 0, bytes.indexOf(10))) as { keys_bytes: number };
      return bytes.subarray(bytes.length - header.keys_bytes);
    };
    const before = keysSection(join(folder, `${FIRST}.gen`));
    const after = keysSection(next.path);
    expect(after.length).toBeGreaterThan(before.length);
    expect(after.subarray(0, before.length).equals(before)).toBe(true);
    expect(await entriesOf(next.path)).toEqual([...rows(3).map(live), live(row(3, 1)), ...rows(996, 4).map(live), live(row(5000))]);
  });

  it('compacts once the dead entries pass a quarter of the rows: the keys are written again without them', async () => {
    const folder = tempFolder('next-generation-');
    const first = await confirmedOf(folder, rows(10));
    rows(9).forEach((r) => check(first, r));
    const second = await NextGeneration.create(folder, SECOND, ORIGIN);
    await second.commit(first, true);
    // 1 dead for 9 rows: kept. Then 2 more gone: 3 dead for 7 rows, more than a quarter.
    const confirmed = await load(folder, SECOND);
    rows(7).forEach((r) => check(confirmed, r));
    const third = await NextGeneration.create(folder, THIRD, ORIGIN);
    expect(await third.commit(confirmed, true)).toBe(7);
    expect(await entriesOf(third.path)).toEqual(rows(7).map(live));
    const reloaded = await load(folder, THIRD);
    expect([reloaded.rows, reloaded.entries]).toEqual([7, 7]);
  });

  it('keeps a row this run sent even if it never checked it, and takes a key that came back after it was gone as a new row', async () => {
    const folder = tempFolder('next-generation-');
    const first = await confirmedOf(folder, rows(10));
    rows(9).forEach((r) => check(first, r));
    const second = await NextGeneration.create(folder, SECOND, ORIGIN);
    await second.commit(first, true);
    const confirmed = await load(folder, SECOND);
    rows(9).forEach((r, i) => i !== 5 && check(confirmed, r));
    const third = await NextGeneration.create(folder, THIRD, ORIGIN);
    send(third, row(5, 1));
    send(third, row(9, 1));
    expect(await third.commit(confirmed, true)).toBe(10);
    expect(await entriesOf(third.path)).toEqual([...rows(5).map(live), live(row(5, 1)), ...rows(3, 6).map(live), dead(row(9)), live(row(9, 1))]);
    const reloaded = await load(folder, THIRD);
    expect([check(reloaded, row(5, 1)), check(reloaded, row(9, 1))]).toEqual([0, 0]);
    expect([reloaded.rows, reloaded.entries]).toEqual([10, 11]);
  });

  it('leaves nothing of itself when discarded, and refuses rows or a commit once discarded or committed', async () => {
    const folder = tempFolder('next-generation-');
    const next = await NextGeneration.create(folder, FIRST, ORIGIN);
    send(next, row(1));
    await next.discard();
    expect(readdirSync(folder)).toEqual([]);
    expect(() => send(next, row(2))).toThrow('The next generation of stream training is discarded: it takes no more rows.');
    await expect(next.commit(SentRows.empty(), false)).rejects.toThrow('already discarded');
    const committed = await NextGeneration.create(folder, SECOND, ORIGIN);
    const committing = committed.commit(SentRows.empty(), false);
    expect(() => send(committed, row(2))).toThrow('is committing: it takes no more rows');
    await committing;
    expect(() => send(committed, row(2))).toThrow('is committed: it takes no more rows');
    await committed.discard();
    expect(readdirSync(folder)).toEqual([`${SECOND}.gen`]);
  });

  it('fails its commit with one line naming the folder and the cause when the disk refuses a write, and leaves nothing', async () => {
    const folder = tempFolder('next-generation-');
    const next = await NextGeneration.create(folder, FIRST, ORIGIN);
    vi.spyOn(fs, 'writeSync').mockImplementation(() => {
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    });
    send(next, row(1));
    const commit = next.commit(SentRows.empty(), false);
    await expect(commit).rejects.toBeInstanceOf(TapError);
    await expect(commit).rejects.toThrow(`The change store could not write the next generation of stream training in ${folder} (ENOSPC); free space there, or set store_directory to a folder this user can write, with room.`);
    expect(readdirSync(folder)).toEqual([]);
  });

  it('fails its commit the same way when the disk refuses the keys, compressed beside the run, and leaves nothing', async () => {
    const folder = tempFolder('next-generation-');
    const next = await NextGeneration.create(folder, FIRST, ORIGIN);
    vi.spyOn(fs, 'write').mockImplementation(((...args: unknown[]) => {
      const done = args.at(-1) as (error: Error) => void;
      process.nextTick(() => done(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })));
    }) as unknown as typeof fs.write);
    rows(20_000).forEach((r) => send(next, r));
    const commit = next.commit(SentRows.empty(), false);
    await expect(commit).rejects.toThrow(`The change store could not write the next generation of stream training in ${folder} (ENOSPC); free space there, or set store_directory to a folder this user can write, with room.`);
    vi.restoreAllMocks();
    expect(readdirSync(folder)).toEqual([]);
  });

  it('says it is backlogged while more keys wait to be compressed than it should hold, and when that is over', async () => {
    const folder = tempFolder('next-generation-');
    const next = await NextGeneration.create(folder, FIRST, ORIGIN);
    // Sent without a pause (as a run between two drains): the compressor cannot keep up with 12 MiB of keys at once.
    const long = (i: number) => ({ ...row(i), key: Buffer.from(`["${'k'.repeat(100)}-${i}"]`) });
    let backlogged = false;
    for (let i = 0; i < 100_000; i++) {
      send(next, long(i));
      backlogged ||= next.backlogged;
    }
    expect(backlogged).toBe(true);
    await next.drained();
    expect(next.backlogged).toBe(false);
    expect(await next.commit(SentRows.empty(), false)).toBe(100_000);
    expect((await entriesOf(next.path)).at(-1)).toEqual(live(long(99_999)));
  });

  it('refuses a key longer than the store keeps (65,535 bytes) with a clear error', async () => {
    const next = await NextGeneration.create(tempFolder('next-generation-'), FIRST, ORIGIN);
    expect(() => next.sent(1, 2, 3, 4, Buffer.alloc(65_536, 0x61))).toThrow('A record of stream training has a key of 65536 bytes, more than the change store keeps (65535); shorten the values of the stream\'s key properties.');
    await next.discard();
  });

  it('writes and reads back many rows across its blocks (more than a block of hashes, keys of every length up to 600 bytes), from scratch and carried', async () => {
    const folder = tempFolder('next-generation-');
    const many = Array.from({ length: 10_000 }, (_, i) => ({ ...row(i), key: Buffer.from(`["${'k'.repeat((i * 7919) % 600)}-${i}"]`) }));
    const confirmed = await confirmedOf(folder, many);
    expect(await entriesOf(join(folder, `${FIRST}.gen`))).toEqual(many.map(live));
    many.forEach((r, i) => i !== 9000 && check(confirmed, r));
    const next = await NextGeneration.create(folder, SECOND, ORIGIN);
    send(next, { ...many[1], contentLo: 1 });
    expect(await next.commit(confirmed, true)).toBe(9999);
    const expected = many.map(live);
    expected[1] = { key: many[1].key.toString(), content: [many[1].contentHi, 1] };
    expected[9000] = dead(many[9000]);
    expect(await entriesOf(next.path)).toEqual(expected);
  });
});
