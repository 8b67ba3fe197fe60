import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';
import { Hash64 } from '../records/hash64.js';
import { GenerationFile, type GenerationHeader, type GenerationOrigin, GenerationRefused, GenerationWriter, HASH_WORDS, keyEntryLength, keyOf, MAX_KEY_BYTES, REPEAT_WORDS, encodeKey, isGenerationId } from './generation-file.js';

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
const DEFLATE_LEVEL = 9;

/** One live row of a generation, as the state keeps it. */
interface Row {
  key: Buffer;
  contentHi: number;
  contentLo: number;
  repeated: boolean;
}

/** The generation file at `path` (read whole: a state-sized one) as the state carries it. */
export async function encodeGeneration(path: string, expect: { stream: string; fingerprint: string }): Promise<string> {
  const file = GenerationFile.open(path, expect);
  try {
    const rows = await liveRows(file);
    rows.sort((a, b) => Buffer.compare(a.key, b.key));
    return encodeRows(rows, file.header).toString('base64');
  } finally {
    file.close();
  }
}

async function liveRows(file: GenerationFile): Promise<Row[]> {
  const hashes = new Uint32Array(file.entries * HASH_WORDS);
  const repeats = new Uint32Array(file.header.repeats * REPEAT_WORDS);
  file.readHashes(hashes, repeats);
  const repeatedKeys = new Set<string>();
  for (let at = 0; at < repeats.length; at += REPEAT_WORDS) repeatedKeys.add(`${repeats[at]}:${repeats[at + 1]}`);
  const rows: Row[] = [];
  let entry = 0;
  for await (const block of file.keyBlocks()) {
    for (let at = 0; at < block.length; at += keyEntryLength(block, at), entry++) {
      const h = entry * HASH_WORDS;
      if ((hashes[h] | hashes[h + 1] | hashes[h + 2] | hashes[h + 3]) === 0) continue;
      rows.push({ key: Buffer.from(keyOf(block, at)), contentHi: hashes[h + 2], contentLo: hashes[h + 3], repeated: repeatedKeys.has(`${hashes[h]}:${hashes[h + 1]}`) });
    }
  }
  return rows;
}

function encodeRows(rows: readonly Row[], origin: Pick<GenerationHeader, 'fingerprint' | 'parent'>): Buffer {
  const out = new ByteWriter();
  out.byte(VERSION);
  const repeated = rows.flatMap((row, i) => (row.repeated ? [i] : []));
  out.varint(rows.length);
  out.varint(repeated.length);
  out.text(origin.fingerprint);
  out.text(origin.parent ?? '');
  for (const row of rows) out.hash(row.contentHi, row.contentLo);
  repeated.forEach((row, i) => out.varint(row - (i === 0 ? 0 : repeated[i - 1])));
  out.bytes(deflateRawSync(frontCoded(rows), { level: DEFLATE_LEVEL }));
  const body = out.done();
  const crc = Buffer.alloc(4);
  crc.writeUInt32LE(crc32(body));
  return Buffer.concat([body, crc]);
}

/** Each key as the bytes it shares with the one before, the rest's length, and the rest. */
function frontCoded(rows: readonly Row[]): Buffer {
  const out = new ByteWriter();
  let previous: Buffer = Buffer.alloc(0);
  for (const { key } of rows) {
    let shared = 0;
    while (shared < previous.length && shared < key.length && previous[shared] === key[shared]) shared++;
    out.varint(shared);
    out.varint(key.length - shared);
    out.bytes(key.subarray(shared));
    previous = key;
  }
  return out.done();
}

/**
 * Writes the generation a state carries (`data`, from encodeGeneration) as
 * the file `path` (through `<path>.partial`: complete or absent) of stream
 * `stream`; throws GenerationRefused, with the reason in one sentence, when
 * `data` is not one.
 */
export async function decodeGeneration(data: string, path: string, stream: string, what: string): Promise<void> {
  const rows = decodeRows(Buffer.from(data, 'base64'), what);
  const keys = Buffer.alloc(rows.rows.reduce((n, row) => n + 2 + row.key.length, 0));
  const hashes = new Uint32Array(rows.rows.length * HASH_WORDS);
  const repeats = new Uint32Array(rows.repeated.length * REPEAT_WORDS);
  const hash = new Hash64();
  let at = 0;
  rows.rows.forEach((row, i) => {
    hash.of(row.key, 0, row.key.length);
    hashes.set([hash.hi, hash.lo, row.contentHi, row.contentLo], i * HASH_WORDS);
    at = encodeKey(keys, at, row.key);
  });
  rows.repeated.forEach((row, i) => repeats.set([hashes[row * HASH_WORDS], hashes[row * HASH_WORDS + 1]], i * REPEAT_WORDS));
  const origin: GenerationOrigin = { stream, fingerprint: rows.fingerprint, parent: rows.parent };
  const writer = await GenerationWriter.create(path, { ...origin, rows: rows.rows.length, dead: 0, repeats: rows.repeated.length });
  await writer.hashes(hashes, rows.rows.length);
  await writer.repeats(repeats, rows.repeated.length);
  await writer.keys(keys, rows.rows.length);
  await writer.complete();
}

interface Decoded {
  rows: Row[];
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
  const contents = Array.from({ length: count }, () => input.hash());
  const repeated: number[] = [];
  for (let i = 0; i < repeatCount; i++) repeated.push((repeated.at(-1) ?? 0) + input.varint());
  if (repeated.some((row, i) => row >= count || (i > 0 && row <= repeated[i - 1]))) throw damaged('it names a repeated row it does not hold');
  const keys = unfrontCoded(inflateKeys(input.rest(), count, damaged), count, damaged);
  const rows = contents.map(([contentHi, contentLo], i) => ({ key: keys[i], contentHi, contentLo, repeated: false }));
  return { rows, repeated, fingerprint, parent: parent === '' ? null : parent };
}

function inflateKeys(deflated: Buffer, count: number, damaged: (why: string) => Error): Buffer {
  try {
    // No more than the longest keys could take: a crafted blob cannot inflate without bound.
    return inflateRawSync(deflated, { maxOutputLength: Math.max(1, count) * (MAX_KEY_BYTES + 8) });
  } catch {
    throw damaged('its keys are not valid deflate data');
  }
}

function unfrontCoded(bytes: Buffer, count: number, damaged: (why: string) => Error): Buffer[] {
  const input = new ByteReader(bytes, () => damaged('its keys are cut short'));
  const keys: Buffer[] = [];
  let previous: Buffer = Buffer.alloc(0);
  for (let i = 0; i < count; i++) {
    const shared = input.varint();
    const rest = input.take(input.varint());
    if (shared > previous.length || shared + rest.length > MAX_KEY_BYTES) throw damaged('its keys are not the ones written');
    const key = Buffer.concat([previous.subarray(0, shared), rest]);
    if (i > 0 && Buffer.compare(previous, key) >= 0) throw damaged('its keys are not in order');
    keys.push(key);
    previous = key;
  }
  if (!input.atEnd()) throw damaged('it holds more keys than rows');
  return keys;
}

/** Bytes appended to a growing buffer. */
class ByteWriter {
  private buffer = Buffer.alloc(1024);
  private at = 0;

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
    this.buffer.writeUInt16LE(contentHi & 0xffff, this.at);
    this.buffer.writeUInt32LE(contentLo >>> 0, this.at + 2);
    this.at += STATE_HASH_BYTES;
  }

  bytes(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buffer.set(bytes, this.at);
    this.at += bytes.length;
  }

  done(): Buffer {
    return this.buffer.subarray(0, this.at);
  }

  private room(bytes: number): void {
    if (this.at + bytes <= this.buffer.length) return;
    const grown = Buffer.alloc(Math.max(this.buffer.length * 2, this.at + bytes));
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

  hash(): [number, number] {
    const bytes = this.take(STATE_HASH_BYTES);
    return [bytes.readUInt16LE(0), bytes.readUInt32LE(2)];
  }

  take(length: number): Buffer {
    if (this.at + length > this.bytes.length) throw this.short();
    const bytes = this.bytes.subarray(this.at, this.at + length);
    this.at += length;
    return bytes;
  }

  rest(): Buffer {
    return this.take(this.bytes.length - this.at);
  }

  atEnd(): boolean {
    return this.at === this.bytes.length;
  }
}
