import { LineSplitter } from '../records/lines.js';
import { CsvScanner } from '../records/csv.js';
import { RetryBudget, type DumpClient, type DumpRequest } from '../http/client.js';
import { DumpStart } from '../http/dump-start.js';

/** What a sample of a dump shows of its fields: their names in the order served, and the values seen. */
export interface Sample {
  /** Served field names, in the order the dump first shows them. */
  readonly names: readonly string[];
  /** Values by served name: JSON values for JSONL, texts ('' when empty) for CSV. */
  readonly values: ReadonlyMap<string, readonly unknown[]>;
  readonly records: number;
}

export interface SampleLimits {
  records: number;
  bytes: number;
}

/** Reads values into a Sample as they come, up to the record limit. */
class SampleBuilder {
  readonly names: string[] = [];
  readonly values = new Map<string, unknown[]>();
  records = 0;

  constructor(private readonly limit: number) {}

  get full(): boolean {
    return this.records >= this.limit;
  }

  /** A field, with or without a value yet. */
  declare(name: string): unknown[] {
    let list = this.values.get(name);
    if (list === undefined) {
      list = [];
      this.values.set(name, list);
      this.names.push(name);
    }
    return list;
  }

  record(fields: Iterable<readonly [string, unknown]>): void {
    if (this.full) return;
    this.records++;
    for (const [name, value] of fields) this.declare(name).push(value);
  }
}

function jsonlSampler(builder: SampleBuilder, maxLineBytes: number): { push(chunk: Buffer): void; end(): void } {
  return new LineSplitter(
    maxLineBytes,
    (buffer, start, end) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(buffer.toString('utf8', start, end));
      } catch {
        return;
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return;
      builder.record(Object.entries(parsed as Record<string, unknown>));
    },
    () => undefined,
  );
}

function csvSampler(builder: SampleBuilder, maxLineBytes: number, delimiter: number | null): { push(chunk: Buffer): void; end(): void } {
  let header: string[] | undefined;
  return new CsvScanner(
    maxLineBytes,
    (row) => {
      const texts = row.texts();
      if (!header) {
        header = texts.map((t) => t.trim());
        for (const name of header) builder.declare(name);
        return;
      }
      if (texts.length === header.length) builder.record(header.map((name, i) => [name, texts[i]] as const));
    },
    () => undefined,
    delimiter,
  );
}

/**
 * Reads the first records of a dump (at most `limits.records` records or
 * `limits.bytes` bytes) and closes the response: discovery never reads a
 * whole dump. A broken body ends the sample where it broke.
 */
export async function sampleDump(client: DumpClient, request: DumpRequest, limits: SampleLimits, csvDelimiter: number | null): Promise<Sample> {
  const builder = new SampleBuilder(limits.records);
  const response = await client.open(request, new RetryBudget());
  if (response.status !== 200) return { names: [], values: new Map(), records: 0 };
  const sampler = request.format === 'csv' ? csvSampler(builder, limits.bytes, csvDelimiter) : jsonlSampler(builder, limits.bytes);
  // A login page answered with 200 and a dump's Content-Type is refused as the sync refuses it, not sampled as fields.
  const start = new DumpStart(`${request.stream.name} dump: the body at ${request.stream.path}.${request.format}`);
  let page: unknown;
  const decided = (pieces: () => Buffer[]): Buffer[] => {
    try {
      return pieces();
    } catch (error) {
      page = error;
      throw error;
    }
  };
  let bytes = 0;
  try {
    for await (const chunk of response.body) {
      for (const piece of decided(() => start.take(chunk))) sampler.push(piece);
      bytes += chunk.length;
      if (builder.full || bytes >= limits.bytes) break;
    }
    for (const piece of decided(() => start.end())) sampler.push(piece);
  } catch {
    if (page !== undefined) throw page;
    // What arrived before the break is the sample.
  } finally {
    response.abort();
  }
  return { names: builder.names, values: builder.values, records: builder.records };
}
