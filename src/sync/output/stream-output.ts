import type { BatchFiles } from '../../output/batch-files.js';
import type { BatchJournal } from '../../output/batch-journal.js';
import type { Spool, SpoolSettings } from '../../output/spool.js';
import { metric } from '../../observe/metrics.js';
import { Envelope } from '../read/decoders.js';
import type { BatchSettings } from '../../config/batch.js';
import type { OutputProtocol } from '../../output/protocol.js';
import type { RecordSink } from '../../output/record-sink.js';
import type { MessageWriter } from '../../output/writer.js';
import type { Logger } from '../../observe/log.js';

/** Batch files of one run: the settings and the run's part of every file name. */
export interface BatchRun {
  settings: BatchSettings;
  runId: string;
  /** Paths the run wrote and has not announced (batch files under their temporary names or held back, a full pass's spool): removed if the run is stopped. */
  unannounced: Set<string>;
  /** What the run announced, on disk, for the run after one that dies (batch-journal.ts). */
  journal: BatchJournal;
  /** The batch file writer, loaded for this run. */
  Files: typeof BatchFiles;
}

/**
 * Where one stream's records go during a run: RECORD messages on stdout, or
 * batch files announced by BATCH messages; for a full pass that activates a
 * table version, held back (a spool, or batch files not yet announced) until
 * the whole pass is known good. Each read of the run feeds `records` with
 * lines between the head and tail of its `envelope`, waiting on `drain` when
 * `full`; once every read is done, `complete` makes sure the held records are
 * all there, then `release` sends them, after ACTIVATE_VERSION when it names a
 * version. `abort` after a failure: nothing held goes out.
 */
export interface StreamOutput {
  readonly records: RecordSink;
  /** The RECORD envelope of a read that starts now. */
  envelope(extractedAt: Date): Envelope;
  readonly full: boolean;
  drain(): Promise<void>;
  /** `records`: how many the reads admitted, which the held output must hold. */
  complete(records: number): Promise<void>;
  release(activateVersion: number | undefined): Promise<void>;
  /** What `release` has still to send, in words (`1234 records`), while it runs. */
  remaining(): string;
  abort(): Promise<void>;
}

export interface OutputContext {
  stream: string;
  writer: MessageWriter;
  protocol: OutputProtocol;
  logger: Logger;
  batch?: BatchRun;
  /** The version the run's records carry. */
  version?: number;
  /** Set when the records are held until `release` (a full pass that may activate its version). */
  hold?: SpoolSettings;
}

export async function streamOutput(context: OutputContext): Promise<StreamOutput> {
  const { batch, protocol, hold } = context;
  if (batch !== undefined && protocol.batch !== undefined) return new BatchOutput(context, batch, protocol.batch.bind(protocol), hold !== undefined);
  if (hold === undefined) return recordMessages(context);
  const { Spool } = await import('../../output/spool.js');
  return new SpooledRecords(context, await Spool.open(hold));
}

function envelopeOf({ protocol, stream, version }: OutputContext, extractedAt: Date): Envelope {
  const { head, tail, members } = protocol.recordEnvelope(stream, extractedAt, version);
  return new Envelope(head, tail, members);
}

/** RECORD messages straight to stdout. */
function recordMessages(context: OutputContext): StreamOutput {
  const { writer } = context;
  return {
    records: writer,
    envelope: (extractedAt) => envelopeOf(context, extractedAt),
    get full() {
      return writer.full;
    },
    drain: () => writer.drain(),
    complete: () => writer.drain(),
    release: () => Promise.resolve(),
    remaining: () => 'nothing',
    abort: () => Promise.resolve(),
  };
}

/** The ACTIVATE_VERSION line, when a version is to be activated. */
function activation({ protocol, stream, writer }: OutputContext, version: number | undefined): void {
  if (version !== undefined && protocol.activateVersion !== undefined) writer.message(protocol.activateVersion(stream, version));
}

/** RECORD messages of a full pass, held in a spool until the pass is known good, then sent after ACTIVATE_VERSION. */
class SpooledRecords implements StreamOutput {
  constructor(
    private readonly context: OutputContext,
    private readonly spool: Spool,
  ) {}

  get records(): RecordSink {
    return this.spool;
  }

  envelope(extractedAt: Date): Envelope {
    return envelopeOf(this.context, extractedAt);
  }

  get full(): boolean {
    return this.spool.full;
  }

  drain(): Promise<void> {
    return this.spool.drain();
  }

  async complete(records: number): Promise<void> {
    await this.spool.complete();
    await this.spool.verify(records);
    this.context.logger.info(`${this.context.stream}: full pass held in a spool: ${records} records, ${(this.spool.bytes / 1_048_576).toFixed(1)} MiB on disk${this.spool.compressed ? ' (compressed beyond its plain head)' : ''}, checked`);
  }

  async release(activateVersion: number | undefined): Promise<void> {
    const { writer } = this.context;
    activation(this.context, activateVersion);
    await this.spool.replay(writer);
    await writer.drain();
    await this.spool.discard();
  }

  remaining(): string {
    return `the ${this.spool.count - this.spool.replayed} records of the pass still to be sent`;
  }

  abort(): Promise<void> {
    return this.spool.discard();
  }
}

type BatchMessage = NonNullable<OutputProtocol['batch']>;

/** Records as bare JSON objects a line in batch files; each finished file's BATCH message goes on stdout (held until release in a full pass). */
class BatchOutput implements StreamOutput {
  readonly records: BatchFiles;

  constructor(
    private readonly context: OutputContext,
    batch: BatchRun,
    message: BatchMessage,
    hold: boolean,
  ) {
    const { stream, writer } = context;
    const encoding = { format: 'jsonl', compression: batch.settings.compression } as const;
    // Out at once, the target loads this file while the next one fills. False when stdout did not take the whole message (its reader closed): it never reached the target, and the file goes with the run.
    const announce = async (url: string, name: string, records: number): Promise<boolean> => {
      if (writer.broken) return false;
      batch.journal.announcing(name);
      if (!(await writer.deliver(message(stream, encoding, [url])))) return false;
      writer.countRecords(records);
      return true;
    };
    this.records = new batch.Files(batch.settings, stream, batch.runId, announce, batch.unannounced, hold);
  }

  /** Batch files hold bare records: no envelope. */
  envelope(): Envelope {
    return new Envelope('', '');
  }

  get full(): boolean {
    return this.records.full || this.context.writer.full;
  }

  async drain(): Promise<void> {
    await this.records.drain();
    await this.context.writer.drain();
  }

  async complete(records: number): Promise<void> {
    await this.records.finish();
    await this.context.writer.drain();
    if (this.records.records !== records) throw new Error(`${this.context.stream}: the batch files hold ${this.records.records} records where ${records} were read`);
  }

  async release(activateVersion: number | undefined): Promise<void> {
    activation(this.context, activateVersion);
    await this.records.release();
    await this.context.writer.drain();
    metric(this.context.logger, 'counter', 'batch_count', this.records.files, { stream: this.context.stream });
  }

  remaining(): string {
    return `the pass's ${this.records.files} BATCH messages to reach the target`;
  }

  /** Partial files go, and so do files held back; the BATCH messages of files already announced still reach the target. */
  async abort(): Promise<void> {
    await this.records.abort();
    await this.context.writer.drain().catch(() => undefined);
  }
}
