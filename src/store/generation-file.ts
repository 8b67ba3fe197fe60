import { Readable } from 'node:stream';
import { open, rename, rm } from 'node:fs/promises';
import { endianness } from 'node:os';
import { basename, dirname } from 'node:path';
import { crc32, createGunzip, createGzip, type Gzip } from 'node:zlib';
import { fs } from '../builtins.js';
import { PRIVATE_FILE_MODE } from '../output/private-files.js';

/**
 * One generation of a stream's change store: the file
 * `<stream folder>/<generation>.gen`, in three parts:
 *
 *   header   one line of JSON (padded with spaces to a fixed length):
 *            {"tap":"tap-report-dump","format":2,"stream":…,"fingerprint":…,"parent":…,"rows":N,
 *             "dead":D,"repeats":R,"created":ISO,"hashes_crc32":…,"keys_bytes":K,"keys_crc32":…}
 *   hashes   (N + D) entries × 16 bytes: keyHi, keyLo, contentHi, contentLo (u32 little-endian)
 *   repeats  R × 8 bytes: keyHi, keyLo of the keys that came more than once in the run
 *            that wrote the file (u32 little-endian); hashes_crc32 covers hashes and repeats
 *   keys     K bytes: gzip (one or more members) of N + D key entries: key length (u16
 *            little-endian), key JSON; keys_crc32 is the CRC-32 of these K bytes as stored
 *
 * `parent`: the generation the run that wrote it built on (the confirmed one
 * it carried), or null (a first run, or one that could not trust its state's
 * generation; and a file written before generations named their parent): a
 * stream's generations form chains, one a pipeline, and a run removes only
 * those of its own chain (change-store.ts keepOnly).
 *
 * N rows the target holds, and D dead entries: rows gone, their hashes zero,
 * their keys left in place, so that a generation that drops rows need not
 * rewrite the keys (next-generation.ts compacts them away now and then).
 * The hashes are random: they do not compress, and compressing them with the
 * keys made deflate five times slower. Apart, a run loads the hashes with one
 * read into its typed array (no decompression, no parsing) and reads the keys
 * only to list the rows gone; the next generation copies the keys section as
 * it is stored and appends a gzip member of the new keys.
 *
 * A key that repeats is one the target got twice in a run (the last one
 * stayed): the next run holds such a key's rows to the end of its reads and
 * compares only the last (sync/pass/changed-rows.ts), so an unchanged dump sends
 * nothing. Format 1 (before repeats and keys_crc32) is read as having no
 * repeats, its keys checked by decompressing them.
 *
 * Written to `<generation>.gen.partial`, fsynced, renamed: a generation file
 * is complete or absent. A file that is not what the run expects (another
 * stream or fingerprint, a newer format, cut short, damaged) is refused with a
 * reason, one sentence. Every part is checked when the file is loaded, before
 * the run relies on it: damage is refused, never copied into the next one.
 */

export const GENERATION_FORMAT = 2;
/** The oldest format this tap reads. */
const OLDEST_FORMAT = 1;
export const GENERATION_SUFFIX = '.gen';
export const PARTIAL_SUFFIX = '.partial';
/** Bytes of an entry in the hashes section, and u32 numbers. */
export const HASH_BYTES = 16;
export const HASH_WORDS = 4;
/** Bytes of an entry in the repeats section (a key hash), and u32 numbers. */
export const REPEAT_BYTES = 8;
export const REPEAT_WORDS = 2;
/** The bytes of a key entry before its key. */
export const KEY_HEAD = 2;
export const MAX_KEY_BYTES = 0xffff;
/**
 * Level 1: on the keys of 1,000,000 sandbox-like rows (bench/change-store.ts
 * --levels) levels 2 to 6 save at most 1.4 bytes a row (of 19 to 22) and
 * take up to five times as long.
 */
export const GZIP_LEVEL = 1;
const CHUNK = 128 * 1024;
/**
 * The decompressed keys come in chunks this small: each chunk is a fresh
 * buffer outside the heap, freed only when a scavenge finds it dead, and
 * scavenges come with the small objects made per chunk; in chunks of 128 KiB
 * some 20 MiB of them piled up while the keys of 1,000,000 rows were read.
 */
const KEYS_CHUNK = 16 * 1024;
/** A header line longer than this is not one of ours. */
const MAX_HEADER_BYTES = 64 * 1024;
const LITTLE_ENDIAN = endianness() === 'LE';

/** The generation ids the store makes (change-store.ts newGenerationId): `20261123T101500Z-1a2b3c4d`. */
const GENERATION_ID = /^\d{8}T\d{6}Z-[0-9a-f]{8}$/;

export function isGenerationId(name: string): boolean {
  return GENERATION_ID.test(name);
}

export function generationFileName(generation: string): string {
  return `${generation}${GENERATION_SUFFIX}`;
}

/** What a generation file must be for the run that reads it. */
export interface GenerationExpectation {
  readonly stream: string;
  /** Of the tenant, config, layout and personal-data policy the hashes were made under. */
  readonly fingerprint: string;
}

/** What a run writes a generation as: for its stream and fingerprint, built on `parent`. */
export interface GenerationOrigin extends GenerationExpectation {
  /** The generation the run built on (the confirmed one it carried), or null: a first run, or one that could not trust its state's generation. */
  readonly parent: string | null;
}

export interface GenerationHeader extends GenerationOrigin {
  readonly tap: 'tap-report-dump';
  readonly format: number;
  /** Rows the target holds (live entries). */
  readonly rows: number;
  /** Dead entries: rows gone whose key entries are still in the file. */
  readonly dead: number;
  /** Keys that came more than once in the run that wrote the file (0 in format 1). */
  readonly repeats: number;
  readonly created: string;
  readonly hashes_crc32: number;
  readonly keys_bytes: number;
  /** The CRC-32 of the keys section as stored (format 2 on). */
  readonly keys_crc32?: number;
}

/** A generation file the run cannot trust; the message is the reason, one sentence. */
export class GenerationRefused extends Error {
  override readonly name = 'GenerationRefused';
}

/** The length of the key entry at `at` in a block of whole key entries. */
export function keyEntryLength(block: Buffer, at: number): number {
  // Not readUInt16LE: its argument check allocates, and this runs for every key read.
  return KEY_HEAD + (block[at] | (block[at + 1] << 8));
}

/** The key JSON of the key entry at `at` (a view on the block). */
export function keyOf(block: Buffer, at: number): Buffer {
  return block.subarray(at + KEY_HEAD, at + keyEntryLength(block, at));
}

/** Writes a key entry at `at` (room for KEY_HEAD + key bytes); returns where the next goes. */
export function encodeKey(target: Buffer, at: number, key: Uint8Array, keyLength = key.length): number {
  target[at] = keyLength & 0xff;
  target[at + 1] = keyLength >>> 8;
  // Byte by byte: a key is a few dozen bytes, and a view or a native copy would cost more than the bytes.
  for (let i = 0, to = at + KEY_HEAD; i < keyLength; i++, to++) target[to] = key[i];
  return at + KEY_HEAD + keyLength;
}

/** A generation file opened for reading, its header checked against the run and the file's size. */
export class GenerationFile {
  private constructor(
    readonly header: GenerationHeader,
    /** "The change store's generation … of stream …": how reasons name the file. */
    readonly what: string,
    /** Its identity on disk when opened: a file replaced meanwhile is another file. */
    readonly identity: string,
    private fd: number | undefined,
    private readonly hashesAt: number,
  ) {}

  /** Opens `path` and checks its header; throws GenerationRefused with the reason it cannot be trusted. */
  static open(path: string, expect: GenerationExpectation): GenerationFile {
    const what = `The change store's generation ${basename(path, GENERATION_SUFFIX)} of stream ${expect.stream}`;
    const { fd, size, identity } = openFile(path, what, expect.stream);
    try {
      const { line, length } = headerLine(fd, size, what);
      const header = checkHeader(line, expect, what);
      const expected = length + (header.rows + header.dead) * HASH_BYTES + header.repeats * REPEAT_BYTES + header.keys_bytes;
      if (size < expected) throw new GenerationRefused(`${what} is damaged: it is cut short.`);
      if (size > expected) throw new GenerationRefused(`${what} is damaged: it is longer than its header says.`);
      return new GenerationFile(header, what, identity, fd, length);
    } catch (error) {
      fs.closeSync(fd);
      throw error;
    }
  }

  /** Entries: rows and dead entries. */
  get entries(): number {
    return this.header.rows + this.header.dead;
  }

  /** Whether the file is of an older format than this tap writes (the next run writes it anew). */
  get outdated(): boolean {
    return this.header.format < GENERATION_FORMAT;
  }

  /**
   * Reads the hashes into `into` (HASH_WORDS × entries) and the repeated keys
   * into `repeats` (REPEAT_WORDS × header.repeats), native byte order; throws
   * GenerationRefused if they are not those written.
   */
  readHashes(into: Uint32Array, repeats: Uint32Array = new Uint32Array(this.header.repeats * REPEAT_WORDS)): void {
    const hashes = Buffer.from(into.buffer, into.byteOffset, this.entries * HASH_BYTES);
    const repeated = Buffer.from(repeats.buffer, repeats.byteOffset, this.header.repeats * REPEAT_BYTES);
    this.readAt(hashes, this.hashesAt);
    this.readAt(repeated, this.hashesAt + hashes.length);
    if (crcAfter(repeated, crcAfter(hashes, 0)) !== this.header.hashes_crc32) throw new GenerationRefused(`${this.what} is damaged: its hashes are not those written.`);
    if (!LITTLE_ENDIAN) {
      hashes.swap32();
      repeated.swap32();
    }
  }

  /**
   * Checks the keys section: its CRC-32 (format 2 on), or, in a file of
   * format 1, which has none, by decompressing it and counting its keys.
   * Throws GenerationRefused if it is damaged.
   */
  async checkKeys(): Promise<void> {
    if (this.header.keys_crc32 === undefined) {
      for await (const block of this.keyBlocks()) void block;
      return;
    }
    let crc = 0;
    for await (const chunk of range(this.openFd(), this.keysAt, this.header.keys_bytes, this.what)) crc = crcAfter(chunk, crc);
    if (crc !== this.header.keys_crc32) throw new GenerationRefused(`${this.what} is damaged: its keys are not those written.`);
  }

  /** The keys section as stored (gzip), to copy into the next generation unchanged; throws GenerationRefused at its end if it is not the one written. */
  async *compressedKeys(): AsyncGenerator<Buffer> {
    let crc = 0;
    for await (const chunk of range(this.openFd(), this.keysAt, this.header.keys_bytes, this.what)) {
      crc = crcAfter(chunk, crc);
      yield chunk;
    }
    if (this.header.keys_crc32 !== undefined && crc !== this.header.keys_crc32) throw new GenerationRefused(`${this.what} is damaged: its keys are not those written.`);
  }

  /**
   * The key entries, in blocks of whole entries (views that stay valid).
   * Throws GenerationRefused at the end if the keys are cut short, damaged, or
   * another number than the entries.
   */
  async *keyBlocks(): AsyncGenerator<Buffer> {
    const entries = this.entries;
    const splitter = new KeyEntrySplitter();
    if (this.header.keys_bytes > 0) {
      const gunzip = createGunzip({ chunkSize: KEYS_CHUNK });
      // Not fs.createReadStream on the fd: destroying it, when the reader stops early, would close the fd.
      const source = Readable.from(range(this.openFd(), this.keysAt, this.header.keys_bytes, this.what), { objectMode: false });
      source.on('error', (error) => gunzip.destroy(error)).pipe(gunzip);
      try {
        for await (const chunk of gunzip as AsyncIterable<Buffer>) {
          for (const block of splitter.push(chunk)) {
            if (splitter.entries > entries) throw new GenerationRefused(`${this.what} is damaged: it holds more keys than hashes.`);
            yield block;
          }
        }
      } catch (error) {
        throw refusal(error, this.what);
      } finally {
        gunzip.destroy();
        source.destroy();
      }
    }
    if (splitter.pending > 0) throw new GenerationRefused(`${this.what} is damaged: its last key is cut short.`);
    if (splitter.entries !== entries) throw new GenerationRefused(`${this.what} is damaged: it holds ${splitter.entries} keys for ${entries} hashes.`);
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }

  private get keysAt(): number {
    return this.hashesAt + this.entries * HASH_BYTES + this.header.repeats * REPEAT_BYTES;
  }

  private readAt(into: Buffer, position: number): void {
    for (let done = 0; done < into.length; ) {
      const read = fs.readSync(this.openFd(), into, done, into.length - done, position + done);
      if (read === 0) throw new GenerationRefused(`${this.what} is damaged: it is cut short.`);
      done += read;
    }
  }

  private openFd(): number {
    if (this.fd === undefined) throw new Error(`${this.what} was closed.`);
    return this.fd;
  }
}

/** `length` bytes of the file from `start`, in chunks (each a buffer of its own). */
async function* range(fd: number, start: number, length: number, what: string): AsyncGenerator<Buffer> {
  for (let done = 0; done < length; ) {
    const chunk = Buffer.allocUnsafe(Math.min(CHUNK, length - done));
    const read = await readAt(fd, chunk, start + done);
    if (read === 0) throw new GenerationRefused(`${what} is damaged: it is cut short.`);
    done += read;
    yield chunk.subarray(0, read);
  }
}

function readAt(fd: number, into: Buffer, position: number): Promise<number> {
  return new Promise((resolve, reject) => fs.read(fd, into, 0, into.length, position, (error, read) => (error ? reject(error) : resolve(read))));
}

/**
 * Key entries as they come out of the decompressor, cut anywhere, in blocks
 * of whole entries: views on the chunks, but for an entry cut by a chunk's
 * end, which alone is copied.
 */
export class KeyEntrySplitter {
  /** Entries handed out. */
  entries = 0;
  private tail: Buffer = Buffer.alloc(0);

  /** The whole entries completed by `chunk`, in one or two blocks. */
  push(chunk: Buffer): Buffer[] {
    const blocks: Buffer[] = [];
    let rest = chunk;
    if (this.tail.length > 0) {
      const joined = this.complete(chunk);
      if (joined === undefined) return blocks;
      blocks.push(joined.entry);
      this.entries++;
      rest = joined.rest;
    }
    let end = 0;
    while (end + KEY_HEAD <= rest.length && end + keyEntryLength(rest, end) <= rest.length) {
      end += keyEntryLength(rest, end);
      this.entries++;
    }
    if (end > 0) blocks.push(rest.subarray(0, end));
    this.tail = rest.subarray(end);
    return blocks;
  }

  /** Bytes of a cut entry held. */
  get pending(): number {
    return this.tail.length;
  }

  /** The held cut entry completed from the start of `chunk` and the rest of the chunk; or, when the chunk does not complete it, undefined (the chunk is held too). */
  private complete(chunk: Buffer): { entry: Buffer; rest: Buffer } | undefined {
    const tail = this.tail;
    const head = tail.length >= KEY_HEAD ? tail : Buffer.concat([tail, chunk.subarray(0, KEY_HEAD - tail.length)]);
    const need = head.length < KEY_HEAD ? Number.POSITIVE_INFINITY : keyEntryLength(head, 0) - tail.length;
    if (chunk.length < need) {
      this.tail = Buffer.concat([tail, chunk]);
      return undefined;
    }
    this.tail = Buffer.alloc(0);
    return { entry: Buffer.concat([tail, chunk.subarray(0, need)]), rest: chunk.subarray(need) };
  }
}

function openFile(path: string, what: string, stream: string): { fd: number; size: number; identity: string } {
  let fd: number;
  try {
    fd = fs.openSync(path, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new GenerationRefused(`The change store holds no generation ${basename(path, GENERATION_SUFFIX)} of stream ${stream} (a new machine or container, or a store removed or moved).`);
    throw new GenerationRefused(`${what} cannot be read (${code ?? 'error'}).`);
  }
  try {
    const info = fs.fstatSync(fd);
    return { fd, size: info.size, identity: `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}` };
  } catch (error) {
    fs.closeSync(fd);
    throw new GenerationRefused(`${what} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
}

/** The header line and its length with the newline (where the hashes start). */
function headerLine(fd: number, size: number, what: string): { line: string; length: number } {
  const bytes = Buffer.alloc(Math.min(size, MAX_HEADER_BYTES));
  const read = fs.readSync(fd, bytes, 0, bytes.length, 0);
  const newline = bytes.subarray(0, read).indexOf(10);
  if (newline < 0) throw new GenerationRefused(`${what} is damaged: it has no header line.`);
  return { line: bytes.toString('utf8', 0, newline), length: newline + 1 };
}

function checkHeader(line: string, expect: GenerationExpectation, what: string): GenerationHeader {
  const header = parseHeader(line, what);
  if (header.stream !== expect.stream) throw new GenerationRefused(`${what} holds the rows of another stream.`);
  if (header.fingerprint !== expect.fingerprint) throw new GenerationRefused(`${what} was written for another tenant, config, layout or personal-data policy.`);
  return header;
}

/** The header line as this tap writes it (a header without `parent`, written before generations named it, has none: null); else GenerationRefused. */
function parseHeader(line: string, what: string): GenerationHeader {
  let header: (Omit<Partial<GenerationHeader>, 'parent'> & { parent?: unknown }) | null;
  try {
    header = JSON.parse(line) as typeof header;
  } catch {
    throw new GenerationRefused(`${what} is not a file of this tap.`);
  }
  if (header === null || typeof header !== 'object' || header.tap !== 'tap-report-dump') throw new GenerationRefused(`${what} is not a file of this tap.`);
  if (typeof header.format === 'number' && header.format > GENERATION_FORMAT) {
    throw new GenerationRefused(`${what} was written by a newer version of the tap (format ${header.format}; this one reads formats ${OLDEST_FORMAT} to ${GENERATION_FORMAT}).`);
  }
  const since2 = header.format === GENERATION_FORMAT;
  const counted = since2 ? [header.rows, header.dead, header.repeats, header.keys_bytes, header.hashes_crc32, header.keys_crc32] : [header.rows, header.dead, header.keys_bytes, header.hashes_crc32];
  const counts = counted.every((n) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0);
  const parent = header.parent ?? null;
  const named = parent === null || (typeof parent === 'string' && isGenerationId(parent));
  if ((header.format !== OLDEST_FORMAT && !since2) || !counts || typeof header.stream !== 'string' || !named) {
    throw new GenerationRefused(`${what} is damaged: its header is not one this tap writes.`);
  }
  return { ...header, parent, repeats: since2 ? header.repeats : 0 } as GenerationHeader;
}

/**
 * The header of the generation file at `path`, read alone (the rest of the
 * file unread, nothing checked but the header itself), or undefined when the
 * file is gone, unreadable, not this tap's, damaged in its header or of a
 * newer format: what a run may learn of another run's generation cheaply.
 */
export function readGenerationHeader(path: string): GenerationHeader | undefined {
  let fd: number;
  try {
    fd = fs.openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const what = `The change store's generation ${basename(path, GENERATION_SUFFIX)}`;
    return parseHeader(headerLine(fd, MAX_HEADER_BYTES, what).line, what);
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

function refusal(error: unknown, what: string): GenerationRefused {
  if (error instanceof GenerationRefused) return error;
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'Z_BUF_ERROR' || /unexpected end/i.test((error as Error).message ?? '')) return new GenerationRefused(`${what} is damaged: it is cut short.`);
  if (typeof code === 'string' && code.startsWith('Z_')) return new GenerationRefused(`${what} is damaged: its keys are not valid gzip (${code}).`);
  return new GenerationRefused(`${what} cannot be read (${code ?? (error instanceof Error ? error.message : String(error))}).`);
}

/**
 * A generation being written, part by part: the hashes of every entry, the
 * repeated keys, then the keys (a keys section of an earlier generation
 * copied as it is stored, then keys to compress), then `complete` (the file
 * appears whole) or `abandon` (nothing remains). Counts are checked: a file
 * never says another count than it holds.
 */
export class GenerationWriter {
  private hashRows = 0;
  private repeatRows = 0;
  private keyRows = 0;
  private crc = 0;
  private keysBytes = 0;
  private keysCrc = 0;
  private gzip: { stream: Gzip; written: Promise<void> } | undefined;
  /** Where the next byte goes: written in order, the header last, over its placeholder. */
  private position: number;

  private constructor(
    private readonly path: string,
    private readonly header: Omit<GenerationHeader, 'hashes_crc32' | 'keys_bytes' | 'keys_crc32'>,
    private readonly file: Awaited<ReturnType<typeof open>>,
    private readonly headerLength: number,
  ) {
    this.position = headerLength;
  }

  /** A new owner-only file `<path>.partial` for `rows` rows, `dead` dead entries and `repeats` repeated keys (none if not said). */
  static async create(path: string, origin: GenerationOrigin & { rows: number; dead: number; repeats?: number }): Promise<GenerationWriter> {
    const { stream, fingerprint, parent, rows, dead, repeats = 0 } = origin;
    const header = { tap: 'tap-report-dump', format: GENERATION_FORMAT, stream, fingerprint, parent, rows, dead, repeats, created: new Date().toISOString() } as const;
    // The widest the numbers written last can be: the header's place is fixed before they are known.
    const length = Buffer.byteLength(headerText(header, 0xffffffff, Number.MAX_SAFE_INTEGER, 0xffffffff)) + 1;
    const file = await open(`${path}${PARTIAL_SUFFIX}`, 'wx', PRIVATE_FILE_MODE);
    try {
      await file.chmod(PRIVATE_FILE_MODE);
    } catch (error) {
      await file.close();
      throw error;
    }
    return new GenerationWriter(path, header, file, length);
  }

  /** `rows` entries' hashes, HASH_WORDS an entry, native byte order. */
  async hashes(words: Uint32Array, rows: number): Promise<void> {
    if (this.repeatRows > 0 || this.keyRows > 0 || this.gzip !== undefined) throw new Error('A generation takes every hash before any repeated key or key.');
    this.hashRows += rows;
    await this.checked(words, rows * HASH_BYTES);
  }

  /** `keys` repeated keys' hashes, REPEAT_WORDS a key (keyHi, keyLo), native byte order; after the hashes, before any key. */
  async repeats(words: Uint32Array, keys: number): Promise<void> {
    if (this.keyRows > 0 || this.gzip !== undefined) throw new Error('A generation takes its repeated keys before any key.');
    this.repeatRows += keys;
    await this.checked(words, keys * REPEAT_BYTES);
  }

  /** A keys section of an earlier generation, as stored, holding `rows` key entries; only before keys to compress. */
  async copiedKeys(section: AsyncIterable<Buffer>, rows: number): Promise<void> {
    if (this.gzip !== undefined) throw new Error('A generation takes copied keys before the keys it compresses.');
    for await (const bytes of section) await this.appendKeys(bytes);
    this.keyRows += rows;
  }

  /**
   * A block of `rows` whole key entries, compressed into the keys section;
   * resolves once the block is consumed: the caller may fill it again (no
   * garbage of a block per block: they pile up outside the heap until a GC).
   */
  async keys(block: Buffer, rows: number): Promise<void> {
    const gzip = (this.gzip ??= this.startGzip());
    this.keyRows += rows;
    await new Promise<void>((resolve, reject) => gzip.stream.write(block, (error) => (error ? reject(error) : resolve())));
  }

  /** Flushes, writes the header, fsyncs and renames: from here the generation exists, whole. Throws, leaving nothing, if the counts are not the header's. */
  async complete(): Promise<void> {
    try {
      if (this.gzip !== undefined) {
        this.gzip.stream.end();
        await this.gzip.written;
      }
      const entries = this.header.rows + this.header.dead;
      if (this.hashRows !== entries || this.keyRows !== entries || this.repeatRows !== this.header.repeats) {
        throw new Error(`A generation of stream ${this.header.stream} got ${this.hashRows} hashes, ${this.keyRows} keys and ${this.repeatRows} repeated keys for ${entries} entries and ${this.header.repeats} repeated: nothing was written.`);
      }
      const line = Buffer.alloc(this.headerLength, ' ');
      line.write(headerText(this.header, this.crc >>> 0, this.keysBytes, this.keysCrc >>> 0));
      line[this.headerLength - 1] = 10;
      await this.file.write(line, 0, this.headerLength, 0);
      await this.file.sync();
      await this.file.close();
      await rename(`${this.path}${PARTIAL_SUFFIX}`, this.path);
    } catch (error) {
      await this.abandon();
      throw error;
    }
    syncFolder(dirname(this.path));
  }

  /** Removes what was written. */
  async abandon(): Promise<void> {
    this.gzip?.stream.destroy();
    await this.gzip?.written.catch(() => undefined);
    await this.file.close().catch(() => undefined);
    // One that cannot be removed (its folder made read-only meanwhile) goes with a later run's keepOnly.
    await rm(`${this.path}${PARTIAL_SUFFIX}`, { force: true }).catch(() => undefined);
  }

  /** Words of the hashes part, checksummed, written little-endian. */
  private async checked(words: Uint32Array, length: number): Promise<void> {
    let bytes = Buffer.from(words.buffer, words.byteOffset, length);
    if (!LITTLE_ENDIAN) bytes = Buffer.from(bytes).swap32();
    this.crc = crcAfter(bytes, this.crc);
    await this.append(bytes);
  }

  private async appendKeys(bytes: Buffer): Promise<void> {
    this.keysBytes += bytes.length;
    this.keysCrc = crcAfter(bytes, this.keysCrc);
    await this.append(bytes);
  }

  private async append(bytes: Buffer): Promise<void> {
    const at = this.position;
    this.position += bytes.length;
    for (let done = 0; done < bytes.length; ) done += (await this.file.write(bytes, done, bytes.length - done, at + done)).bytesWritten;
  }

  private startGzip(): { stream: Gzip; written: Promise<void> } {
    const stream = createGzip({ level: GZIP_LEVEL, chunkSize: CHUNK });
    const written = (async () => {
      for await (const chunk of stream as AsyncIterable<Buffer>) await this.appendKeys(chunk);
    })();
    // A write that fails (a full disk) fails the next wait for a drain, not a hang on a buffer that never drains.
    written.catch((error: unknown) => stream.destroy(error as Error));
    return { stream, written };
  }
}

/**
 * The CRC-32 of `bytes` continuing `crc`. Empty bytes leave it as it is:
 * zlib.crc32 answers 0 for an empty view on an empty ArrayBuffer whatever
 * the CRC it continues (Node 20).
 */
function crcAfter(bytes: Buffer, crc: number): number {
  return bytes.length === 0 ? crc : crc32(bytes, crc);
}

function headerText(header: Omit<GenerationHeader, 'hashes_crc32' | 'keys_bytes' | 'keys_crc32'>, crc: number, keysBytes: number, keysCrc: number): string {
  return JSON.stringify({ ...header, hashes_crc32: crc, keys_bytes: keysBytes, keys_crc32: keysCrc });
}

/** The rename reaches the disk with the folder; where a folder cannot be opened for that (not Linux), the rename stands as it is. */
function syncFolder(folder: string): void {
  try {
    const fd = fs.openSync(folder, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // Best effort: see above.
  }
}
