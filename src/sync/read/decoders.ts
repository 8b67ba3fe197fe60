import { runtimeError } from '../../errors.js';
import { jsonErrorLocation } from '../../config/json-location.js';
import { LineSplitter } from '../../records/lines.js';
import { CsvScanner, CsvSyntaxError } from '../../records/csv.js';
import { CsvHeaderError, CsvRecordEncoder } from '../../records/csv-record.js';
import { JsonRecordConformer } from '../../records/json-record.js';
import { JsonLine } from '../../records/json-line.js';
import { parseKeepingDigits } from '../../records/long-numbers.js';
import { JsonLineEncoder } from '../../records/json-line-encoder.js';
import { InvalidRecordError } from '../../records/invalid-record.js';
import type { FieldTable } from '../../records/fields.js';
import type { DumpFormat } from '../../catalog/reports.js';
import type { RecordSink } from '../../output/record-sink.js';
import type { Logger } from '../../observe/log.js';
import type { CursorRecord } from './incremental.js';
import type { BodyConsumer } from './resumable-read.js';

/**
 * Decoders turn a dump's bytes into RECORD lines on the writer, each with its
 * own fast path: a JSONL record that already fits its schema is copied as its
 * original bytes, a CSV row is typed and encoded on its bytes. What they ask
 * of the stream's sync is in `RecordHandlers`.
 */

export interface RecordHandlers {
  /** The read's resume cursor: counts a record (or an invalid line) and says whether it is new (false: an earlier attempt handled it). */
  readonly resume: { advance(): boolean };
  /** The incremental cursor: whether the conformed record is emitted; `settle` once the decoder is done with a chunk's bytes. */
  readonly cursor: { admit(record: CursorRecord): boolean; settle(): void };
}

/**
 * The stream's RECORD envelope: a record's JSON goes between head and tail;
 * `tailBytes` ends the line. `members` (`,"name":value`…, see OutputProtocol)
 * go inside the record, before its closing brace: an encoder writes
 * `membersBytes` there, a record copied as it came ends with `closingBytes`
 * instead of its brace. A record always holds its key properties, so the
 * members' leading comma never follows an empty object.
 */
export class Envelope {
  readonly headBytes: Buffer;
  readonly tailBytes: Buffer;
  readonly membersBytes: Buffer;
  readonly closingBytes: Buffer;

  constructor(
    readonly head: string,
    readonly tail: string,
    readonly members = '',
  ) {
    this.headBytes = Buffer.from(head);
    this.tailBytes = Buffer.from(`${tail}\n`);
    this.membersBytes = Buffer.from(members);
    this.closingBytes = Buffer.from(`${members}}${tail}\n`);
  }

  /** The RECORD line of a record's JSON text, without the line break. */
  line(json: string): string {
    return this.members === '' ? this.head + json + this.tail : `${this.head}${json.slice(0, -1)}${this.members}}${this.tail}`;
  }
}

const CLOSE_BRACE = 0x7d;

/** Queues the record that is `source[start..end)`, a JSON object as the dump had it (JSON whitespace may follow its brace). */
function splicedRecord(writer: RecordSink, envelope: Envelope, source: Buffer, start: number, end: number): void {
  if (envelope.membersBytes.length === 0) return writer.spliced(envelope.headBytes, source, start, end, envelope.tailBytes);
  let close = end - 1;
  while (source[close] !== CLOSE_BRACE) close--;
  writer.spliced(envelope.headBytes, source, start, close, envelope.closingBytes);
}

export interface DecoderContext {
  table: FieldTable;
  writer: RecordSink;
  envelope: Envelope;
  maxLineBytes: number;
  /** The CSV delimiter's code, or null to sniff it from the header line. */
  csvDelimiter?: number | null;
  invalid: InvalidRecords;
  handlers: RecordHandlers;
}

/**
 * The invalid-record policy: `fail` stops the run naming the line, `skip`
 * counts the record and logs the first few. Messages name the stream, format
 * and line; what the record held is never quoted beyond the field rules' own
 * short excerpts.
 */
export class InvalidRecords {
  skipped = 0;

  constructor(
    private readonly policy: 'fail' | 'skip',
    /** E.g. `training dump (csv)`. */
    readonly what: string,
    private readonly logger: Logger,
  ) {}

  handle(error: InvalidRecordError, line: number): void {
    const what = `${this.what} line ${line}: ${error.message}`;
    if (this.policy === 'fail') {
      throw runtimeError(`${what}. The record was not emitted and the bookmark was not moved; set on_invalid_record to skip to skip such records.`);
    }
    this.skipped++;
    if (this.skipped <= 5) this.logger.warn(`skipped invalid record: ${what}`);
    else this.logger.debug(`skipped invalid record: ${what}`);
  }
}

export function createDecoder(format: DumpFormat, context: DecoderContext): BodyConsumer {
  return format === 'csv' ? csvDecoder(context) : jsonlDecoder(context);
}

/** A line the splitter or scanner rejected (too long, not UTF-8) counts as a record of the read. */
function invalidLine({ handlers, invalid }: DecoderContext) {
  return (error: InvalidRecordError, line: number): void => {
    if (handlers.resume.advance()) invalid.handle(error, line);
  };
}

function jsonlDecoder(context: DecoderContext): BodyConsumer {
  const { table, writer, envelope, invalid } = context;
  const { resume, cursor } = context.handlers;
  const objects = new JsonRecordConformer(table);
  const scanned = new JsonLine();
  const encoder = new JsonLineEncoder(table, objects);
  // The byte path: no JSON.parse, no JSON.stringify, the same records.
  const fast = (buffer: Buffer, start: number, end: number): boolean => {
    // The splitter had the scanner read the line while finding its end: it is scanned once, whether read or refused.
    if (!(scanned.lineScanned(buffer, start, end) ?? scanned.scan(buffer, start, end)) || !encoder.prepare(scanned)) return false;
    if (!cursor.admit(encoder)) return true;
    const { headBytes, tailBytes, membersBytes } = envelope;
    if (encoder.unchanged) {
      writer.scannedLine?.(scanned);
      splicedRecord(writer, envelope, buffer, start, end);
    } else writer.commit(encoder.encode(writer.reserve(encoder.maxBytes(headBytes, tailBytes, membersBytes)), writer.pos, headBytes, tailBytes, membersBytes));
    return true;
  };
  // The object path, for lines the scanner leaves to JSON.parse.
  const slow = (buffer: Buffer, start: number, end: number, line: number): void => {
    const text = buffer.toString('utf8', start, end);
    let parsed: unknown;
    try {
      parsed = parseKeepingDigits(text);
    } catch {
      return invalid.handle(new InvalidRecordError(`not valid JSON (${jsonErrorLocation(text).replace(/^line 1, /, '')})`), line);
    }
    const record = objects.conform(parsed);
    if (!cursor.admit(objects)) return;
    if (objects.unchanged) splicedRecord(writer, envelope, buffer, start, end);
    else writer.line(envelope.line(JSON.stringify(record)));
  };
  const lines = new LineSplitter(
    context.maxLineBytes,
    (buffer, start, end, line) => {
      if (!resume.advance()) return;
      try {
        if (!fast(buffer, start, end)) slow(buffer, start, end, line);
      } catch (error) {
        if (error instanceof InvalidRecordError) return invalid.handle(error, line);
        throw error;
      }
    },
    invalidLine(context),
    // The scanner finds each line's end as it reads the line: no second pass over its bytes for the line break.
    (buffer, start, limit) => scanned.scanLine(buffer, start, limit),
  );
  return settledPerChunk(lines, cursor);
}

/** Has the cursor settle its snapshots after each chunk: they may point into the chunk until then. */
function settledPerChunk(consumer: BodyConsumer, cursor: RecordHandlers['cursor']): BodyConsumer {
  return {
    push(chunk) {
      consumer.push(chunk);
      cursor.settle();
    },
    end() {
      consumer.end();
      cursor.settle();
    },
  };
}

function csvDecoder(context: DecoderContext): BodyConsumer {
  const { table, writer, envelope, invalid } = context;
  const { resume, cursor } = context.handlers;
  let encoder: CsvRecordEncoder | undefined;
  const scanner = new CsvScanner(
    context.maxLineBytes,
    (next, line) => {
      if (!encoder) {
        encoder = new CsvRecordEncoder(next.texts(), table);
        return;
      }
      if (!resume.advance()) return;
      try {
        encoder.inspect(next);
        // The line is built in the writer's block but queued only once admitted.
        const { headBytes, tailBytes, membersBytes } = envelope;
        const end = encoder.encode(next, writer.reserve(encoder.maxBytes(next, headBytes, tailBytes, membersBytes)), writer.pos, headBytes, tailBytes, membersBytes);
        if (cursor.admit(encoder)) writer.commit(end);
      } catch (error) {
        if (error instanceof InvalidRecordError) return invalid.handle(error, line);
        throw error;
      }
    },
    invalidLine(context),
    context.csvDelimiter === undefined ? 44 : context.csvDelimiter,
  );
  // CSV that cannot be read on fails the run in both invalid-record policies.
  const syntaxChecked = (read: () => void): void => {
    try {
      read();
    } catch (error) {
      if (error instanceof CsvHeaderError) throw runtimeError(`${invalid.what}: ${error.message} Nothing was emitted and the bookmark was not moved.`);
      if (!(error instanceof CsvSyntaxError)) throw error;
      throw runtimeError(`${invalid.what}: ${error.message}. Nothing after it was emitted and the bookmark was not moved.`);
    }
  };
  return settledPerChunk({ push: (chunk) => syntaxChecked(() => scanner.push(chunk)), end: () => syntaxChecked(() => scanner.end()) }, cursor);
}
