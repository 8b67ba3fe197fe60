import { describeError, runtimeError } from '../errors.js';
import { fieldSpecs, InvalidRecordError, RecordConformer } from '../records/fields.js';
import { buildQuery } from '../http/query.js';
import { jsonErrorLocation } from '../config/json-location.js';
import { instantMs } from '../dates.js';
import { LineSplitter } from '../records/lines.js';
import { CsvScanner, CsvSyntaxError, type CsvRow } from '../records/csv.js';
import { CsvRecordEncoder } from '../records/csv-record.js';
import { DumpClient, RetryBudget, type DumpResponse } from '../http/client.js';
import type { OutputProtocol } from '../singer/messages.js';
import { metric, RecordCounter } from '../observe/metrics.js';
import { ProgressLine } from '../observe/progress.js';
import { bookmarkValue, StateStore, type StreamBookmark } from '../state.js';
import { BookmarkTracker, contentHash, fingerprint } from './incremental.js';
import { ResumeCursor, ResumeMismatchError } from './resumable-read.js';
import { loadSchema } from '../catalog/schemas.js';
import type { MessageWriter } from '../output/writer.js';
import type { Config } from '../config/config.js';
import type { SelectedStream } from '../singer/catalog.js';
import type { Logger } from '../observe/log.js';

export interface StreamSummary {
  stream: string;
  records: number;
  invalidSkipped: number;
  notModified: boolean;
  bookmark: string | null;
  durationMs: number;
  bytes: number;
}

/** The body itself broke (network, timeout, gzip): the dump is requested again. */
class BrokenBodyError extends Error {}

export interface SyncContext {
  config: Config;
  protocol: OutputProtocol;
  client: DumpClient;
  writer: MessageWriter;
  state: StateStore;
  logger: Logger;
}



export async function syncStream(selected: SelectedStream, ctx: SyncContext): Promise<StreamSummary> {
  const started = Date.now();
  const name = selected.descriptor.name;
  try {
    const summary = await syncStreamOnce(selected, ctx, started);
    metric(ctx.logger, 'timer', 'sync_duration', (Date.now() - started) / 1000, { stream: name, status: 'succeeded' });
    return summary;
  } catch (error) {
    metric(ctx.logger, 'timer', 'sync_duration', (Date.now() - started) / 1000, { stream: name, status: 'failed' });
    throw error;
  }
}

async function syncStreamOnce(selected: SelectedStream, ctx: SyncContext, started: number): Promise<StreamSummary> {
  const { config, client, writer, state, logger, protocol } = ctx;
  const { descriptor } = selected;
  const name = descriptor.name;
  const counter = new RecordCounter(logger, name);
  const progress = new ProgressLine(name);
  let counted = 0;
  const incremental = selected.replicationMethod === 'INCREMENTAL';
  const previous: StreamBookmark | undefined = state.get(name);
  const previousValue = incremental ? bookmarkValue(previous, descriptor.replicationKey) : undefined;
  const previousMs = previousValue === undefined ? undefined : instantMs(previousValue);
  const lookbackMs = config.lookback_window * 1000;

  let lowerBoundMs: number | undefined;
  if (incremental) {
    if (previousMs !== undefined) lowerBoundMs = previousMs - lookbackMs;
    else if (config.start_date) lowerBoundMs = instantMs(config.start_date);
  }
  const { query, clientLowerBoundMs } = buildQuery(descriptor, config.filters[name], lowerBoundMs);
  const dedupeBoundary = incremental && lookbackMs === 0 && previousMs !== undefined;
  const previousBoundary = new Set(dedupeBoundary ? (previous?.boundary_hashes ?? []) : []);
  const selectedFields = Object.keys(selected.schema.properties ?? {});
  // What a Last-Modified answered: If-Modified-Since is sent only when the
  // request means the same (a moved bookmark, a changed filter or selection
  // must read the dump again).
  const requestParts = {
    method: selected.replicationMethod,
    filters: config.filters[name] ?? {},
    start: incremental ? (config.start_date ?? null) : null,
    lookback: config.lookback_window,
    fields: selectedFields,
  };
  const requestFingerprint = (bookmark: string | null | undefined): string => fingerprint({ ...requestParts, bookmark: bookmark ?? null });
  const ifModifiedSince = previous?.last_modified_request === requestFingerprint(previousValue) ? previous.last_modified : undefined;

  const schemaLine = protocol.schema(name, selected.schema, selected.keyProperties, incremental ? [descriptor.replicationKey] : []);
  if (schemaLine !== undefined) writer.line(schemaLine);

  const declared = new Set([...Object.keys(loadSchema(descriptor.schemaFile).properties ?? {}), ...selectedFields]);
  const conformer = new RecordConformer(fieldSpecs(selected.schema), {
    declaredFields: declared,
    keyProperties: selected.keyProperties,
    replicationKey: descriptor.replicationKey,
    onUndeclaredField: (field) =>
      logger.warn(`${name}: the service sends field ${JSON.stringify(field)}, which the stream's schema does not declare; it is left out of RECORD messages`),
  });

  const { head, tail } = protocol.recordEnvelope(name, new Date());
  const tracker = new BookmarkTracker();
  let emitted = 0;
  let invalidSkipped = 0;
  let duplicatesSkipped = 0;
  let outOfRange = 0;
  let bytes = 0;

  const invalid = (error: InvalidRecordError, lineNumber: number): void => {
    const what = `${name} dump (${config.format}) line ${lineNumber}: ${error.message}`;
    if (config.on_invalid_record === 'fail') {
      throw runtimeError(`${what}. The record was not emitted and the bookmark was not moved; set on_invalid_record to skip to skip such records.`);
    }
    invalidSkipped++;
    if (invalidSkipped <= 5) logger.warn(`skipped invalid record: ${what}`);
    else logger.debug(`skipped invalid record: ${what}`);
  };

  const headBytes = Buffer.from(head);
  const tailBytes = Buffer.from(`${tail}\n`);
  /** The record being decided on, as an object: only built when its content hash is needed. */
  let currentObject: () => Record<string, unknown> = () => ({});

  /** Whether a record is emitted: not when outside the incremental window, nor when emitted unchanged at the bookmark before. */
  const admit = (ms: number, value: string | null): boolean => {
    if (clientLowerBoundMs !== undefined && !(ms >= clientLowerBoundMs)) {
      outOfRange++;
      return false;
    }
    if (incremental && value !== null) {
      let hash: string | undefined;
      if (dedupeBoundary && ms === previousMs) {
        hash = contentHash(currentObject());
        if (previousBoundary.has(hash)) {
          duplicatesSkipped++;
          tracker.add(ms, value, hash);
          return false;
        }
      }
      if (tracker.wants(ms)) tracker.add(ms, value, hash ?? contentHash(currentObject()));
    }
    emitted++;
    return true;
  };

  const cursor = new ResumeCursor();

  const onInvalidLine = (error: InvalidRecordError, lineNumber: number): void => {
    if (cursor.advance(undefined, 0, 0, lineNumber)) invalid(error, lineNumber);
  };

  const makeParser = (): { push(chunk: Buffer): void; end(): void } => {
    if (config.format === 'csv') {
      let encoder: CsvRecordEncoder | undefined;
      let currentRow: CsvRow | undefined;
      currentObject = () => encoder!.toObject(currentRow!);
      return new CsvScanner(
        config.max_line_bytes,
        (row, lineNumber) => {
          if (!encoder) {
            encoder = new CsvRecordEncoder(row.texts(), conformer, selected.keyProperties, descriptor.replicationKey);
            return;
          }
          if (!cursor.advance(row.buffer, row.start, row.end, lineNumber)) return;
          currentRow = row;
          try {
            encoder.inspect(row);
            const end = encoder.encode(row, writer, headBytes, tailBytes);
            // The line is in the writer's block but counts only once admitted.
            if (admit(encoder.replicationMs, encoder.replicationValue)) writer.pos = end;
          } catch (error) {
            if (error instanceof InvalidRecordError) return invalid(error, lineNumber);
            throw error;
          }
        },
        onInvalidLine,
      );
    }
    let record: Record<string, unknown> = {};
    currentObject = () => record;
    return new LineSplitter(
      config.max_line_bytes,
      (text, lineNumber, buffer, start, end) => {
        if (!cursor.advance(buffer, start, end, lineNumber)) return;
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch (error) {
          return invalid(new InvalidRecordError(`not valid JSON (${jsonErrorLocation(text).replace(/^line 1, /, '')})`), lineNumber);
        }
        try {
          record = conformer.fromJson(parsed);
        } catch (error) {
          if (error instanceof InvalidRecordError) return invalid(error, lineNumber);
          throw error;
        }
        if (!admit(conformer.replicationMs, conformer.replicationValue)) return;
        if (conformer.unchanged) writer.spliced(headBytes, buffer, start, end, tailBytes);
        else writer.line(head + JSON.stringify(record) + tail);
      },
      onInvalidLine,
    );
  };

  const budget = new RetryBudget();
  let response: DumpResponse = await client.open({ stream: descriptor, format: config.format, query, ifModifiedSince }, budget);
  // Last-Modified of the read the cursor's handled records come from.
  let readLastModified = response.lastModified;
  if (response.status === 304) {
    logger.info(`${name}: dump unchanged since ${ifModifiedSince} (HTTP 304); no records, bookmark kept`);
  }

  let handledBefore = 0;
  while (response.status === 200) {
    const current = response;
    handledBefore = cursor.handled;
    const parser = makeParser();
    try {
      const chunks = current.body[Symbol.asyncIterator]();
      for (;;) {
        let next: IteratorResult<Buffer>;
        try {
          next = await chunks.next();
        } catch (error) {
          throw new BrokenBodyError(describeError(error));
        }
        if (next.done) break;
        bytes += next.value.length;
        parser.push(next.value);
        if (writer.full) await writer.drain();
        counter.add(emitted - counted);
        counted = emitted;
        progress.update(emitted, bytes);
      }
      await parser.end();
      metric(logger, 'timer', 'http_request_duration', (Date.now() - current.startedAt) / 1000, { stream: name, endpoint: descriptor.path, status: 200 });
      break;
    } catch (error) {
      current.abort();
      if (error instanceof CsvSyntaxError) throw runtimeError(`${name} dump (csv): ${error.message}. Nothing after it was emitted and the bookmark was not moved.`);
      let sameDump = true;
      if (error instanceof ResumeMismatchError) {
        logger.warn(`${name}: the dump read again did not line up with the first read; reading it from the start, records may repeat`);
        sameDump = false;
      } else if (error instanceof BrokenBodyError) {
        if (cursor.handled > handledBefore) budget.renew();
        await client.backOff(budget, name, `the dump broke after ${cursor.position} records (${error.message})`);
      } else {
        throw error;
      }
      response = await client.open({ stream: descriptor, format: config.format, query }, budget);
      if (response.status !== 200) throw runtimeError(`${name} dump: unexpected HTTP ${response.status} when requesting the dump again`);
      if (sameDump && cursor.handled > 0 && response.lastModified !== undefined && response.lastModified === readLastModified) {
        logger.info(`${name}: dump unchanged (Last-Modified ${response.lastModified}); skipping the ${cursor.handled} records already handled`);
      } else if (sameDump && cursor.handled > 0) {
        logger.warn(`${name}: the dump changed while being read (Last-Modified ${readLastModified} -> ${response.lastModified}); reading it again from the start, records may repeat`);
        sameDump = false;
      }
      cursor.restart(sameDump);
      if (!sameDump) readLastModified = response.lastModified;
    }
  }

  await writer.drain();
  progress.clear();
  counter.add(emitted - counted);
  counter.flush();
  const change: StreamBookmark = {};
  if (response.status === 200) {
    if (incremental) {
      change.replication_key = descriptor.replicationKey;
      if (tracker.maxValue !== null && (previousMs === undefined || tracker.maxMs >= previousMs)) {
        change.replication_key_value = tracker.maxValue;
        change.boundary_hashes = [...tracker.hashes];
      }
    }
    change.last_modified = response.lastModified;
    change.last_modified_request = response.lastModified ? requestFingerprint(incremental ? (change.replication_key_value ?? previousValue) : undefined) : undefined;
    state.update(name, change);
  }
  writer.line(protocol.state(name, state.snapshot()));
  await writer.drain();

  if (invalidSkipped > 0) logger.warn(`${name}: skipped ${invalidSkipped} invalid records (on_invalid_record=skip)`);
  if (duplicatesSkipped > 0) logger.info(`${name}: skipped ${duplicatesSkipped} records at the bookmark that were already emitted unchanged`);
  if (outOfRange > 0) logger.debug(`${name}: ${outOfRange} records before the incremental window were not emitted`);
  const bookmark = state.get(name)?.replication_key_value ?? null;
  return {
    stream: name,
    records: emitted,
    invalidSkipped,
    notModified: response.status === 304,
    bookmark: typeof bookmark === 'string' ? bookmark : null,
    durationMs: Date.now() - started,
    bytes,
  };
}
