import type { RowIdentity } from '../records/row-identity.js';
import type { JsonLine } from '../records/json-line.js';
import { UNCHANGED, type SentRows } from '../store/sent-rows.js';
import type { NextGeneration } from '../store/next-generation.js';
import type { RecordSink } from '../output/record-sink.js';
import type { Envelope } from './decoders.js';

const CLOSE_BRACE = Buffer.from('}');

/**
 * The records of a run through the change store, between the decoders and
 * the stream's output: each record queued is read as emitted (its key and
 * content hashes: RowIdentity) and compared with what the target holds
 * (SentRows). With `onlyChanges`, a record the target holds as it is goes no
 * further; any other goes on and is noted for the generation this run writes.
 * A record whose key cannot be read goes on unnoted: a doubt never skips a row.
 */
export class ChangedRows implements RecordSink {
  /** Records the target holds as they are, not sent. */
  unchanged = 0;
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

  constructor(
    private readonly inner: RecordSink,
    private readonly identity: RowIdentity,
    private readonly sent: SentRows,
    private readonly next: NextGeneration,
    private readonly onlyChanges: boolean,
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

  get full(): boolean {
    return this.inner.full;
  }

  drain(): Promise<void> {
    return this.inner.drain();
  }

  reserve(bytes: number): Buffer {
    this.block = this.inner.reserve(bytes);
    return this.block;
  }

  commit(end: number): void {
    if (this.passes(this.block, this.inner.pos + this.headLength, end - this.tailLength)) this.inner.commit(end);
  }

  /** The next record spliced is this scanned line: read from its members' places, not scanned again. */
  scannedLine(line: JsonLine): void {
    this.scanned = line;
  }

  spliced(head: Buffer, source: Buffer, start: number, end: number, tail: Buffer): void {
    const line = this.scanned;
    this.scanned = undefined;
    let passes: boolean;
    if (line !== undefined && line.buffer === source && line.start === start && this.identity.readScanned(line)) passes = this.known();
    else passes = tail === this.closing ? this.passesWithoutBrace(source, start, end) : this.passes(source, start, end);
    if (passes) this.inner.spliced(head, source, start, end, tail);
  }

  line(text: string): void {
    const record = Buffer.from(text.slice(this.headLength, text.length - (this.tailLength - 1)));
    if (this.passes(record, 0, record.length)) this.inner.line(text);
  }

  /** A record copied as it came, its closing brace in the tail (after the members the envelope adds): read with the brace. */
  private passesWithoutBrace(source: Buffer, start: number, end: number): boolean {
    const length = end - start + 1;
    if (this.scratch.length < length) this.scratch = Buffer.allocUnsafe(Math.max(length, this.scratch.length * 2));
    source.copy(this.scratch, 0, start, end);
    this.scratch.set(CLOSE_BRACE, length - 1);
    return this.passes(this.scratch, 0, length);
  }

  /** Whether the record in bytes[start, end) goes on; notes it for the next generation when it does. */
  private passes(bytes: Buffer, start: number, end: number): boolean {
    if (!this.identity.read(bytes, start, end)) {
      this.unkeyed++;
      return true;
    }
    return this.known();
  }

  /** Whether the record the identity just read goes on; notes it for the next generation when it does. */
  private known(): boolean {
    const identity = this.identity;
    const { keyHi, keyLo, contentHi, contentLo } = identity;
    if (this.sent.check(keyHi, keyLo, contentHi, contentLo) === UNCHANGED) {
      if (!this.onlyChanges) return true;
      this.unchanged++;
      return false;
    }
    this.next.sent(keyHi, keyLo, contentHi, contentLo, identity.keyJson());
    return true;
  }
}
