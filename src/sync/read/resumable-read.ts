import { describeError, runtimeError } from '../../errors.js';
import { metric } from '../../observe/metrics.js';
import { RetryBudget, type DumpClient, type DumpRequest, type DumpResponse } from '../../http/client.js';
import { ResumeCursor, ResumeMismatchError } from './resume-proof.js';
import { DumpStart } from '../../http/dump-start.js';
import { sanitizeServerText } from '../../observe/sanitize.js';
import type { Logger } from '../../observe/log.js';

export { ResumeCursor, ResumeMismatchError } from './resume-proof.js';

/** The body itself broke (network, timeout, gzip, cut short): the dump is requested again. */
export class BrokenBodyError extends Error {}

/** What reads one attempt's body: a fresh decoder, wired to the resume cursor. */
export interface BodyConsumer {
  push(chunk: Buffer): void;
  end(): void;
}

export interface ReadHandlers {
  /** A consumer for the attempt starting now. */
  start(resume: ResumeCursor): BodyConsumer;
  /** After each chunk was consumed: backpressure and progress. */
  afterChunk(bytes: number): Promise<void>;
}

export interface ReadOptions {
  /** A body whose last byte is not a line break is a broken body (cut short), not a last record. */
  requireFinalLineBreak: boolean;
}

export type ReadOutcome = { status: 304 } | { status: 200; lastModified?: string };

/** What a read needs of the HTTP client. */
export type DumpOpener = Pick<DumpClient, 'open' | 'backOff'>;

/**
 * Reads one dump to its end: opens it (conditionally), feeds every chunk to
 * the attempt's consumer, and when the body breaks, backs off, requests the
 * dump again and resumes after the records already handled once the new body
 * proves it begins with the same bytes, or reads it again from the start.
 * Only a read that gets further into the dump than any before renews the
 * retry budget.
 */
export async function readDump(client: DumpOpener, request: DumpRequest, logger: Logger, handlers: ReadHandlers, options: ReadOptions = { requireFinalLineBreak: true }): Promise<ReadOutcome> {
  const name = request.stream.name;
  const budget = new RetryBudget();
  let response = await client.open(request, budget);
  if (response.status === 304) {
    logger.info(`${name}: dump unchanged since ${sanitizeServerText(request.ifModifiedSince ?? 'the last run', 64)} (HTTP 304); no records, bookmark kept`);
    return { status: 304 };
  }
  const cursor = new ResumeCursor();
  for (;;) {
    const furthest = cursor.furthest;
    try {
      await readBody(request, response, handlers.start(cursor), handlers, cursor, options);
      metric(logger, 'timer', 'http_request_duration', (Date.now() - response.startedAt) / 1000, { stream: name, endpoint: request.stream.path, status: 200 });
      return { status: 200, lastModified: response.lastModified };
    } catch (error) {
      response.abort();
      if (error instanceof ResumeMismatchError) {
        logger.warn(`${name}: ${error.message}; reading it from the start, records may repeat`);
        cursor.mismatched();
      } else if (error instanceof BrokenBodyError) {
        const read = cursor.position;
        cursor.broke();
        if (cursor.furthest > furthest) budget.renew();
        await client.backOff(budget, name, `the dump broke after ${read} records (${error.message})`);
      } else {
        throw error;
      }
      response = await reopen(client, request, budget);
      if (cursor.resuming) logger.info(`${name}: skipping the ${cursor.handled} records already handled, once the dump proves to begin with the same bytes`);
    }
  }
}

type OpenBody = Extract<DumpResponse, { status: 200 }>;

async function reopen(client: DumpOpener, request: DumpRequest, budget: RetryBudget): Promise<OpenBody> {
  const response = await client.open({ ...request, ifModifiedSince: undefined }, budget);
  if (response.status !== 200) throw runtimeError(`${request.stream.name} dump: unexpected HTTP ${response.status} when requesting the dump again`);
  return response;
}

/** Feeds the body to the resume cursor, then to the consumer; a failure of the body itself (not of the consumer) is a BrokenBodyError. */
async function readBody(request: DumpRequest, response: OpenBody, consumer: BodyConsumer, handlers: ReadHandlers, cursor: ResumeCursor, options: ReadOptions): Promise<void> {
  const chunks = response.body[Symbol.asyncIterator]();
  const start = new DumpStart(`${request.stream.name} dump: the body at ${request.stream.path}.${request.format}`);
  let lastByte = -1;
  for (;;) {
    let next: IteratorResult<Buffer>;
    try {
      next = await chunks.next();
    } catch (error) {
      throw new BrokenBodyError(describeError(error));
    }
    if (next.done) break;
    for (const chunk of start.take(next.value)) {
      cursor.chunk(chunk);
      consumer.push(chunk);
      lastByte = chunk[chunk.length - 1];
      await handlers.afterChunk(chunk.length);
    }
  }
  for (const chunk of start.end()) {
    cursor.chunk(chunk);
    consumer.push(chunk);
    lastByte = chunk[chunk.length - 1];
  }
  if (lastByte !== -1 && lastByte !== 10 && options.requireFinalLineBreak) {
    throw new BrokenBodyError('it ends without a line break after its last line, so it was cut short; if the service never ends its dumps with one, set require_final_line_break to false');
  }
  cursor.end();
  consumer.end();
}

