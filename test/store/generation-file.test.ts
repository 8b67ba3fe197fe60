import { readdirSync, readFileSync, truncateSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { GenerationFile, GenerationRefused, GenerationWriter, KeyEntrySplitter, keyEntryLength, keyOf, readGenerationHeader } from '../../src/store/generation-file.js';
import { tempFolder } from '../helpers/files.js';
import { EXPECT, hashesOf, keyEntries, keysSectionOf, modeOf, row, UMASKS, withUmask, writeGenerationFile } from '../helpers/store-rows.js';

const GENERATION = '20261201T020000Z-0a0b0c0d';

const write = writeGenerationFile;

async function keysIn(file: GenerationFile): Promise<string[]> {
  const keys: string[] = [];
  for await (const block of file.keyBlocks()) for (let at = 0; at < block.length; at += keyEntryLength(block, at)) keys.push(keyOf(block, at).toString());
  return keys;
}

function pathIn(folder: string): string {
  return join(folder, `${GENERATION}.gen`);
}

/** A file laid out by hand: a header (JSON, its fields as given), hashes and a gzip keys section, for the cases the writer never makes. */
function craft(path: string, header: Record<string, unknown>, hashes: Uint32Array, keys: Buffer): void {
  const hashBytes = Buffer.from(hashes.buffer);
  const gz = gzipSync(keys);
  const text = JSON.stringify({ tap: 'tap-report-dump', format: 1, ...EXPECT, created: '2026-12-01T02:00:00.000Z', hashes_crc32: crc32(hashBytes), keys_bytes: gz.length, ...header });
  writeFileSync(path, Buffer.concat([Buffer.from(`${text}\n`), hashBytes, gz]));
}

async function refusal(path: string, expectation = EXPECT, read: (file: GenerationFile) => Promise<unknown> = keysIn): Promise<string> {
  try {
    const file = GenerationFile.open(path, expectation);
    try {
      file.readHashes(new Uint32Array(file.entries * 4));
      await read(file);
    } finally {
      file.close();
    }
  } catch (error) {
    expect(error).toBeInstanceOf(GenerationRefused);
    return (error as Error).message;
  }
  throw new Error(`${path} was not refused`);
}

describe('a generation file', () => {
  it('is written owner-only (0600 whatever the umask), whole, and read back: header, hashes, keys', async () => {
    const rows = Array.from({ length: 3000 }, (_, i) => row(i));
    for (const umask of UMASKS) {
      const other = tempFolder('generation-');
      await withUmask(umask, () => write(pathIn(other), rows));
      expect(readdirSync(other)).toEqual([`${GENERATION}.gen`]);
      expect(modeOf(pathIn(other)), `umask ${umask.toString(8)}`).toBe(0o600);
    }
    const folder = tempFolder('generation-');
    await write(pathIn(folder), rows);
    const file = GenerationFile.open(pathIn(folder), EXPECT);
    expect(file.header).toEqual({ tap: 'tap-report-dump', format: 2, ...EXPECT, parent: null, rows: 3000, dead: 0, repeats: 0, created: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), hashes_crc32: expect.any(Number), keys_bytes: expect.any(Number), keys_crc32: expect.any(Number) });
    const hashes = new Uint32Array(3000 * 4);
    file.readHashes(hashes);
    expect(hashes).toEqual(hashesOf(rows));
    expect(await keysIn(file)).toEqual(rows.map((r) => r.key.toString()));
    file.close();
    // The header is one line of JSON, the rest binary: the first line says what the file is.
    expect(readFileSync(pathIn(folder)).toString('latin1').split('\n')[0]).toMatch(/^\{"tap":"tap-report-dump","format":2,"stream":"training","fingerprint":"fp-1","parent":null,"rows":3000,"dead":0,"repeats":0,.*\} *$/);
  });

  it('holds a keys section copied as stored followed by the new keys (two gzip members), read as one', async () => {
    const folder = tempFolder('generation-');
    const first = Array.from({ length: 500 }, (_, i) => row(i));
    const added = Array.from({ length: 300 }, (_, i) => row(1000 + i));
    await write(join(folder, 'a.gen'), first);
    const earlier = GenerationFile.open(join(folder, 'a.gen'), EXPECT);
    const writer = await GenerationWriter.create(pathIn(folder), { ...EXPECT, parent: null, rows: 800, dead: 0 });
    await writer.hashes(hashesOf([...first, ...added]), 800);
    await writer.copiedKeys(earlier.compressedKeys(), 500);
    await writer.keys(keyEntries(added.map((r) => r.key)), 300);
    await writer.complete();
    earlier.close();
    const file = GenerationFile.open(pathIn(folder), EXPECT);
    expect(await keysIn(file)).toEqual([...first, ...added].map((r) => r.key.toString()));
    file.close();
  });

  it('names in its header the generation it was built on; a header without one (written before generations named it) reads as built on none', async () => {
    const folder = tempFolder('generation-');
    const parent = '20261130T020000Z-0f0f0f0f';
    await write(pathIn(folder), [row(1)], { ...EXPECT, parent });
    const file = GenerationFile.open(pathIn(folder), EXPECT);
    expect(file.header.parent).toBe(parent);
    file.close();
    craft(join(folder, 'older.gen'), { rows: 1, dead: 0 }, hashesOf([row(1)]), keyEntries([row(1).key]));
    expect(readFileSync(join(folder, 'older.gen'), 'latin1')).not.toContain('"parent"');
    const older = GenerationFile.open(join(folder, 'older.gen'), EXPECT);
    expect(older.header.parent).toBeNull();
    expect(await keysIn(older)).toEqual([row(1).key.toString()]);
    older.close();
  });

  it('is refused when its header names as its parent something that is not a generation', async () => {
    const folder = tempFolder('generation-');
    for (const parent of ['../../etc/passwd', 7, { id: 'x' }]) {
      craft(pathIn(folder), { rows: 1, dead: 0, parent }, hashesOf([row(1)]), keyEntries([row(1).key]));
      expect(await refusal(pathIn(folder))).toBe(`The change store's generation ${GENERATION} of stream training is damaged: its header is not one this tap writes.`);
    }
  });

  it('has its header read alone (readGenerationHeader), of any stream and fingerprint; none for a file gone, not this tap\'s, damaged in its header or newer', async () => {
    const folder = tempFolder('generation-');
    const parent = '20261130T020000Z-0f0f0f0f';
    await write(pathIn(folder), [row(1), row(2)], { stream: 'phishing', fingerprint: 'fp-9', parent });
    expect(readGenerationHeader(pathIn(folder))).toMatchObject({ stream: 'phishing', fingerprint: 'fp-9', parent, rows: 2 });
    // Its rows are not read: a file cut short in them still has its header.
    truncateSync(pathIn(folder), readFileSync(pathIn(folder)).indexOf(10) + 5);
    expect(readGenerationHeader(pathIn(folder))).toMatchObject({ parent, rows: 2 });
    expect(readGenerationHeader(join(folder, 'gone.gen'))).toBeUndefined();
    const cases: Array<string | Buffer> = ['{"tap":"another-tap","format":1}\n', 'not json\n', Buffer.alloc(100), '', `{"tap":"tap-report-dump","format":2,"stream":"training","fingerprint":"fp-1","rows":1,"dead":0,"hashes_crc32":0,"keys_bytes":0}\n`];
    for (const text of cases) {
      writeFileSync(pathIn(folder), text);
      expect(readGenerationHeader(pathIn(folder)), String(text)).toBeUndefined();
    }
    craft(pathIn(folder), { rows: 1, dead: 0, parent: 'not-a-generation' }, hashesOf([row(1)]), keyEntries([row(1).key]));
    expect(readGenerationHeader(pathIn(folder))).toBeUndefined();
  });

  it('reads back a header whose stream name and fingerprint go beyond ASCII (its length is counted in bytes)', async () => {
    const folder = tempFolder('generation-');
    const expectation = { stream: 'schulungsfortschritt-äöü', fingerprint: `fp-ß-${'😀'.repeat(30)}` };
    await write(pathIn(folder), [row(1)], expectation);
    const file = GenerationFile.open(pathIn(folder), expectation);
    expect(file.header).toMatchObject({ ...expectation, rows: 1 });
    expect(await keysIn(file)).toEqual([row(1).key.toString()]);
    file.close();
  });

  it('never appears when its counts are not the header\'s, or when abandoned: nothing of it remains', async () => {
    const folder = tempFolder('generation-');
    const writer = await GenerationWriter.create(pathIn(folder), { ...EXPECT, parent: null, rows: 2, dead: 0 });
    await writer.hashes(hashesOf([row(1), row(2)]), 2);
    await writer.keys(keyEntries([row(1).key]), 1);
    await expect(writer.complete()).rejects.toThrow('got 2 hashes, 1 keys and 0 repeated keys for 2 entries and 0 repeated: nothing was written');
    expect(readdirSync(folder)).toEqual([]);
    const abandoned = await GenerationWriter.create(pathIn(folder), { ...EXPECT, parent: null, rows: 1, dead: 0 });
    await abandoned.hashes(hashesOf([row(1)]), 1);
    expect(readdirSync(folder)).toEqual([`${GENERATION}.gen.partial`]);
    await abandoned.abandon();
    expect(readdirSync(folder)).toEqual([]);
  });

  it('is refused, with the reason, when it is missing, not this tap\'s, of a newer format, another stream or another fingerprint', async () => {
    const folder = tempFolder('generation-');
    expect(await refusal(pathIn(folder))).toBe(`The change store holds no generation ${GENERATION} of stream training (a new machine or container, or a store removed or moved).`);
    const what = `The change store's generation ${GENERATION} of stream training`;
    writeFileSync(pathIn(folder), '{"tap":"another-tap","format":1}\n');
    expect(await refusal(pathIn(folder))).toBe(`${what} is not a file of this tap.`);
    writeFileSync(pathIn(folder), 'not json\n');
    expect(await refusal(pathIn(folder))).toBe(`${what} is not a file of this tap.`);
    writeFileSync(pathIn(folder), Buffer.alloc(100));
    expect(await refusal(pathIn(folder))).toBe(`${what} is damaged: it has no header line.`);
    craft(pathIn(folder), { format: 3, rows: 1, dead: 0 }, hashesOf([row(1)]), keyEntries([row(1).key]));
    expect(await refusal(pathIn(folder))).toBe(`${what} was written by a newer version of the tap (format 3; this one reads formats 1 to 2).`);
    craft(pathIn(folder), { rows: -1, dead: 0 }, hashesOf([row(1)]), keyEntries([row(1).key]));
    expect(await refusal(pathIn(folder))).toBe(`${what} is damaged: its header is not one this tap writes.`);
    await write(join(folder, 'b.gen'), [row(1)], { stream: 'phishing', fingerprint: 'fp-1' });
    expect(await refusal(join(folder, 'b.gen'))).toBe("The change store's generation b of stream training holds the rows of another stream.");
    await write(join(folder, 'c.gen'), [row(1)], { stream: 'training', fingerprint: 'fp-2' });
    expect(await refusal(join(folder, 'c.gen'))).toBe("The change store's generation c of stream training was written for another tenant, config, layout or personal-data policy.");
  });

  it('is refused when cut short, longer than its header says, or damaged in its hashes or its keys', async () => {
    const folder = tempFolder('generation-');
    const rows = Array.from({ length: 2000 }, (_, i) => row(i));
    const what = `The change store's generation ${GENERATION} of stream training`;
    await write(pathIn(folder), rows);
    const whole = readFileSync(pathIn(folder));
    truncateSync(pathIn(folder), whole.length - 1);
    expect(await refusal(pathIn(folder))).toBe(`${what} is damaged: it is cut short.`);
    writeFileSync(pathIn(folder), whole);
    appendFileSync(pathIn(folder), 'x');
    expect(await refusal(pathIn(folder))).toBe(`${what} is damaged: it is longer than its header says.`);
    const headerEnd = whole.indexOf(10) + 1;
    const flipped = (at: number) => {
      const bytes = Buffer.from(whole);
      bytes[at] ^= 0x40;
      writeFileSync(pathIn(folder), bytes);
    };
    flipped(headerEnd + 5);
    expect(await refusal(pathIn(folder))).toBe(`${what} is damaged: its hashes are not those written.`);
    flipped(headerEnd + rows.length * 16 + 200);
    expect(await refusal(pathIn(folder))).toMatch(new RegExp(`^${what} is damaged: `));
    flipped(whole.length - 6);
    expect(await refusal(pathIn(folder))).toMatch(new RegExp(`^${what} is damaged: `));
  });

  it('is refused when its keys are more or fewer than its hashes, or its last key is cut', async () => {
    const folder = tempFolder('generation-');
    const what = `The change store's generation ${GENERATION} of stream training`;
    const two = hashesOf([row(1), row(2)]);
    craft(pathIn(folder), { rows: 2, dead: 0 }, two, keyEntries([row(1).key, row(2).key, row(3).key]));
    expect(await refusal(pathIn(folder))).toBe(`${what} is damaged: it holds more keys than hashes.`);
    craft(pathIn(folder), { rows: 2, dead: 0 }, two, keyEntries([row(1).key]));
    expect(await refusal(pathIn(folder))).toBe(`${what} is damaged: it holds 1 keys for 2 hashes.`);
    craft(pathIn(folder), { rows: 2, dead: 0 }, two, keyEntries([row(1).key, row(2).key]).subarray(0, -3));
    expect(await refusal(pathIn(folder))).toBe(`${what} is damaged: its last key is cut short.`);
  });
});

describe('a generation file\'s parts, each checked before a run relies on it', () => {
  const what = `The change store's generation ${GENERATION} of stream training`;

  function flip(path: string, at: number): void {
    const bytes = readFileSync(path);
    bytes[at] ^= 0x01;
    writeFileSync(path, bytes);
  }

  const checkKeys = async (file: GenerationFile) => file.checkKeys();

  it('refuses at load a keys section with one byte flipped, wherever it lies (its CRC-32), before any key is read', async () => {
    const folder = tempFolder('generation-');
    const rows = Array.from({ length: 3000 }, (_, i) => row(i));
    await write(pathIn(folder), rows);
    const whole = readFileSync(pathIn(folder));
    const keys = keysSectionOf(pathIn(folder));
    for (const at of [keys.at, keys.at + Math.floor(keys.length / 2), keys.at + keys.length - 1]) {
      writeFileSync(pathIn(folder), whole);
      flip(pathIn(folder), at);
      expect(await refusal(pathIn(folder), EXPECT, checkKeys), `byte ${at - keys.at} of the keys`).toBe(`${what} is damaged: its keys are not those written.`);
    }
    writeFileSync(pathIn(folder), whole);
    const file = GenerationFile.open(pathIn(folder), EXPECT);
    await file.checkKeys();
    file.close();
  });

  it('reads a file of format 1 (no repeats, no CRC of its keys) as having no repeated key, its keys checked by decompressing them', async () => {
    const folder = tempFolder('generation-');
    const rows = Array.from({ length: 500 }, (_, i) => row(i));
    craft(pathIn(folder), { rows: 500, dead: 0 }, hashesOf(rows), keyEntries(rows.map((r) => r.key)));
    const file = GenerationFile.open(pathIn(folder), EXPECT);
    expect([file.header.format, file.header.repeats, file.outdated]).toEqual([1, 0, true]);
    await file.checkKeys();
    file.close();
    const keys = keysSectionOf(pathIn(folder));
    flip(pathIn(folder), keys.at + Math.floor(keys.length / 2));
    expect(await refusal(pathIn(folder), EXPECT, checkKeys)).toMatch(new RegExp(`^${what} is damaged: `));
  });

  it('holds the keys that repeated between the hashes and the keys, covered by the hashes\' CRC-32', async () => {
    const folder = tempFolder('generation-');
    const rows = [row(1), row(2), row(3)];
    const writer = await GenerationWriter.create(pathIn(folder), { ...EXPECT, parent: null, rows: 3, dead: 0, repeats: 2 });
    await writer.hashes(hashesOf(rows), 3);
    await writer.repeats(Uint32Array.from([row(3).keyHi, row(3).keyLo, row(1).keyHi, row(1).keyLo]), 2);
    await writer.keys(keyEntries(rows.map((r) => r.key)), 3);
    await writer.complete();
    const file = GenerationFile.open(pathIn(folder), EXPECT);
    const repeats = new Uint32Array(4);
    file.readHashes(new Uint32Array(12), repeats);
    expect([...repeats]).toEqual([row(3).keyHi, row(3).keyLo, row(1).keyHi, row(1).keyLo]);
    expect(await keysIn(file)).toEqual(rows.map((r) => r.key.toString()));
    file.close();
    flip(pathIn(folder), keysSectionOf(pathIn(folder)).at - 3);
    expect(await refusal(pathIn(folder))).toBe(`${what} is damaged: its hashes are not those written.`);
  });

  it('refuses to hand on a keys section that no longer is the one loaded: a copy into the next generation fails rather than carry damage', async () => {
    const folder = tempFolder('generation-');
    await write(pathIn(folder), Array.from({ length: 1000 }, (_, i) => row(i)));
    const file = GenerationFile.open(pathIn(folder), EXPECT);
    await file.checkKeys();
    const keys = keysSectionOf(pathIn(folder));
    flip(pathIn(folder), keys.at + 10);
    const copy = async () => {
      for await (const chunk of file.compressedKeys()) void chunk;
    };
    await expect(copy()).rejects.toThrow(`${what} is damaged: its keys are not those written.`);
    file.close();
  });
});

describe('KeyEntrySplitter', () => {
  it('hands out the whole key entries whatever the cuts: at every byte (also inside an entry\'s length), and a byte at a time', () => {
    const keys = [Buffer.from('["a"]'), Buffer.alloc(0), Buffer.alloc(300, 0x61), Buffer.from('["usr-0000250","prog-02","mod-02-02"]'), Buffer.from('[1]')];
    const bytes = keyEntries(keys);
    const expected = keys.map((key) => key.toString());
    const split = (chunks: Buffer[]) => {
      const splitter = new KeyEntrySplitter();
      const found: string[] = [];
      for (const chunk of chunks) for (const block of splitter.push(chunk)) for (let at = 0; at < block.length; at += keyEntryLength(block, at)) found.push(keyOf(block, at).toString());
      expect(splitter.pending).toBe(0);
      expect(splitter.entries).toBe(keys.length);
      return found;
    };
    for (let cut = 0; cut <= bytes.length; cut++) expect(split([bytes.subarray(0, cut), bytes.subarray(cut)]), `cut at ${cut}`).toEqual(expected);
    expect(split([...bytes].map((byte) => Buffer.from([byte])))).toEqual(expected);
  });

  it('holds a cut entry until it is complete', () => {
    const splitter = new KeyEntrySplitter();
    const bytes = keyEntries([Buffer.from('["usr-1"]')]);
    expect(splitter.push(bytes.subarray(0, 1))).toEqual([]);
    expect(splitter.push(bytes.subarray(1, 5))).toEqual([]);
    expect(splitter.pending).toBe(5);
    expect(splitter.push(bytes.subarray(5)).map((block) => block.toString('latin1', 2))).toEqual(['["usr-1"]']);
    expect(splitter.pending).toBe(0);
  });
});
