import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';
import { Hash64 } from '../records/hash64.js';
import { GenerationFile, type GenerationHeader, type GenerationOrigin, GenerationRefused, GenerationWriter, HASH_WORDS, isGenerationId, KEY_HEAD, keyEntryLength, MAX_KEY_BYTES, REPEAT_WORDS } from './generation-file.js';
import { KeyTable } from './key-table.js';

/**
 * A generation as a stream's state carries it (the state home: homes.ts):
 * what the target holds in as few bytes as a row can take, for orchestrators
 * that keep nothing but the state. Base64 of:
 *
 *   version  1 byte (1)
 *   counts   rows, repeated keys (varints)
 *   origin   fingerprint and parent (varint length, UTF-8; an empty parent: none)
 *   hashes   6 bytes a row, in key order: the content hash's low 48 bits
 *            (contentHi's low 16 bits, contentLo; little-endian)
 *   repeats  the rows whose key repeated, as gaps from the last (varints)
 *   keys     raw deflate of the keys in key order, each as the bytes it
 *            shares with the one before (a varint), the rest's length (a
 *            varint) and the rest
 *   crc      CRC-32 of all the above (4 bytes, little-endian)
 *
 * Keys sorted and front-coded compress to a few bytes a row (the key hashes
 * are not kept: they are the keys' Hash64); the content hashes do not
 * compress and take 8 of base64's bytes a row. 48 bits of content hash are
 * enough: a change pass compares 48 bits (sent-rows.ts), a row that changed
 * and hashes alike is one in 2^48. Decoding writes the generation file the
 * rest of the store reads (generation-file.ts), its rows in key order.
 */

const VERSION = 1;
/** Bytes of a row's content hash here. */
export const STATE_HASH_BYTES = 6;
/** Base64 of the hash bytes alone: the least a row takes in the state (the cap check starts from it). */
export const MIN_STATE_BYTES_A_ROW = (STATE_HASH_BYTES * 4) / 3;
/**
 * Level 6: on the front-coded keys of 50,000 sandbox rows, level 9 saved
 * less than 0.1 byte a row and took twice as long (bench/change-store.ts
 * --state-levels).
 */
export const DEFLATE_LEVEL = 6;

/**
 * A generation's live rows, as flat arrays (nothing allocated a row: a
 * state-sized generation has up to a few hundred thousand): their key
 * entries in one buffer, in the order of the generation, and the place,
 * length and content hash of each live row's key.
 */
interface FlatRows {
  count: number;
  keys: Buffer;
  /** Where each row's key JSON starts in `keys`, and its length. */
  starts: Int32Array;
  lengths: Int32Array;
  /** Two words a row: contentHi, contentLo. */
  contents: Uint32Array;
  /** 1 for a row whose key repeated. */
  repeated: Uint8Array;
}

/** The generation file at `path` (read whole: a state-sized one) as the state carries it. */
export async function encodeGeneration(path: string, expect: { stream: string; fingerprint: string }, level = DEFLATE_LEVEL): Promise<string> {
  const file = GenerationFile.open(path, expect);
  try {
    const rows = await liveRows(file);
    return encodeRows(rows, keyOrder(rows), file.header, level).toString('base64');
  } finally {
    file.close();
  }
}

async function liveRows(file: GenerationFile): Promise<FlatRows> {
  const hashes = new Uint32Array(file.entries * HASH_WORDS);
  const repeats = new Uint32Array(file.header.repeats * REPEAT_WORDS);
  file.readHashes(hashes, repeats);
  const repeatedKeys = new KeyTable(repeats, REPEAT_WORDS, file.header.repeats);
  for (let r = 0; r < file.header.repeats; r++) repeatedKeys.put(repeatedKeys.slotOf(repeats[r * REPEAT_WORDS], repeats[r * REPEAT_WORDS + 1]), r);
  const keys = await wholeKeys(file);
  const rows: FlatRows = { count: 0, keys, starts: new Int32Array(file.entries), lengths: new Int32Array(file.entries), contents: new Uint32Array(file.entries * 2), repeated: new Uint8Array(file.entries) };
  for (let entry = 0, at = 0; entry < file.entries; at += keyEntryLength(keys, at), entry++) {
    const h = entry * HASH_WORDS;
    if ((hashes[h] | hashes[h + 1] | hashes[h + 2] | hashes[h + 3]) === 0) continue;
    const row = rows.count++;
    rows.starts[row] = at + KEY_HEAD;
    rows.lengths[row] = keyEntryLength(keys, at) - KEY_HEAD;
    rows.contents[row * 2] = hashes[h + 2];
    rows.contents[row * 2 + 1] = hashes[h + 3];
    rows.repeated[row] = file.header.repeats > 0 && repeatedKeys.find(hashes[h], hashes[h + 1]) >= 0 ? 1 : 0;
  }
  return rows;
}

/** The generation's key entries, every block in one buffer. */
async function wholeKeys(file: GenerationFile): Promise<Buffer> {
  const blocks: Buffer[] = [];
  // Each block is a view on a buffer the next one reuses: copied.
  for await (const block of file.keyBlocks()) blocks.push(Buffer.from(block));
  return Buffer.concat(blocks);
}

/** The rows' numbers in the order of their keys' bytes. */
function keyOrder(rows: FlatRows): Int32Array {
  const { keys, starts, lengths } = rows;
  const order = new Int32Array(rows.count);
  for (let row = 0; row < rows.count; row++) order[row] = row;
  return order.sort((a, b) => compareBytes(keys, starts[a], lengths[a], keys, starts[b], lengths[b]));
}

/** Buffer.compare of two ranges, without making a view of either (it runs n log n times). */
function compareBytes(x: Uint8Array, xStart: number, xLength: number, y: Uint8Array, yStart: number, yLength: number): number {
  const length = Math.min(xLength, yLength);
  for (let i = 0; i < length; i++) {
    const difference = x[xStart + i] - y[yStart + i];
    if (difference !== 0) return difference;
  }
  return xLength - yLength;
}

function encodeRows(rows: FlatRows, order: Int32Array, origin: Pick<GenerationHeader, 'fingerprint' | 'parent'>, level: number): Buffer {
  const keys = deflateRawSync(frontCoded(rows, order), { level });
  const out = new ByteWriter(64 + rows.count * (STATE_HASH_BYTES + 1) + keys.length);
  out.byte(VERSION);
  let repeatedCount = 0;
  for (let row = 0; row < rows.count; row++) repeatedCount += rows.repeated[row];
  out.varint(rows.count);
  out.varint(repeatedCount);
  out.text(origin.fingerprint);
  out.text(origin.parent ?? '');
  for (let i = 0; i < rows.count; i++) out.hash(rows.contents[order[i] * 2], rows.contents[order[i] * 2 + 1]);
  for (let i = 0, last = 0; i < rows.count; i++) {
    if (rows.repeated[order[i]] === 0) continue;
    out.varint(i - last);
    last = i;
  }
  out.bytes(keys);
  const body = out.done();
  const crc = Buffer.alloc(4);
  crc.writeUInt32LE(crc32(body));
  return Buffer.concat([body, crc]);
}

/** Each key, in `order`, as the bytes it shares with the one before, the rest's length, and the rest. */
function frontCoded(rows: FlatRows, order: Int32Array): Buffer {
  const { keys, starts, lengths } = rows;
  let bound = 0;
  for (let row = 0; row < rows.count; row++) bound += lengths[row] + 6;
  const out = new ByteWriter(bound);
  let previous = -1;
  for (let i = 0; i < rows.count; i++) {
    const row = order[i];
    const shared = previous < 0 ? 0 : sharedLength(keys, starts[previous], lengths[previous], starts[row], lengths[row]);
    out.varint(shared);
    out.varint(lengths[row] - shared);
    out.range(keys, starts[row] + shared, starts[row] + lengths[row]);
    previous = row;
  }
  return out.done();
}

function sharedLength(bytes: Uint8Array, xStart: number, xLength: number, yStart: number, yLength: number): number {
  const length = Math.min(xLength, yLength);
  let shared = 0;
  while (shared < length && bytes[xStart + shared] === bytes[yStart + shared]) shared++;
  return shared;
}

/**
 * Writes the generation a state carries (`data`, from encodeGeneration) as
 * the file `path` (through `<path>.partial`: complete or absent) of stream
 * `stream`; throws GenerationRefused, with the reason in one sentence, when
 * `data` is not one.
 */
export async function decodeGeneration(data: string, path: string, stream: string, what: string): Promise<void> {
  const decoded = decodeRows(Buffer.from(data, 'base64'), what);
  const { count, hashes, keys, repeated } = decoded;
  const hash = new Hash64();
  for (let row = 0, at = 0; row < count; row++, at += keyEntryLength(keys, at)) {
    hash.of(keys, at + KEY_HEAD, at + keyEntryLength(keys, at));
    hashes[row * HASH_WORDS] = hash.hi;
    hashes[row * HASH_WORDS + 1] = hash.lo;
  }
  const repeats = new Uint32Array(repeated.length * REPEAT_WORDS);
  repeated.forEach((row, i) => repeats.set([hashes[row * HASH_WORDS], hashes[row * HASH_WORDS + 1]], i * REPEAT_WORDS));
  const origin: GenerationOrigin = { stream, fingerprint: decoded.fingerprint, parent: decoded.parent };
  const writer = await GenerationWriter.create(path, { ...origin, rows: count, dead: 0, repeats: repeated.length });
  await writer.hashes(hashes, count);
  await writer.repeats(repeats, repeated.length);
  await writer.keys(keys, count);
  await writer.complete();
}

interface Decoded {
  count: number;
  /** HASH_WORDS a row, the content hash filled in (the key hash is the key's: decodeGeneration). */
  hashes: Uint32Array;
  /** The key entries, in key order. */
  keys: Buffer;
  repeated: number[];
  fingerprint: string;
  parent: string | null;
}

function decodeRows(bytes: Buffer, what: string): Decoded {
  const damaged = (why: string) => new GenerationRefused(`${what} is damaged: ${why}.`);
  if (bytes.length < 5 || crc32(bytes.subarray(0, -4)) !== bytes.readUInt32LE(bytes.length - 4)) throw damaged('it is not the one written (its checksum differs)');
  const input = new ByteReader(bytes.subarray(0, -4), () => damaged('it is cut short'));
  if (input.byte() !== VERSION) throw new GenerationRefused(`${what} was written by another version of the tap.`);
  const count = input.varint();
  const repeatCount = input.varint();
  const fingerprint = input.text();
  const parent = input.text();
  if (parent !== '' && !isGenerationId(parent)) throw damaged('its parent is not a generation');
  const contents = input.take(count * STATE_HASH_BYTES);
  const hashes = new Uint32Array(count * HASH_WORDS);
  for (let row = 0; row < count; row++) {
    const at = row * STATE_HASH_BYTES;
    hashes[row * HASH_WORDS + 2] = contents[at] | (contents[at + 1] << 8);
    hashes[row * HASH_WORDS + 3] = (contents[at + 2] | (contents[at + 3] << 8) | (contents[at + 4] << 16) | (contents[at + 5] << 24)) >>> 0;
  }
  const repeated: number[] = [];
  for (let i = 0; i < repeatCount; i++) repeated.push((repeated.at(-1) ?? 0) + input.varint());
  if (repeated.some((row, i) => row >= count || (i > 0 && row <= repeated[i - 1]))) throw damaged('it names a repeated row it does not hold');
  const keys = keyEntries(inflateKeys(input.rest(), count, damaged), count, damaged);
  return { count, hashes, keys, repeated, fingerprint, parent: parent === '' ? null : parent };
}

function inflateKeys(deflated: Buffer, count: number, damaged: (why: string) => Error): Buffer {
  try {
    // No more than the longest keys could take: a crafted blob cannot inflate without bound.
    return inflateRawSync(deflated, { maxOutputLength: Math.max(1, count) * (MAX_KEY_BYTES + 8) });
  } catch {
    throw damaged('its keys are not valid deflate data');
  }
}

/** The front-coded keys as key entries (generation-file.ts), each checked to follow the one before. */
function keyEntries(frontCodedKeys: Buffer, count: number, damaged: (why: string) => Error): Buffer {
  const cut = () => damaged('its keys are cut short');
  // First the room they take, then the entries: two passes over bytes in the cache, no buffer grown.
  let room = 0;
  const sizing = new ByteReader(frontCodedKeys, cut);
  for (let i = 0; i < count; i++) {
    const shared = sizing.varint();
    const rest = sizing.varint();
    sizing.skip(rest);
    room += KEY_HEAD + shared + rest;
  }
  if (!sizing.atEnd()) throw damaged('it holds more keys than rows');
  const keys = Buffer.allocUnsafe(room);
  const input = new ByteReader(frontCodedKeys, cut);
  for (let i = 0, at = 0, previous = -1; i < count; i++) {
    const shared = input.varint();
    const restLength = input.varint();
    const restAt = input.skip(restLength);
    const previousLength = previous < 0 ? 0 : keyEntryLength(keys, previous) - KEY_HEAD;
    const length = shared + restLength;
    if (shared > previousLength || length > MAX_KEY_BYTES) throw damaged('its keys are not the ones written');
    keys[at] = length & 0xff;
    keys[at + 1] = length >>> 8;
    copyBytes(keys, previous + KEY_HEAD, shared, keys, at + KEY_HEAD);
    copyBytes(frontCodedKeys, restAt, restLength, keys, at + KEY_HEAD + shared);
    if (previous >= 0 && compareBytes(keys, previous + KEY_HEAD, previousLength, keys, at + KEY_HEAD, length) >= 0) throw damaged('its keys are not in order');
    previous = at;
    at += KEY_HEAD + length;
  }
  return keys;
}

/** Copies `length` bytes a byte at a time: keys are short, and a view or a native call for each would cost more than its bytes. */
function copyBytes(from: Uint8Array, fromAt: number, length: number, to: Uint8Array, toAt: number): void {
  for (let i = 0; i < length; i++) to[toAt + i] = from[fromAt + i];
}

/** Bytes appended to a growing buffer. */
class ByteWriter {
  private buffer: Buffer;
  private at = 0;

  constructor(expectedBytes = 1024) {
    this.buffer = Buffer.allocUnsafe(Math.max(16, expectedBytes));
  }

  byte(value: number): void {
    this.room(1);
    this.buffer[this.at++] = value;
  }

  varint(value: number): void {
    for (let v = value; ; v = Math.floor(v / 128)) {
      if (v < 128) return this.byte(v);
      this.byte((v % 128) | 128);
    }
  }

  text(value: string): void {
    const bytes = Buffer.from(value, 'utf8');
    this.varint(bytes.length);
    this.bytes(bytes);
  }

  hash(contentHi: number, contentLo: number): void {
    this.room(STATE_HASH_BYTES);
    // Byte by byte: Buffer's writeUInt*LE check their arguments in a way that allocates, a few objects a row.
    const { buffer, at } = this;
    buffer[at] = contentHi & 0xff;
    buffer[at + 1] = (contentHi >>> 8) & 0xff;
    buffer[at + 2] = contentLo & 0xff;
    buffer[at + 3] = (contentLo >>> 8) & 0xff;
    buffer[at + 4] = (contentLo >>> 16) & 0xff;
    buffer[at + 5] = contentLo >>> 24;
    this.at += STATE_HASH_BYTES;
  }

  bytes(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buffer.set(bytes, this.at);
    this.at += bytes.length;
  }

  /** bytes[start, end), copied without a view of them (a few dozen bytes a row). */
  range(bytes: Uint8Array, start: number, end: number): void {
    this.room(end - start);
    copyBytes(bytes, start, end - start, this.buffer, this.at);
    this.at += end - start;
  }

  done(): Buffer {
    return this.buffer.subarray(0, this.at);
  }

  private room(bytes: number): void {
    if (this.at + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.at + bytes));
    this.buffer.copy(grown, 0, 0, this.at);
    this.buffer = grown;
  }
}

/** Bytes read in order; `short` makes the error for bytes that end too soon. */
class ByteReader {
  private at = 0;

  constructor(
    private readonly bytes: Buffer,
    private readonly short: () => Error,
  ) {}

  byte(): number {
    if (this.at >= this.bytes.length) throw this.short();
    return this.bytes[this.at++];
  }

  varint(): number {
    let value = 0;
    for (let scale = 1; ; scale *= 128) {
      const b = this.byte();
      value += (b & 127) * scale;
      if (b < 128) return value;
      if (scale > 2 ** 42) throw this.short();
    }
  }

  text(): string {
    return this.take(this.varint()).toString('utf8');
  }

  take(length: number): Buffer {
    if (this.at + length > this.bytes.length) throw this.short();
    const bytes = this.bytes.subarray(this.at, this.at + length);
    this.at += length;
    return bytes;
  }

  /** Steps over `length` bytes; where they start. */
  skip(length: number): number {
    if (this.at + length > this.bytes.length) throw this.short();
    this.at += length;
    return this.at - length;
  }

  rest(): Buffer {
    return this.take(this.bytes.length - this.at);
  }

  atEnd(): boolean {
    return this.at === this.bytes.length;
  }
}
