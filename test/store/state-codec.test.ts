import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { decodeGeneration, encodeGeneration } from '../../src/store/state-codec.js';
import { GenerationFile, GenerationRefused, keyEntryLength, keyOf } from '../../src/store/generation-file.js';
import { NextGeneration } from '../../src/store/next-generation.js';
import { SentRows, UNCHANGED, CHANGED, REPEATS } from '../../src/store/sent-rows.js';
import { Hash64 } from '../../src/records/hash64.js';
import { tempFolder } from '../helpers/files.js';
import { EXPECT, row, type StoreRow } from '../helpers/store-rows.js';

const FIRST = '20261201T020000Z-0a0b0c0d';
const SECOND = '20261202T020000Z-1a1b1c1d';

/** A row whose key hash is its key's Hash64, as RowIdentity makes it (the state keeps keys, not key hashes). */
function keyed(key: string, version = 0): StoreRow {
  const hash = new Hash64();
  const bytes = Buffer.from(key);
  hash.of(bytes, 0, bytes.length);
  const content = row(bytes.length * 7919 + bytes[bytes.length - 3], version);
  return { keyHi: hash.hi, keyLo: hash.lo, contentHi: content.contentHi, contentLo: content.contentLo, key: bytes };
}

async function written(folder: string, rows: readonly StoreRow[], generation = FIRST): Promise<string> {
  const next = await NextGeneration.create(folder, generation, { ...EXPECT, parent: null });
  for (const r of rows) next.sent(r.keyHi, r.keyLo, r.contentHi, r.contentLo, r.key);
  await next.commit(SentRows.empty(), false);
  return next.path;
}

async function entries(path: string): Promise<string[]> {
  const file = GenerationFile.open(path, EXPECT);
  const hashes = new Uint32Array(file.entries * 4);
  file.readHashes(hashes);
  const out: string[] = [];
  let entry = 0;
  for await (const block of file.keyBlocks()) for (let at = 0; at < block.length; at += keyEntryLength(block, at), entry++) out.push(`${keyOf(block, at).toString()} ${hashes[entry * 4 + 2] & 0xffff} ${hashes[entry * 4 + 3]}`);
  file.close();
  return out.sort();
}

describe('a generation as the state carries it', () => {
  it('decodes to a generation with the same rows (48 bits of content hash), repeated keys and origin, which a run compares with as with the file', async () => {
    const folder = tempFolder('state-codec-');
    const rows = ['["u3","p"]', '["u1","p"]', '["u2","p"]', '["u1","q"]'].map((key) => keyed(key));
    const path = await written(folder, [...rows, keyed('["u2","p"]', 1)]);
    const data = await encodeGeneration(path, EXPECT);
    const decoded = join(folder, `${SECOND}.gen`);
    await decodeGeneration(data, decoded, 'training', 'the generation');
    expect(await entries(decoded)).toEqual((await entries(path)).sort());
    const header = GenerationFile.open(decoded, EXPECT).header;
    expect([header.rows, header.repeats, header.parent, header.fingerprint]).toEqual([4, 1, null, EXPECT.fingerprint]);
    const sent = await SentRows.load(decoded, EXPECT);
    if ('untrusted' in sent) throw new Error(sent.untrusted);
    const check = (r: StoreRow) => sent.check(r.keyHi, r.keyLo, r.contentHi, r.contentLo);
    expect([check(rows[0]), check(rows[1]), check(keyed('["u1","q"]', 5)), check(keyed('["u2","p"]', 1))]).toEqual([UNCHANGED, UNCHANGED, CHANGED, REPEATS]);
  });

  it('carries only the live rows of a generation with dead entries, keys that are prefixes of one another and non-ASCII keys in byte order', async () => {
    const folder = tempFolder('state-codec-');
    const keys = ['["u10"]', '["u1","x"]', '["u1"]', '["Zoë"]', '["Zoe"]', '["u1","x","y"]', ...Array.from({ length: 40 }, (_, i) => `["v${i}"]`)];
    const first = await written(folder, keys.map((key) => keyed(key)));
    const confirmed = await SentRows.load(first, EXPECT);
    if ('untrusted' in confirmed) throw new Error(confirmed.untrusted);
    // A pass that saw every key but two: their entries stay in the file as dead ones (fewer than a quarter: no compaction).
    const gone = new Set(['["u1","x"]', '["v7"]']);
    for (const key of keys.filter((key) => !gone.has(key))) {
      const r = keyed(key);
      confirmed.check(r.keyHi, r.keyLo, r.contentHi, r.contentLo);
    }
    const next = await NextGeneration.create(folder, SECOND, { ...EXPECT, parent: FIRST });
    await next.commit(confirmed, true);
    expect(GenerationFile.open(next.path, EXPECT).header.dead).toBe(2);
    const decoded = join(folder, '20261203T020000Z-2a2b2c2d.gen');
    await decodeGeneration(await encodeGeneration(next.path, EXPECT), decoded, 'training', 'the generation');
    const live = (await entries(next.path)).filter((entry) => !gone.has(entry.split(' ')[0]));
    expect(await entries(decoded)).toEqual(live);
    expect(live).toHaveLength(keys.length - 2);
  });

  it('takes at most 16 bytes a row for 20,000 rows of pseudonymised training keys', async () => {
    const folder = tempFolder('state-codec-');
    const rows: StoreRow[] = [];
    for (let user = 0; user < 2500; user++) {
      const pseudonym = createHmac('sha256', 'k').update(String(user)).digest('hex');
      for (let module = 0; module < 8; module++) rows.push(keyed(`["${pseudonym}","prog-0${module >> 2}","mod-0${module >> 2}-0${module % 4}"]`));
    }
    const data = await encodeGeneration(await written(folder, rows), EXPECT);
    expect(data.length / rows.length).toBeLessThanOrEqual(16);
  });

  it('is refused, with the reason, when a character of it was changed, it was cut, or it is not base64 of one', async () => {
    const folder = tempFolder('state-codec-');
    const data = await encodeGeneration(await written(folder, [keyed('["a"]'), keyed('["b"]')]), EXPECT);
    const refusal = async (bad: string) => {
      try {
        await decodeGeneration(bad, join(folder, `${SECOND}.gen`), 'training', 'the generation');
      } catch (error) {
        expect(error).toBeInstanceOf(GenerationRefused);
        return (error as Error).message;
      }
      throw new Error('not refused');
    };
    const flipped = data.slice(0, 10) + (data[10] === 'A' ? 'B' : 'A') + data.slice(11);
    expect(await refusal(flipped)).toBe('the generation is damaged: it is not the one written (its checksum differs).');
    expect(await refusal(data.slice(0, -8))).toMatch(/^the generation is damaged: /);
    expect(await refusal('not base64 at all')).toMatch(/^the generation is damaged: /);
  });
});
