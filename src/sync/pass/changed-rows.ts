import type { RowIdentity } from '../../records/row-identity.js';
import type { JsonLine } from '../../records/json-line.js';
import { REPEATS, UNCHANGED, type SentRows } from '../../store/sent-rows.js';
import type { NextGeneration } from '../../store/next-generation.js';
import type { RecordSink } from '../../output/record-sink.js';
import type { Envelope } from '../read/decoders.js';

const CLOSE_BRACE = Buffer.from('}');

/**
 * Rows of keys that repeat held, at most this many bytes: beyond, a repeating
 * key's rows go out as they come, each compared with what the target holds
 * then (right, but such a key's rows go out every run).
 */
const HELD_MAX_BYTES = 32 * 1024 * 1024;

/** What becomes of a record: it goes on, goes no further, or waits for the last row of its key. */
const SEND = 0;
const SKIP = 1;
const HOLD = 2;
type Verdict = typeof SEND | typeof SKIP | typeof HOLD;

/** The last row of a repeating key this run read, its line as the sink would have queued it. */
interface HeldRow {
  line: string;
  keyHi: number;
  keyLo: number;
  contentHi: number;
  contentLo: number;
  keyJson: Buffer;
  /** Rows of the key read, this one included. */
  rows: number;
}

/**
 * The records of a run through the change store, between the decoders and
 * the stream's output: each record queued is read as emitted (its key and
 * content hashes: RowIdentity) and compared with what the target holds
 * (SentRows). With `onlyChanges`, a record the target holds as it is goes no
 * further; any other goes on and is noted for the generation this run writes.
 * A record whose key cannot be read goes on unnoted: a doubt never skips a row.
 *
 * A key the dump gives more than once: the target keeps the last row sent
 * (an upsert), so a later row of the key is compared with what the target
 * holds then. A key that repeated in the run that wrote the generation has
 * its rows held to the end of the reads (`finish`): only the last is
 * compared and, if it changed, sent; an unchanged dump then sends nothing.
 */
export class ChangedRows implements RecordSink {
  /** Records the target holds as they are, not sent (a held row replaced by a later one of its key included). */
  unchanged = 0;
  /** Records that went on to the output. */
  sent = 0;
  /** Records sent whose key could not be read (not in the store: sent again next time). */
  unkeyed = 0;
  private block: Buffer = Buffer.alloc(0);
  private headLength = 0;
  private tailLength = 0;
  /** The tail of a record copied as it came when the envelope adds members (Airbyte): the members, the record's brace, the envelope's tail. */
  private closing: Buffer | undefined;
  private scratch = Buffer.alloc(4096);
  /** The line the decoder said the next spliced record is (scannedLine). */
  private scanned: JsonLine | undefined;
  /** The held rows of repeating keys, by their entry in the confirmed generation. */
  private readonly held = new Map<number, HeldRow>();
  private heldBytes = 0;

  constructor(
    private readonly inner: RecordSink,
    private readonly identity: RowIdentity,
    private readonly confirmed: SentRows,
    private readonly next: NextGeneration,
    private readonly onlyChanges: boolean,
    private readonly heldMaxBytes = HELD_MAX_BYTES,
  ) {}

  /** The envelope of the read that starts now: where a record lies in its line. */
  read(envelope: Envelope): void {
    this.headLength = envelope.headBytes.length;
    this.tailLength = envelope.tailBytes.length;
    this.closing = envelope.membersBytes.length > 0 ? envelope.closingBytes : undefined;
  }

  get pos(): number {
    return this.inner.pos;
  }

  /** Whether rows of repeating keys wait for the end of the reads (finish): read, not sent yet. */
  get holding(): boolean {
    return this.held.size > 0;
  }

  /** Full when the output is, or when the keys noted wait to be compressed beyond what the store should hold (next-generation.ts). */
  get full(): boolean {
    return this.inner.full || this.next.backlogged;
  }

  async drain(): Promise<void> {
    await this.next.drained();
    await this.inner.drain();
  }

  reserve(bytes: number): Buffer {
    this.block = this.inner.reserve(bytes);
    return this.block;
  }

  commit(end: number): void {
    const start = this.inner.pos;
    const verdict = this.verdict(this.block, start + this.headLength, end - this.tailLength);
    if (verdict === SEND) {
      this.inner.commit(end);
      this.sent++;
    }
    else if (verdict === HOLD) this.hold(() => this.block.toString('utf8', start, end - 1));
  }

  /** The next record spliced is this scanned line: read from its members' places, not scanned again. */
  scannedLine(line: JsonLine): void {
    this.scanned = line;
  }

  spliced(head: Buffer, source: Buffer, start: number, end: number, tail: Buffer): void {
    const line = this.scanned;
    this.scanned = undefined;
    let verdict: Verdict;
    if (line !== undefined && line.buffer === source && line.start === start && this.identity.readScanned(line)) verdict = this.known();
    else verdict = tail === this.closing ? this.verdictWithoutBrace(source, start, end) : this.verdict(source, start, end);
    if (verdict === SEND) {
      // Called here, not through a callback: this is the per-row path, and a closure a row is garbage to collect.
      this.inner.spliced(head, source, start, end, tail);
      this.sent++;
    }
    else if (verdict === HOLD) this.hold(() => `${head.toString()}${source.toString('utf8', start, end)}${tail.toString('utf8', 0, tail.length - 1)}`);
  }

  line(text: string): void {
    const record = Buffer.from(text.slice(this.headLength, text.length - (this.tailLength - 1)));
    const verdict = this.verdict(record, 0, record.length);
    if (verdict === SEND) {
      this.inner.line(text);
      this.sent++;
    }
    else if (verdict === HOLD) this.hold(() => text);
  }

  /**
   * The reads are done: the last row of each held key goes out if the target
   * holds another content, and is noted. Returns how many went out.
   */
  async finish(): Promise<number> {
    let count = 0;
    for (const [entry, row] of this.held) {
      this.unchanged += row.rows - 1;
      if (this.confirmed.compare(entry, row.contentHi, row.contentLo) === UNCHANGED) {
        this.unchanged++;
        continue;
      }
      this.next.sent(row.keyHi, row.keyLo, row.contentHi, row.contentLo, row.keyJson);
      this.inner.line(row.line);
      this.sent++;
      count++;
      if (this.inner.full) await this.inner.drain();
    }
    this.held.clear();
    this.heldBytes = 0;
    return count;
  }

  /** Keeps the row just read as the last of its key (its line made by `line` only now: most rows are never held). */
  private hold(line: () => string): void {
    const entry = this.confirmed.found;
    const earlier = this.held.get(entry);
    const { keyHi, keyLo, contentHi, contentLo } = this.identity;
    const row: HeldRow = { line: line(), keyHi, keyLo, contentHi, contentLo, keyJson: earlier?.keyJson ?? this.identity.keyJson(), rows: (earlier?.rows ?? 0) + 1 };
    this.heldBytes += row.line.length - (earlier?.line.length ?? -row.keyJson.length);
    this.held.set(entry, row);
  }

  /** A record copied as it came, its closing brace in the tail (after the members the envelope adds): read with the brace. */
  private verdictWithoutBrace(source: Buffer, start: number, end: number): Verdict {
    const length = end - start + 1;
    if (this.scratch.length < length) this.scratch = Buffer.allocUnsafe(Math.max(length, this.scratch.length * 2));
    source.copy(this.scratch, 0, start, end);
    this.scratch.set(CLOSE_BRACE, length - 1);
    return this.verdict(this.scratch, 0, length);
  }

  /** What becomes of the record in bytes[start, end); notes it for the next generation when it goes on. */
  private verdict(bytes: Buffer, start: number, end: number): Verdict {
    if (!this.identity.read(bytes, start, end)) {
      this.unkeyed++;
      return SEND;
    }
    return this.known();
  }

  /** What becomes of the record the identity just read; notes it for the next generation when it goes on. */
  private known(): Verdict {
    // As int32 (the store takes either): a uint32 above 2^31 passed to a function not inlined is boxed, four objects a row to collect.
    const { identity } = this;
    const keyHi = identity.keyHi | 0;
    const keyLo = identity.keyLo | 0;
    const contentHi = identity.contentHi | 0;
    const contentLo = identity.contentLo | 0;
    let check = this.confirmed.check(keyHi, keyLo, contentHi, contentLo);
    if (check === REPEATS) {
      // Held while there is room (a key held already stays held: its earlier rows were not sent).
      const entry = this.confirmed.found;
      if (this.onlyChanges && (this.held.has(entry) || this.heldBytes < this.heldMaxBytes)) return HOLD;
      check = this.confirmed.compare(entry, contentHi, contentLo);
    }
    if (check === UNCHANGED && this.onlyChanges) {
      this.unchanged++;
      return SKIP;
    }
    // Sending every row (a full pass), an unchanged row is noted too: a key sent twice is then known to be (next-generation.ts readSent), which a reader that keeps either of a run's rows needs.
    this.next.sent(keyHi, keyLo, contentHi, contentLo, identity.keyBytes, identity.keyBytesLength);
    return SEND;
  }
}
