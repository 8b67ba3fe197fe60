import { runtimeError } from '../errors.js';
import { type GenerationExpectation, GenerationFile, GenerationRefused, HASH_WORDS, keyEntryLength, keyOf } from './generation-file.js';
import { KeyTable } from './key-table.js';

/** What `SentRows.check` answers, as numbers: the hot path compares, it does not allocate. */
export const UNCHANGED = 0;
export const CHANGED = 1;
export const NEW = 2;
export type RowCheck = typeof UNCHANGED | typeof CHANGED | typeof NEW;

/** Per entry in memory, as in the file's hashes section: keyHi, keyLo, contentHi, contentLo. */
const STRIDE = HASH_WORDS;
/** An entry's mark: not seen in this run, seen, or a dead entry (a row gone, kept in the file until compacted). */
const UNSEEN = 0;
const SEEN = 1;
const DEAD = 2;

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
  /** The entry after the one the last check found. */
  private after = 0;

  private constructor(
    /** The file loaded (undefined: no confirmed generation), and its identity then. */
    private readonly source: { path: string; expect: GenerationExpectation; identity: string } | undefined,
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
   * cannot trust it: missing, unreadable, damaged or cut short, a key twice,
   * another stream or fingerprint (another tenant, config, layout or
   * personal-data policy), a newer format.
   */
  static async load(path: string, expect: GenerationExpectation): Promise<SentRows | { untrusted: string }> {
    let file: GenerationFile | undefined;
    try {
      file = GenerationFile.open(path, expect);
      const { rows, dead } = file.header;
      const hashes = new Uint32Array(file.entries * STRIDE);
      file.readHashes(hashes);
      const marks = new Uint8Array(file.entries);
      const index = indexOf(hashes, marks, rows);
      if (index === 'twice') throw new GenerationRefused(`${file.what} is damaged: it holds a key twice.`);
      if (index === 'dead') throw new GenerationRefused(`${file.what} is damaged: it holds another number of dead entries than its header says (${dead}).`);
      return new SentRows({ path, expect, identity: file.identity }, rows, file.entries, hashes, index, marks);
    } catch (error) {
      if (error instanceof GenerationRefused) return { untrusted: error.message };
      throw error;
    } finally {
      file?.close();
    }
  }

  /**
   * Compares a row of this run with the confirmed generation: UNCHANGED (same
   * key, same content), CHANGED (same key, other content) or NEW; a key of the
   * confirmed generation is marked seen. Hashes are uint32 numbers (a signed
   * int32, as Math.imul gives, is taken as its uint32).
   */
  check(keyHi: number, keyLo: number, contentHi: number, contentLo: number): RowCheck {
    const hi = keyHi >>> 0;
    const lo = keyLo >>> 0;
    // A dump comes in much the same order every day, and the file keeps the order rows were first sent in:
    // the entry after the last one found is tried first, a read next to the last instead of a lookup at random.
    let entry = this.after;
    if (!(entry < this.entries && this.hashes[entry * STRIDE] === hi && this.hashes[entry * STRIDE + 1] === lo && this.marks[entry] !== DEAD)) entry = this.index.find(hi, lo);
    if (entry < 0) return NEW;
    this.after = entry + 1;
    if (this.marks[entry] === UNSEEN) {
      this.marks[entry] = SEEN;
      this.seenCount++;
    }
    const at = entry * STRIDE;
    return this.hashes[at + 2] === contentHi >>> 0 && this.hashes[at + 3] === contentLo >>> 0 ? UNCHANGED : CHANGED;
  }

  /** Keys of the confirmed generation marked seen (a new key is not counted: it is not held). */
  get seen(): number {
    return this.seenCount;
  }

  /** The keys of the confirmed generation not marked seen, as stored key JSON, in file order (the file's keys are read again, up to the last one unseen). */
  async *unseen(): AsyncGenerator<Buffer> {
    let left = this.rows - this.seenCount;
    if (left === 0) return;
    let entry = 0;
    for await (const block of this.keyBlocks()) {
      for (let at = 0; at < block.length; at += keyEntryLength(block, at), entry++) {
        if (this.marks[entry] !== UNSEEN) continue;
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
    return this.marks[entry] === SEEN;
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
