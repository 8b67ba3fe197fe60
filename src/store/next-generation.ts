import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fs } from '../builtins.js';
import { describeError, runtimeError, TapError } from '../errors.js';
import { PRIVATE_FILE_MODE } from '../output/private-files.js';
import { encodeKey, generationFileName, type GenerationOrigin, GenerationWriter, HASH_BYTES, HASH_WORDS, isGenerationId, KEY_HEAD, keyEntryLength, MAX_KEY_BYTES, PARTIAL_SUFFIX, REPEAT_WORDS } from './generation-file.js';
import { KeyTable } from './key-table.js';
import { SentKeysFile } from './sent-keys.js';
import type { SentRows } from './sent-rows.js';

/** Bytes of keys sent held before they are written out (and read back in blocks of this size). */
const KEY_BLOCK = 256 * 1024;
/** Entries of hashes held before they are written out, here and into the generation. */
const HASH_BLOCK = 8192;
/** The rows this run sent, while it runs: their hashes (native byte order: this process reads them back) and their key entries, in two files. */
export const SENT_HASHES_SUFFIX = `.sent-hashes${PARTIAL_SUFFIX}`;
export const SENT_KEYS_SUFFIX = `.sent-keys${PARTIAL_SUFFIX}`;
/**
 * Dead entries (rows gone, their keys left in the keys section) are compacted
 * away, keys rewritten, once they pass a quarter of the rows: memory and disk
 * stay within a quarter more than the rows need, and most generations copy
 * the keys section as it is stored.
 */
const COMPACT_RATIO = 0.25;

/** What the next generation does with an entry of the confirmed one. */
const DEAD = 0;
const KEEP = 1;
const RESENT = 2;
/** What a row sent is in the next generation; AGAIN, a bit beside: an earlier row sent had its key. */
const ADDED = 0;
const SUPERSEDED = 1;
const REPLACES = 2;
const ROLE = 3;
const AGAIN = 4;

/**
 * The generation this run writes for one stream. Rows the run emits go to
 * two owner-only files beside it, a block at a time: the run holds nothing
 * per row sent (their hashes written as they are; their keys compressed on
 * the way, beside the run: sent-keys.ts). `commit` reads their hashes back (about 25 bytes a row sent
 * in memory, for the commit only) and writes `<generation>.gen`: the
 * confirmed entries in their order (a row sent again with its last content; a
 * row not seen by a pass that may delete, dead), then the keys sent that the
 * confirmed generation lacks, each once with its last content.
 */
export class NextGeneration {
  private readonly hashBlock = new Uint32Array(HASH_BLOCK * HASH_WORDS);
  private hashesHeld = 0;
  /** A block handed to the sent keys file is its: the next is a new one. */
  private keyBlock = Buffer.allocUnsafe(KEY_BLOCK);
  private keysHeld = 0;
  private sentRows = 0;
  /** Keys that came more than once in this run, known once committed. */
  private repeatedKeys = 0;
  /** The first write that failed (a full disk): the rows after it are not kept, and `commit` fails. */
  private failure: unknown;
  private hashesFile: number | undefined;
  private readonly keysFile: SentKeysFile;
  private state: 'open' | 'committing' | 'committed' | 'discarded' = 'open';

  private constructor(
    readonly generation: string,
    /** Where the generation appears once committed. */
    readonly path: string,
    private readonly header: GenerationOrigin,
    files: { hashes: number; keys: SentKeysFile },
  ) {
    this.hashesFile = files.hashes;
    this.keysFile = files.keys;
  }

  /** `header.parent`: the confirmed generation the run carries (`commit`'s `confirmed`), or null when there is none. */
  static async create(streamFolder: string, generation: string, header: GenerationOrigin): Promise<NextGeneration> {
    if (!isGenerationId(generation)) throw new Error(`${generation} is not a generation id (newGenerationId makes them).`);
    const path = join(streamFolder, generationFileName(generation));
    // Written synchronously: `sent` is on the hot path, and writes a block at a time.
    const hashes = openPrivate(`${path}${SENT_HASHES_SUFFIX}`);
    try {
      return new NextGeneration(generation, path, header, { hashes, keys: SentKeysFile.create(`${path}${SENT_KEYS_SUFFIX}`) });
    } catch (error) {
      fs.closeSync(hashes);
      fs.rmSync(`${path}${SENT_HASHES_SUFFIX}`, { force: true });
      throw error;
    }
  }

  /** The stream and fingerprint it is written for, and the generation it builds on. */
  get origin(): GenerationOrigin {
    return this.header;
  }

  /** Rows noted as sent so far. */
  get sentCount(): number {
    return this.sentRows;
  }

  /** Keys that came more than once in this run (of the confirmed generation, or sent more than once): known once committed. */
  get repeated(): number {
    return this.repeatedKeys;
  }

  /** A row this run emitted (new or changed); its key's JSON is keyJson's first keyLength bytes (a reader's reused buffer: copied here, nothing allocated). */
  sent(keyHi: number, keyLo: number, contentHi: number, contentLo: number, keyJson: Uint8Array, keyLength = keyJson.length): void {
    if (this.state !== 'open') throw new Error(`The next generation of stream ${this.header.stream} is ${this.state}: it takes no more rows.`);
    if (keyLength > MAX_KEY_BYTES) {
      throw runtimeError(`A record of stream ${this.header.stream} has a key of ${keyLength} bytes, more than the change store keeps (${MAX_KEY_BYTES}); shorten the values of the stream's key properties.`);
    }
    if (this.keysHeld + KEY_HEAD + keyLength > KEY_BLOCK) this.flushKeys();
    this.keysHeld = encodeKey(this.keyBlock, this.keysHeld, keyJson, keyLength);
    const at = this.hashesHeld * HASH_WORDS;
    this.hashBlock[at] = keyHi;
    this.hashBlock[at + 1] = keyLo;
    this.hashBlock[at + 2] = contentHi;
    this.hashBlock[at + 3] = contentLo;
    if (++this.hashesHeld === HASH_BLOCK) this.flushHashes();
    this.sentRows++;
  }

  /**
   * Writes the generation: the confirmed rows (those sent again with their
   * new content; when `drop`, a pass that may delete, without those not seen
   * in this run), then the new rows sent. Atomic: the file is complete or
   * absent. Returns its row count. On failure nothing of this generation
   * remains. `unsure`: the reader may have kept any of a key's rows this run
   * sent several of (lastRecordWins false): such a row is written with no
   * content (zeros), which no row matches, so the next run sends it again,
   * alone.
   */
  async commit(confirmed: SentRows, drop: boolean, unsure = false): Promise<number> {
    if (this.state !== 'open') throw new Error(`The next generation of stream ${this.header.stream} was already ${this.state}.`);
    // A row sent from here on would be in no file: refused.
    this.state = 'committing';
    this.flushKeys();
    this.flushHashes();
    this.closeHashes();
    let writer: GenerationWriter | undefined;
    let rows: number;
    try {
      if (this.failure !== undefined) throw this.failure;
      await this.keysFile.finish();
      const sent = this.readSent();
      const plan = planEntries(confirmed, drop, sent);
      rows = plan.live + sent.added;
      const compact = plan.dead > COMPACT_RATIO * rows;
      const repeats = repeatedKeys(confirmed, plan.actions, sent);
      this.repeatedKeys = confirmed.seenAgain + sent.addedAgain;
      writer = await GenerationWriter.create(this.path, { ...this.header, rows, dead: compact ? 0 : plan.dead, repeats: repeats.length / REPEAT_WORDS });
      await writeHashes(writer, confirmed, plan.actions, compact, sent, unsure);
      await writer.repeats(repeats, repeats.length / REPEAT_WORDS);
      if (compact) await rewriteKeys(writer, confirmed, plan.actions);
      else await writer.copiedKeys(confirmed.compressedKeys(), confirmed.entries);
      // Every key sent goes in as it came (a first run, only new keys): their compressed bytes are the section's rest.
      if (!compact && sent.added === sent.rows && sent.rows > 0) await writer.copiedKeys(this.keysFile.compressed(), sent.rows);
      else await this.writeAddedKeys(writer, sent);
      await writer.complete();
    } catch (error) {
      await writer?.abandon();
      await this.discard();
      throw this.failed(error);
    }
    this.state = 'committed';
    await this.removeSentFiles();
    return rows;
  }

  /** The run failed: nothing of this generation remains. */
  async discard(): Promise<void> {
    if (this.state === 'committed') return;
    this.state = 'discarded';
    this.closeHashes();
    await this.keysFile.discard();
    await this.removeSentFiles();
    await removeQuietly(`${this.path}${PARTIAL_SUFFIX}`);
  }

  /** Whether the keys sent wait to be compressed beyond what the run should hold: its sink waits (`drained`) before it reads on. */
  get backlogged(): boolean {
    return this.keysFile.backlogged;
  }

  drained(): Promise<void> {
    return this.keysFile.drained();
  }

  private flushKeys(): void {
    if (this.keysHeld === 0) return;
    this.keysFile.write(this.keyBlock.subarray(0, this.keysHeld));
    this.keyBlock = Buffer.allocUnsafe(KEY_BLOCK);
    this.keysHeld = 0;
  }

  private flushHashes(): void {
    const bytes = Buffer.from(this.hashBlock.buffer, 0, this.hashesHeld * HASH_BYTES);
    this.hashesHeld = 0;
    if (bytes.length === 0 || this.failure !== undefined || this.hashesFile === undefined) return;
    try {
      for (let done = 0; done < bytes.length; ) done += fs.writeSync(this.hashesFile, bytes, done);
    } catch (error) {
      this.failure = error;
    }
  }

  private closeHashes(): void {
    if (this.hashesFile === undefined) return;
    try {
      fs.closeSync(this.hashesFile);
    } catch (error) {
      this.failure ??= error;
    }
    this.hashesFile = undefined;
  }

  private async removeSentFiles(): Promise<void> {
    await removeQuietly(`${this.path}${SENT_HASHES_SUFFIX}`);
    await removeQuietly(`${this.path}${SENT_KEYS_SUFFIX}`);
  }

  /** The rows sent: their hashes in memory, read back in one read, and which of them is the last of its key. */
  private readSent(): SentIndex {
    const hashes = new Uint32Array(this.sentRows * HASH_WORDS);
    readWhole(`${this.path}${SENT_HASHES_SUFFIX}`, Buffer.from(hashes.buffer));
    const table = new KeyTable(hashes, HASH_WORDS, this.sentRows);
    const status = new Uint8Array(this.sentRows);
    let added = 0;
    for (let row = 0; row < this.sentRows; row++) {
      const slot = table.slotOf(hashes[row * HASH_WORDS], hashes[row * HASH_WORDS + 1]);
      const earlier = table.rowAt(slot);
      if (earlier >= 0) {
        status[row] = AGAIN;
        status[earlier] = SUPERSEDED;
      } else added++;
      table.put(slot, row);
    }
    return { rows: this.sentRows, hashes, table, status, added, addedAgain: 0 };
  }

  /** The key entries of the rows added, from the sent keys file, in their order. */
  private async writeAddedKeys(writer: GenerationWriter, sent: SentIndex): Promise<void> {
    if (sent.added === 0) return;
    const scratch = Buffer.allocUnsafe(KEY_BLOCK);
    let row = 0;
    for await (const block of this.keysFile.blocks()) {
      const kept = keptKeys(block, row, (r) => (sent.status[r] & ROLE) === ADDED, scratch);
      row = kept.next;
      if (kept.rows > 0) await writer.keys(kept.bytes, kept.rows);
    }
    if (row !== sent.rows) throw new Error(`The keys sent of stream ${this.header.stream} read back as ${row}, not ${sent.rows}.`);
  }

  /** A file system's refusal (a full disk, a folder made read-only) as the run's error; anything else as it is. */
  private failed(error: unknown): Error {
    if (error instanceof TapError) return error;
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) {
      return runtimeError(`The change store could not write the next generation of stream ${this.header.stream} in ${dirname(this.path)} (${code}); free space there, or set store_directory to a folder this user can write, with room.`, error);
    }
    return error instanceof Error ? error : new Error(describeError(error));
  }
}

/** The rows sent, by their place in the sent files. */
interface SentIndex {
  rows: number;
  /** HASH_WORDS a row. */
  hashes: Uint32Array;
  /** Key to the last row sent with it. */
  table: KeyTable;
  /** ADDED, SUPERSEDED (a later row has its key) or REPLACES (its key is a confirmed row's: it takes that row's place); with AGAIN. */
  status: Uint8Array;
  /** Rows ADDED. */
  added: number;
  /** Rows ADDED whose key was sent more than once (counted by repeatedKeys). */
  addedAgain: number;
}

/** A file that cannot be removed (its folder made read-only meanwhile) is left for a later run's keepOnly: the run's own error says what went wrong. */
async function removeQuietly(path: string): Promise<void> {
  await rm(path, { force: true }).catch(() => undefined);
}

function openPrivate(path: string): number {
  const fd = fs.openSync(path, 'wx', PRIVATE_FILE_MODE);
  fs.fchmodSync(fd, PRIVATE_FILE_MODE);
  return fd;
}

function readWhole(path: string, into: Buffer): void {
  const fd = fs.openSync(path, 'r');
  try {
    for (let done = 0; done < into.length; ) {
      const read = fs.readSync(fd, into, done, into.length - done, done);
      if (read === 0) throw new Error(`${path} is shorter than the rows sent.`);
      done += read;
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** What becomes of each confirmed entry (DEAD, KEEP, RESENT), the rows that stay and the dead entries; marks the rows sent that replace one. */
function planEntries(confirmed: SentRows, drop: boolean, sent: SentIndex): { actions: Uint8Array; live: number; dead: number } {
  const actions = new Uint8Array(confirmed.entries);
  let live = 0;
  for (let entry = 0; entry < confirmed.entries; entry++) {
    if (confirmed.isDead(entry)) continue;
    const last = sent.rows === 0 ? -1 : sent.table.find(confirmed.keyHi(entry), confirmed.keyLo(entry));
    if (last >= 0) {
      sent.status[last] = REPLACES | (sent.status[last] & AGAIN);
      sent.added--;
      actions[entry] = RESENT;
    } else if (drop && !confirmed.wasSeen(entry)) {
      continue;
    } else {
      actions[entry] = KEEP;
    }
    live++;
  }
  return { actions, live, dead: confirmed.entries - live };
}

/**
 * The hashes section: the confirmed entries (a row sent again with its last
 * content; dead ones as zeros, or left out when compacting), then the rows
 * added; when `unsure`, the rows whose key was sent more than once with no
 * content.
 */
async function writeHashes(writer: GenerationWriter, confirmed: SentRows, actions: Uint8Array, compact: boolean, sent: SentIndex, unsure: boolean): Promise<void> {
  if (unsure) forgetContentSentAgain(sent);
  if (confirmed.entries === 0 && sent.added === sent.rows) return writer.hashes(sent.hashes, sent.rows);
  const out = new Uint32Array(HASH_BLOCK * HASH_WORDS);
  let held = 0;
  for (let entry = 0; entry < actions.length; entry++) {
    const action = actions[entry];
    if (action === DEAD && compact) continue;
    const at = held * HASH_WORDS;
    if (action === KEEP) confirmed.copyHashes(entry, out, at);
    else if (action === RESENT) copyWords(sent.hashes, sent.table.find(confirmed.keyHi(entry), confirmed.keyLo(entry)), out, at);
    else out.fill(0, at, at + HASH_WORDS);
    if (++held === HASH_BLOCK) {
      await writer.hashes(out, held);
      held = 0;
    }
  }
  for (let row = 0; row < sent.rows; row++) {
    if ((sent.status[row] & ROLE) !== ADDED) continue;
    copyWords(sent.hashes, row, out, held * HASH_WORDS);
    if (++held === HASH_BLOCK) {
      await writer.hashes(out, held);
      held = 0;
    }
  }
  if (held > 0) await writer.hashes(out, held);
}

/**
 * The keys of the next generation that repeated (REPEAT_WORDS a key): the
 * confirmed rows kept whose key came (or was sent) more than once in this
 * run, or, not seen, repeated before; then the rows added that were sent more
 * than once (counted in `sent.addedAgain`).
 */
function repeatedKeys(confirmed: SentRows, actions: Uint8Array, sent: SentIndex): Uint32Array {
  const keys: number[] = [];
  for (let entry = 0; entry < actions.length; entry++) {
    if (actions[entry] === DEAD) continue;
    const sentAgain = actions[entry] === RESENT && (sent.status[sent.table.find(confirmed.keyHi(entry), confirmed.keyLo(entry))] & AGAIN) !== 0;
    if (sentAgain || confirmed.repeats(entry)) keys.push(confirmed.keyHi(entry), confirmed.keyLo(entry));
  }
  for (let row = 0; row < sent.rows; row++) {
    if (sent.status[row] !== (ADDED | AGAIN)) continue;
    keys.push(sent.hashes[row * HASH_WORDS], sent.hashes[row * HASH_WORDS + 1]);
    sent.addedAgain++;
  }
  return Uint32Array.from(keys);
}

/** The rows sent whose key an earlier row sent had: their content zeroed, which no row's content matches. */
function forgetContentSentAgain(sent: SentIndex): void {
  for (let row = 0; row < sent.rows; row++) {
    if ((sent.status[row] & AGAIN) === 0) continue;
    sent.hashes[row * HASH_WORDS + 2] = 0;
    sent.hashes[row * HASH_WORDS + 3] = 0;
  }
}

function copyWords(from: Uint32Array, row: number, to: Uint32Array, at: number): void {
  const start = row * HASH_WORDS;
  to[at] = from[start];
  to[at + 1] = from[start + 1];
  to[at + 2] = from[start + 2];
  to[at + 3] = from[start + 3];
}

/** The confirmed keys without the dead entries' (a compaction): read, filtered and compressed again. */
async function rewriteKeys(writer: GenerationWriter, confirmed: SentRows, actions: Uint8Array): Promise<void> {
  let scratch = Buffer.allocUnsafe(KEY_BLOCK);
  let entry = 0;
  for await (const block of confirmed.keyBlocks()) {
    if (scratch.length < block.length) scratch = Buffer.allocUnsafe(block.length);
    const kept = keptKeys(block, entry, (e) => actions[e] !== DEAD, scratch);
    entry = kept.next;
    if (kept.rows > 0) await writer.keys(kept.bytes, kept.rows);
  }
}

/**
 * The key entries of `block` (its first row numbered `first`) that `keep`:
 * the block itself when it keeps them all, else those kept copied into
 * `scratch` (as long as the block at least); `next`: the row after the block.
 */
function keptKeys(block: Buffer, first: number, keep: (row: number) => boolean, scratch: Buffer): { bytes: Buffer; rows: number; next: number } {
  let copying = false;
  let outAt = 0;
  let rows = 0;
  let row = first;
  for (let at = 0; at < block.length; row++) {
    const length = keyEntryLength(block, at);
    if (keep(row)) {
      if (copying) outAt += block.copy(scratch, outAt, at, at + length);
      rows++;
    } else if (!copying) {
      copying = true;
      outAt = block.copy(scratch, 0, 0, at);
    }
    at += length;
  }
  return { bytes: copying ? scratch.subarray(0, outAt) : block, rows, next: row };
}
