import type { BatchFiles } from '../output/batch-files.js';
import type { BatchJournal } from '../output/batch-journal.js';
import { metric } from '../observe/metrics.js';
import { Envelope } from './decoders.js';
import type { BatchSettings } from '../config/batch.js';
import type { OutputProtocol } from '../output/protocol.js';
import type { RecordSink } from '../output/record-sink.js';
import type { MessageWriter } from '../output/writer.js';
import type { Logger } from '../observe/log.js';

/** Batch files of one run: the settings and the run's part of every file name. */
export interface BatchRun {
  settings: BatchSettings;
  runId: string;
  /** Files of the run still under their temporary names. */
  partials: Set<string>;
  /** What the run announced, on disk, for the run after one that dies (batch-journal.ts). */
  journal: BatchJournal;
  /** The batch file writer, loaded for this run. */
  Files: typeof BatchFiles;
}

/**
 * Where one stream's records go: RECORD messages on stdout, or batch files
 * announced by BATCH messages. Either way the stream's sync feeds `records`
 * with lines between `envelope`'s head and tail, waits on `drain` when `full`,
 * calls `finish` once the dump was read (before STATE), and `abort` if the
 * read failed.
 */
export interface StreamOutput {
  readonly records: RecordSink;
  readonly envelope: Envelope;
  readonly full: boolean;
  drain(): Promise<void>;
  finish(): Promise<void>;
  abort(): Promise<void>;
}

export function streamOutput(stream: string, writer: MessageWriter, protocol: OutputProtocol, logger: Logger, batch: BatchRun | undefined): StreamOutput {
  if (batch === undefined || protocol.batch === undefined) return recordMessages(stream, writer, protocol);
  return new BatchOutput(stream, writer, protocol.batch.bind(protocol), logger, batch);
}

function recordMessages(stream: string, writer: MessageWriter, protocol: OutputProtocol): StreamOutput {
  const { head, tail } = protocol.recordEnvelope(stream, new Date());
  return {
    records: writer,
    envelope: new Envelope(head, tail),
    get full() {
      return writer.full;
    },
    drain: () => writer.drain(),
    finish: () => writer.drain(),
    abort: () => Promise.resolve(),
  };
}

type BatchMessage = NonNullable<OutputProtocol['batch']>;

/** Records as bare JSON objects a line in batch files; each finished file's BATCH message goes on stdout. */
class BatchOutput implements StreamOutput {
  readonly records: BatchFiles;
  readonly envelope = new Envelope('', '');

  constructor(
    private readonly stream: string,
    private readonly writer: MessageWriter,
    message: BatchMessage,
    private readonly logger: Logger,
    batch: BatchRun,
  ) {
    const encoding = { format: 'jsonl', compression: batch.settings.compression } as const;
    const announce = (url: string, name: string): void => {
      batch.journal.announcing(name);
      writer.line(message(stream, encoding, [url]));
      // Out at once: the target loads this file while the next one fills.
      writer.send();
    };
    this.records = new batch.Files(batch.settings, stream, batch.runId, announce, batch.partials);
  }

  get full(): boolean {
    return this.records.full || this.writer.full;
  }

  async drain(): Promise<void> {
    await this.records.drain();
    await this.writer.drain();
  }

  async finish(): Promise<void> {
    await this.records.finish();
    await this.writer.drain();
    metric(this.logger, 'counter', 'batch_count', this.records.files, { stream: this.stream });
  }

  /** Partial files go; the BATCH messages of files already complete still reach the target. */
  async abort(): Promise<void> {
    await this.records.abort();
    await this.writer.drain().catch(() => undefined);
  }
}
