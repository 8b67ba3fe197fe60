import { runtimeError } from '../errors.js';
import { type GenerationExpectation, GenerationFile, GenerationRefused, HASH_WORDS, keyEntryLength, keyOf, REPEAT_WORDS } from './generation-file.js';
import { KeyTable } from './key-table.js';

/**
 * What `SentRows.check` answers, as numbers: the hot path compares, it does
 * not allocate. REPEATS: a key that came more than once in the run that wrote
 * the generation; its rows are compared once the run has seen them all
 * (`compare`), with the last of them.
 */
export const UNCHANGED = 0;
export const CHANGED = 1;
export const NEW = 2;
export const REPEATS = 3;
export type RowCheck = typeof UNCHANGED | typeof CHANGED | typeof NEW | typeof REPEATS;

/** Per entry in memory, as in the file's hashes section: keyHi, keyLo, contentHi, contentLo. */
const STRIDE = HASH_WORDS;
/**
 * The bits of contentHi compared: 48 bits of content hash in all, what the
 * state keeps of a row (state-codec.ts), so a generation compares alike
 * wherever it lived; a changed row hashes alike one time in 2^48.
 */
const CONTENT_HI_COMPARED = 0xffff;
/**
 * An entry's mark: not seen in this run, seen once, seen more than once, or a
 * dead entry (a row gone, kept in the file until compacted); REPEATED, a bit
 * beside them: the key came more than once in the run that wrote the file.
 */
const UNSEEN = 0;
const SEEN = 1;
const SEEN_AGAIN = 2;
const DEAD = 3;
const SEEN_MASK = 3;
const REPEATED = 4;

/**
 * The confirmed generation of one stream, in memory for one run: what the
 * target holds. Typed arrays only, by entry in the file's order (16 bytes an
 * entry, an index of 4 bytes a slot at most 3/4 full, a byte an entry for
 * "seen"; dead entries, rows gone, take their 16 bytes but no slot):
 * 24 MiB at 1,000,000 rows, and two or three memory reads per `check`.
 * An open-addressing index rather than sorted rows and a binary search: the
 * search costs some 20 dependent reads a lookup (most of them cache misses at
 * a million rows), the index one more than the row itself, for 8 MiB; the rows stay in
 * file order, so an entry's number is its place in the file, and reading its
 * keys (`unseen`, the next generation) needs no lookup. The hashes are read
 * from the file straight into their array; the keys stay on disk, read when needed.
 */
export class SentRows {
  private seenCount = 0;
  private seenAgainCount = 0;
  /** The entry after the one the last check found. */
  private after = 0;
  /** The entry the last check found (-1: a new key). */
  found = -1;

  private constructor(
    /** The file loaded (undefined: no confirmed generation), its identity then, whether it is of an older format, and whether it was built on none. */
    private readonly source: { path: string; expect: GenerationExpectation; identity: string; outdated: boolean; parent: string | null } | undefined,
    /** Rows the target holds. */
    readonly rows: number,
    /** Entries: rows and dead entries (numbered 0 to entries - 1 as in the file). */
    readonly entries: number,
    private readonly hashes: Uint32Array,
    private readonly index: KeyTable,
    private readonly marks: Uint8Array,
  ) {}

  /** No confirmed generation: every row is new. */
  static empty(): SentRows {
    const hashes = new Uint32Array(0);
    return new SentRows(undefined, 0, 0, hashes, new KeyTable(hashes, STRIDE, 0), new Uint8Array(0));
  }

  /**
   * Loads the generation file at `path`, or says (one sentence) why this run
   * cannot trust it: missing, unreadable, damaged or cut short in any part, a
   * key twice, another stream or fingerprint (another tenant, config, layout
   * or personal-data policy), a newer format.
   */
  static async load(path: string, expect: GenerationExpectation): Promise<SentRows | { untrusted: string }> {
    let file: GenerationFile | undefined;
    try {
      file = GenerationFile.open(path, expect);
      const { rows, dead } = file.header;
      const hashes = new Uint32Array(file.entries * STRIDE);
      const repeats = new Uint32Array(file.header.repeats * REPEAT_WORDS);
      file.readHashes(hashes, repeats);
      await file.checkKeys();
      const marks = new Uint8Array(file.entries);
      const index = indexOf(hashes, marks, rows);
      if (index === 'twice') throw new GenerationRefused(`${file.what} is damaged: it holds a key twice.`);
      if (index === 'dead') throw new GenerationRefused(`${file.what} is damaged: it holds another number of dead entries than its header says (${dead}).`);
      if (!markRepeats(repeats, index, marks)) throw new GenerationRefused(`${file.what} is damaged: it names as repeated a key it does not hold.`);
      return new SentRows({ path, expect, identity: file.identity, outdated: file.outdated, parent: file.header.parent }, rows, file.entries, hashes, index, marks);
    } catch (error) {
      if (error instanceof GenerationRefused) return { untrusted: error.message };
      throw error;
    } finally {
      file?.close();
    }
  }

  /**
   * Compares a row of this run with what the target holds: UNCHANGED (same
   * key, same content), CHANGED (same key, other content: the target holds
   * this content from now on, as the row goes out), NEW, or REPEATS (a key
   * that repeated in the run that wrote the generation: the caller holds its
   * rows and `compare`s the last); a key of the confirmed generation is
   * marked seen (`found` names its entry). Hashes are uint32 numbers (a
   * signed int32, as Math.imul gives, is taken as its uint32).
   */
  check(keyHi: number, keyLo: number, contentHi: number, contentLo: number): RowCheck {
    const hi = keyHi >>> 0;
    const lo = keyLo >>> 0;
    // A dump comes in much the same order every day, and the file keeps the order rows were first sent in:
    // the entry after the last one found is tried first, a read next to the last instead of a lookup at random.
    let entry = this.after;
    if (!(entry < this.entries && this.hashes[entry * STRIDE] === hi && this.hashes[entry * STRIDE + 1] === lo && (this.marks[entry] & SEEN_MASK) !== DEAD)) entry = this.index.find(hi, lo);
    this.found = entry;
    if (entry < 0) return NEW;
    this.after = entry + 1;
    const mark = this.marks[entry];
    if ((mark & SEEN_MASK) === UNSEEN) {
      this.marks[entry] = mark + SEEN;
      this.seenCount++;
    } else if ((mark & SEEN_MASK) === SEEN) {
      this.marks[entry] = mark + SEEN;
      this.seenAgainCount++;
    }
    if ((mark & REPEATED) !== 0) return REPEATS;
    return this.compare(entry, contentHi, contentLo);
  }

  /**
   * Compares a content with what the target holds of the entry's row:
   * UNCHANGED, or CHANGED, and then the target holds this content (the row
   * goes out): a later row of the key in this run is compared with it.
   */
  compare(entry: number, contentHi: number, contentLo: number): typeof UNCHANGED | typeof CHANGED {
    const at = entry * STRIDE;
    if (((this.hashes[at + 2] ^ contentHi) & CONTENT_HI_COMPARED) === 0 && this.hashes[at + 3] === contentLo >>> 0) return UNCHANGED;
    this.hashes[at + 2] = contentHi;
    this.hashes[at + 3] = contentLo;
    return CHANGED;
  }

  /** Keys of the confirmed generation marked seen (a new key is not counted: it is not held). */
  get seen(): number {
    return this.seenCount;
  }

  /** Keys of the confirmed generation this run saw more than once. */
  get seenAgain(): number {
    return this.seenAgainCount;
  }

  /**
   * Whether the entry's key repeats in the generation this run writes: seen
   * more than once in this run; not seen, as in the confirmed generation.
   */
  repeats(entry: number): boolean {
    const seen = this.marks[entry] & SEEN_MASK;
    return seen === SEEN_AGAIN || (seen === UNSEEN && (this.marks[entry] & REPEATED) !== 0);
  }

  /** Whether the confirmed file is of an older format: the run writes a new generation even if nothing changed. */
  get outdated(): boolean {
    return this.source?.outdated ?? false;
  }

  /** Whether the confirmed generation was built on none (a run without a usable state wrote it). */
  get root(): boolean {
    return this.parent === null;
  }

  /** The generation the confirmed one was built on (null: none; also for a run without one). */
  get parent(): string | null {
    return this.source?.parent ?? null;
  }

  /** The keys of the confirmed generation not marked seen, as stored key JSON, in file order (the file's keys are read again, up to the last one unseen). */
  async *unseen(): AsyncGenerator<Buffer> {
    let left = this.rows - this.seenCount;
    if (left === 0) return;
    let entry = 0;
    for await (const block of this.keyBlocks()) {
      for (let at = 0; at < block.length; at += keyEntryLength(block, at), entry++) {
        if ((this.marks[entry] & SEEN_MASK) !== UNSEEN) continue;
        yield Buffer.from(keyOf(block, at));
        if (--left === 0) return;
      }
    }
  }

  /** Entry `entry`'s hashes into `to` at `at` (HASH_WORDS numbers; zeros for a dead entry). */
  copyHashes(entry: number, to: Uint32Array, at: number): void {
    const from = entry * STRIDE;
    to[at] = this.hashes[from];
    to[at + 1] = this.hashes[from + 1];
    to[at + 2] = this.hashes[from + 2];
    to[at + 3] = this.hashes[from + 3];
  }

  keyHi(entry: number): number {
    return this.hashes[entry * STRIDE];
  }

  keyLo(entry: number): number {
    return this.hashes[entry * STRIDE + 1];
  }

  wasSeen(entry: number): boolean {
    const seen = this.marks[entry] & SEEN_MASK;
    return seen === SEEN || seen === SEEN_AGAIN;
  }

  isDead(entry: number): boolean {
    return this.marks[entry] === DEAD;
  }

  /** The confirmed file's key entries, in blocks of whole entries (generation-file.ts keyBlocks). */
  keyBlocks(): AsyncGenerator<Buffer> {
    return this.reread((file) => file.keyBlocks());
  }

  /** The confirmed file's keys section as stored, to copy. */
  compressedKeys(): AsyncGenerator<Buffer> {
    return this.reread((file) => file.compressedKeys());
  }

  /** Reads the confirmed file again; fails if it is not the one loaded (replaced or changed meanwhile: the rows in memory would not be its rows). */
  private async *reread(part: (file: GenerationFile) => AsyncGenerator<Buffer>): AsyncGenerator<Buffer> {
    if (this.source === undefined) return;
    const { path, expect, identity } = this.source;
    let file: GenerationFile | undefined;
    try {
      file = GenerationFile.open(path, expect);
      if (file.identity !== identity) throw new GenerationRefused('it was replaced after this run loaded it');
      yield* part(file);
    } catch (error) {
      if (!(error instanceof GenerationRefused)) throw error;
      throw runtimeError(`The change store's file ${path} changed while this run used it: run the tap again, and let no other program write to the store's folder.`, error);
    } finally {
      file?.close();
    }
  }
}

/** Marks the entries of the repeated keys (`repeats`: REPEAT_WORDS a key); false if one is not a live entry. */
function markRepeats(repeats: Uint32Array, index: KeyTable, marks: Uint8Array): boolean {
  for (let at = 0; at < repeats.length; at += REPEAT_WORDS) {
    const entry = index.find(repeats[at], repeats[at + 1]);
    if (entry < 0) return false;
    marks[entry] |= REPEATED;
  }
  return true;
}

/**
 * The index of the live entries' keys, dead entries (all four hashes zero)
 * marked; 'twice' if a key is there twice (the writer never writes one),
 * 'dead' if the live entries are not `rows`.
 */
function indexOf(hashes: Uint32Array, marks: Uint8Array, rows: number): KeyTable | 'twice' | 'dead' {
  const index = new KeyTable(hashes, STRIDE, rows);
  let live = 0;
  for (let entry = 0; entry < marks.length; entry++) {
    const at = entry * STRIDE;
    if ((hashes[at] | hashes[at + 1] | hashes[at + 2] | hashes[at + 3]) === 0) {
      marks[entry] = DEAD;
      continue;
    }
    // More live entries than the index was sized for would fill it.
    if (++live > rows) return 'dead';
    const slot = index.slotOf(hashes[at], hashes[at + 1]);
    if (index.rowAt(slot) >= 0) return 'twice';
    index.put(slot, entry);
  }
  return live === rows ? index : 'dead';
}
