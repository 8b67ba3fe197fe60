import { Parser, type Info } from 'csv-parse';
import { InvalidRecordError } from '../conform.js';
import { Utf8Validator } from './utf8.js';

export class CsvSyntaxError extends Error {}

type ParsedRow = { record: string[]; info: Info & { lines: number } };

/**
 * Feeds body chunks to csv-parse and hands out rows synchronously, so the
 * engine can process a whole chunk and then wait for stdout once.
 */
export class CsvRows {
  private readonly parser: Parser;
  private readonly utf8 = new Utf8Validator();
  private header: string[] | undefined;
  private failure: Error | undefined;

  constructor(
    maxRecordBytes: number,
    private readonly onHeader: (header: string[]) => void,
    private readonly onRow: (row: string[], lineNumber: number) => void,
    private readonly onInvalidRow: (error: InvalidRecordError, lineNumber: number) => void,
  ) {
    this.parser = new Parser({
      bom: true,
      info: true,
      relax_column_count: true,
      skip_empty_lines: true,
      max_record_size: maxRecordBytes,
    });
    this.parser.on('error', (error: Error) => {
      this.failure = error;
    });
  }

  push(chunk: Buffer): void {
    if (!this.utf8.push(chunk)) {
      throw new CsvSyntaxError(`CSV body is not valid UTF-8 (near byte ${this.utf8.bytesChecked}, after line ${this.parser.info.lines})`);
    }
    this.parser.write(chunk);
    this.drain();
  }

  /** The body ended cleanly: csv-parse flushes a last row without a line break asynchronously. */
  async end(): Promise<void> {
    if (!this.utf8.end()) throw new CsvSyntaxError('CSV body ends inside a UTF-8 character');
    this.parser.end();
    try {
      for await (const item of this.parser) this.handle(item as ParsedRow);
    } catch (error) {
      throw new CsvSyntaxError(`malformed CSV: ${(error as Error).message}`);
    }
  }

  private drain(): void {
    for (;;) {
      if (this.failure) throw new CsvSyntaxError(`malformed CSV: ${this.failure.message}`);
      const item = this.parser.read() as ParsedRow | null;
      if (item === null) break;
      this.handle(item);
    }
    if (this.parser.errored && !this.failure) this.failure = this.parser.errored;
    if (this.failure) throw new CsvSyntaxError(`malformed CSV: ${this.failure.message}`);
  }

  private handle(item: ParsedRow): void {
    if (this.header === undefined) {
      this.header = item.record;
      this.onHeader(item.record);
      return;
    }
    if (item.record.length !== this.header.length) {
      this.onInvalidRow(new InvalidRecordError(`row has ${item.record.length} columns, the header has ${this.header.length}`), item.info.lines);
      return;
    }
    this.onRow(item.record, item.info.lines);
  }
}
