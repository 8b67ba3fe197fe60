/**
 * How far a run got, for the line a stop by signal leaves: the records of
 * the streams it finished (their STATE went out) and of the one it was in
 * (whose state it does not advance, but for the STATE checkpoints between
 * its reads on a face that sends them). A full pass held in a spool has sent
 * none of its records yet.
 */
/**
 * Where a stream's records go: `sent` at once, `held` until its full pass is
 * known good (a spool or unannounced batch files), `compared` with the change
 * store first (the unchanged ones are not sent).
 */
export type RecordOutput = 'sent' | 'held' | 'compared';

/**
 * What the run has put out so far, by the writer's count (writer.ts): its
 * records `queued` (some still in the writer's block, which a stop throws
 * away) and those `written` to stdout (the pipe has them).
 */
export interface OutputCounts {
  queued(): number;
  written(): number;
  /** Those written and those of a write still going on (part of it may be in the pipe). */
  handed(): number;
}

const NONE_OUT: OutputCounts = { queued: () => 0, written: () => 0, handed: () => 0 };

/** `read` records of the stream read, `written` of its records written to stdout. */
const OUTPUT_WORDS: Record<RecordOutput, (read: number, written: string) => string> = {
  sent: (read, written) => `${read} records of it read so far, ${written} of them written to stdout`,
  held: (read) => `${read} records of its full pass read and held back, none sent (what was held is removed)`,
  compared: (read, written) => `${read} records of it read so far, ${written} records written to stdout (those that changed)`,
};

export class RunProgress {
  /** `out`: the writer's counts; the stream's records written are those past the records queued before it. */
  constructor(private readonly out: OutputCounts = NONE_OUT) {}

  private finishedRecords = 0;
  private finishedStreams = 0;
  /** The stream being read; `checkpoint`: the records before its last STATE checkpoint, when one went out (Airbyte, between reads). */
  private current: { stream: string; records: () => number; output: RecordOutput; queuedBefore: number; checkpoint?: number } | undefined;
  /** The stream begun and not yet finished (from its first message, before its reads): the one a stop cuts short. */
  private begun: string | undefined;

  /** `stream` begins: its first message (SCHEMA, or Airbyte's STARTED status) may be out. */
  began(stream: string): void {
    this.begun = stream;
  }

  /** The stream failed, its INCOMPLETE sent: a stop from now on cuts no stream short. */
  failed(): void {
    this.begun = undefined;
    this.current = undefined;
  }

  /** The stream a stop would cut short, if any. */
  get unfinished(): string | undefined {
    return this.begun;
  }

  /** `stream` is read now; `records` counts what its reads let through so far; `output` says where they go. */
  reading(stream: string, records: () => number, output: RecordOutput): void {
    this.current = { stream, records, output, queuedBefore: this.out.queued() };
  }

  /** A STATE checkpoint of the current stream went out after `records` of its records: a stop no longer leaves its state where it was. */
  checkpointed(records: number): void {
    if (this.current !== undefined) this.current = { ...this.current, checkpoint: records };
  }

  /** What the current stream held back went out (a full pass released): its records count as emitted from now on. */
  released(): void {
    if (this.current?.output === 'held') this.current = { ...this.current, output: 'sent' };
  }

  /** The stream's STATE went out with `records`. */
  finished(records: number): void {
    this.finishedRecords += records;
    this.finishedStreams += 1;
    this.current = undefined;
    this.begun = undefined;
  }

  /** Where the run stands, as the rest of a sentence starting `stopping for SIGTERM`. */
  describe(): string {
    const streams = this.finishedStreams === 1 ? '1 stream' : `${this.finishedStreams} streams`;
    const finished = `${streams} finished (${this.finishedRecords} records, STATE sent)`;
    const before = this.finishedStreams === 0 ? '' : `; ${finished.replace(' finished', ' finished before it')}`;
    if (this.current === undefined) return this.finishedStreams === 0 ? ' before any record was read' : ` between streams: ${finished}`;
    const { stream, records, output, queuedBefore, checkpoint } = this.current;
    // Read counts a chunk's records once the chunk is done; the writer, each as it goes: what went out is at most what was read.
    const read = records();
    // Written in order: those of the streams before come out first.
    const written = Math.min(read, Math.max(0, this.out.written() - queuedBefore));
    const handed = Math.min(read, Math.max(0, this.out.handed() - queuedBefore));
    // A write the stop cuts short (a full pipe took part of it): how much of it went is not known.
    const sent = OUTPUT_WORDS[output](read, handed > written ? `${written} to ${handed}` : `${written}`);
    const state =
      checkpoint === undefined
        ? `the state was not advanced for ${stream}, so its next run reads from the same bookmark`
        : `the state of ${stream} went as far as its last STATE checkpoint (after ${checkpoint} of them), so its next run resumes from there`;
    return ` during ${stream}: ${sent}${before}; ${state}`;
  }
}
