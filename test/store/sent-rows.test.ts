import { readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TapError } from '../../src/errors.js';
import { CHANGED, NEW, REPEATS, SentRows, UNCHANGED } from '../../src/store/sent-rows.js';
import { NextGeneration } from '../../src/store/next-generation.js';
import { tempFolder } from '../helpers/files.js';
import { EXPECT, row, type StoreRow, writeGenerationFile } from '../helpers/store-rows.js';

const check = (sent: SentRows, r: StoreRow) => sent.check(r.keyHi, r.keyLo, r.contentHi, r.contentLo);

async function loaded(rows: ReadonlyArray<StoreRow | undefined>): Promise<{ sent: SentRows; path: string }> {
  const path = join(tempFolder('sent-rows-'), '20261201T020000Z-0a0b0c0d.gen');
  await writeGenerationFile(path, rows);
  const sent = await SentRows.load(path, EXPECT);
  if ('untrusted' in sent) throw new Error(sent.untrusted);
  return { sent, path };
}

async function unseenOf(sent: SentRows): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of sent.unseen()) keys.push(key.toString());
  return keys;
}

describe('SentRows', () => {
  it('answers UNCHANGED (same key, same content), CHANGED (same key, other content) or NEW, and counts the confirmed keys seen once each', async () => {
    const { sent } = await loaded(Array.from({ length: 100 }, (_, i) => row(i)));
    expect(sent.rows).toBe(100);
    expect(check(sent, row(5))).toBe(UNCHANGED);
    expect(check(sent, row(6, 1))).toBe(CHANGED);
    expect(check(sent, row(100))).toBe(NEW);
    expect(check(sent, row(5))).toBe(UNCHANGED);
    expect(check(sent, row(6, 2))).toBe(CHANGED);
    expect(sent.seen).toBe(2);
  });

  it('answers alike whatever the order rows are checked in: in the file\'s order (where it tries the next entry first), backwards, shuffled, with new and dead ones among them', async () => {
    const rows: Array<StoreRow | undefined> = Array.from({ length: 300 }, (_, i) => (i % 37 === 5 ? undefined : row(i)));
    const expected = (i: number, content: number): number => (i >= 300 || i % 37 === 5 ? NEW : content === 0 ? UNCHANGED : CHANGED);
    const orders = [Array.from({ length: 320 }, (_, i) => i), Array.from({ length: 320 }, (_, i) => 319 - i), Array.from({ length: 320 }, (_, i) => (i * 131) % 320)];
    for (const order of orders) {
      const { sent } = await loaded(rows);
      const answers = order.map((i) => check(sent, row(i, i % 3 === 0 ? 1 : 0)));
      expect(answers).toEqual(order.map((i) => expected(i, i % 3 === 0 ? 1 : 0)));
      expect(sent.seen).toBe(rows.filter(Boolean).length);
    }
  });

  it('takes hashes given as signed int32 (as Math.imul gives them) as their uint32', async () => {
    const { sent } = await loaded([row(1), row(2)]);
    const signed = (r: StoreRow) => sent.check(r.keyHi | 0, r.keyLo | 0, r.contentHi | 0, r.contentLo | 0);
    expect([signed(row(1)), signed(row(2, 1)), signed(row(3))]).toEqual([UNCHANGED, CHANGED, NEW]);
    expect(row(1).keyHi | 0).not.toBe(row(1).keyHi);
  });

  it('lists the keys of the confirmed rows not seen, as stored, in the file\'s order; none once all are seen', async () => {
    const rows = Array.from({ length: 5000 }, (_, i) => row(i));
    const { sent } = await loaded(rows);
    for (const r of rows) if (![7, 4000, 4999].includes(rows.indexOf(r))) check(sent, r);
    expect(await unseenOf(sent)).toEqual([rows[7], rows[4000], rows[4999]].map((r) => r.key.toString()));
    check(sent, rows[7]);
    check(sent, rows[4000]);
    check(sent, rows[4999]);
    expect(await unseenOf(sent)).toEqual([]);
  });

  it('has no row and lists none when there is no confirmed generation (SentRows.empty)', async () => {
    const sent = SentRows.empty();
    expect(sent.rows).toBe(0);
    expect(check(sent, row(1))).toBe(NEW);
    expect(sent.seen).toBe(0);
    expect(await unseenOf(sent)).toEqual([]);
  });

  it('neither finds nor lists a dead entry (a row gone, its key still in the file)', async () => {
    const { sent } = await loaded([row(1), undefined, row(3), undefined]);
    expect(sent.rows).toBe(2);
    expect(sent.entries).toBe(4);
    expect(check(sent, row(1))).toBe(UNCHANGED);
    expect(check(sent, { ...row(9), keyHi: 0, keyLo: 0 })).toBe(NEW);
    expect(await unseenOf(sent)).toEqual([row(3).key.toString()]);
  });

  it('is untrusted, with the reason, when its file is missing, of another fingerprint, damaged, holds a key twice, or more rows than its header says', async () => {
    const folder = tempFolder('sent-rows-');
    const path = join(folder, '20261201T020000Z-0a0b0c0d.gen');
    expect(await SentRows.load(path, EXPECT)).toEqual({ untrusted: expect.stringContaining('holds no generation 20261201T020000Z-0a0b0c0d of stream training') });
    await writeGenerationFile(path, [row(1)], { ...EXPECT, fingerprint: 'another' });
    expect(await SentRows.load(path, EXPECT)).toEqual({ untrusted: expect.stringContaining('another tenant, config, layout or personal-data policy') });
    rmSync(path);
    await writeGenerationFile(path, [row(1), row(2), row(1, 3)]);
    expect(await SentRows.load(path, EXPECT)).toEqual({ untrusted: "The change store's generation 20261201T020000Z-0a0b0c0d of stream training is damaged: it holds a key twice." });
    rmSync(path);
    // A row whose hashes are zero reads as dead: the header's count of rows is then wrong.
    await writeGenerationFile(path, [row(1), row(2)]);
    const crafted = join(folder, 'crafted.gen');
    writeFileSync(crafted, readFileSync(path).toString('latin1').replace('"rows":2,"dead":0', '"rows":1,"dead":1'), 'latin1');
    expect(await SentRows.load(crafted, EXPECT)).toEqual({ untrusted: "The change store's generation crafted of stream training is damaged: it holds another number of dead entries than its header says (1)." });
    rmSync(path);
    await writeGenerationFile(path, [row(1), undefined]);
    writeFileSync(crafted, readFileSync(path).toString('latin1').replace('"rows":1,"dead":1', '"rows":2,"dead":0'), 'latin1');
    expect(await SentRows.load(crafted, EXPECT)).toEqual({ untrusted: "The change store's generation crafted of stream training is damaged: it holds another number of dead entries than its header says (0)." });
  });

  it('is untrusted when its file is cut short in its keys, which loading does not read: a run never starts on a store it cannot finish', async () => {
    const path = join(tempFolder('sent-rows-'), '20261201T020000Z-0a0b0c0d.gen');
    await writeGenerationFile(path, Array.from({ length: 100 }, (_, i) => row(i)));
    truncateSync(path, statSync(path).size - 1);
    expect(await SentRows.load(path, EXPECT)).toEqual({ untrusted: "The change store's generation 20261201T020000Z-0a0b0c0d of stream training is damaged: it is cut short." });
  });

  it('compares a key\'s later row in a run with what the target holds then (the earlier row, sent), and counts the keys seen more than once', async () => {
    const { sent } = await loaded([row(1), row(2)]);
    expect(check(sent, row(1, 1))).toBe(CHANGED);
    expect(check(sent, row(1, 1))).toBe(UNCHANGED);
    expect(check(sent, row(1))).toBe(CHANGED);
    expect(check(sent, row(2))).toBe(UNCHANGED);
    expect([sent.seen, sent.seenAgain]).toEqual([2, 1]);
    expect([sent.repeats(0), sent.repeats(1)]).toEqual([true, false]);
  });

  it('answers REPEATS for a key that came more than once in the run that wrote the generation, naming its entry; compare then judges the row the caller kept', async () => {
    const folder = tempFolder('sent-rows-');
    const next = await NextGeneration.create(folder, '20261201T020000Z-0a0b0c0d', { ...EXPECT, parent: null });
    for (const r of [row(1), row(2, 1), row(3), row(2, 2)]) next.sent(r.keyHi, r.keyLo, r.contentHi, r.contentLo, r.key);
    await next.commit(SentRows.empty(), false);
    expect(next.repeated).toBe(1);
    const sent = await SentRows.load(next.path, EXPECT);
    if ('untrusted' in sent) throw new Error(sent.untrusted);
    expect(check(sent, row(1))).toBe(UNCHANGED);
    expect(check(sent, row(2, 1))).toBe(REPEATS);
    const entry = sent.found;
    expect(check(sent, row(3, 5))).toBe(CHANGED);
    expect(check(sent, row(2, 2))).toBe(REPEATS);
    expect(sent.found).toBe(entry);
    expect(sent.compare(entry, row(2, 2).contentHi, row(2, 2).contentLo)).toBe(UNCHANGED);
    expect(sent.compare(entry, row(2, 1).contentHi, row(2, 1).contentLo)).toBe(CHANGED);
    // Seen twice in this run: it repeats in the generation this run writes.
    expect(sent.repeats(entry)).toBe(true);
  });

  it('says a key of the run that wrote the generation repeats in the next one only if this run saw it more than once, or not at all (its rows are as the target held them)', async () => {
    const folder = tempFolder('sent-rows-');
    const next = await NextGeneration.create(folder, '20261201T020000Z-0a0b0c0d', { ...EXPECT, parent: null });
    for (const r of [row(1), row(2, 1), row(2, 2)]) next.sent(r.keyHi, r.keyLo, r.contentHi, r.contentLo, r.key);
    await next.commit(SentRows.empty(), false);
    const load = async (): Promise<SentRows> => {
      const sent = await SentRows.load(next.path, EXPECT);
      if ('untrusted' in sent) throw new Error(sent.untrusted);
      return sent;
    };
    const once = await load();
    expect(check(once, row(2, 2))).toBe(REPEATS);
    const entry = once.found;
    expect(once.repeats(entry), 'seen once').toBe(false);
    const unseen = await load();
    expect(check(unseen, row(1))).toBe(UNCHANGED);
    expect(unseen.repeats(entry), 'not seen').toBe(true);
    expect(unseen.repeats(unseen.found), 'a key that never repeated, seen once').toBe(false);
  });

  it('is untrusted when one byte of its keys section is flipped: found at load, not when a change pass lists the rows gone', async () => {
    const path = join(tempFolder('sent-rows-'), '20261201T020000Z-0a0b0c0d.gen');
    await writeGenerationFile(path, Array.from({ length: 100 }, (_, i) => row(i)));
    const bytes = readFileSync(path);
    bytes[bytes.length - 20] ^= 0x10;
    writeFileSync(path, bytes);
    expect(await SentRows.load(path, EXPECT)).toEqual({ untrusted: "The change store's generation 20261201T020000Z-0a0b0c0d of stream training is damaged: its keys are not those written." });
  });

  it('fails, naming the file, when its file is replaced after it was loaded: the rows in memory are not that file\'s', async () => {
    const { sent, path } = await loaded([row(1), row(2)]);
    rmSync(path);
    await writeGenerationFile(path, [row(1), row(2), row(3)]);
    const listing = unseenOf(sent);
    await expect(listing).rejects.toBeInstanceOf(TapError);
    await expect(listing).rejects.toThrow(`The change store's file ${path} changed while this run used it: run the tap again, and let no other program write to the store's folder.`);
  });
});
