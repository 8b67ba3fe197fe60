import { describeError, runtimeError } from '../errors.js';
import { metric } from '../observe/metrics.js';
import { RetryBudget, type DumpClient, type DumpRequest, type DumpResponse } from '../http/client.js';
import type { Logger } from '../observe/log.js';

/** The dump requested again does not line up with what was read before. */
export class ResumeMismatchError extends Error {}

/** The body itself broke (network, timeout, gzip): the dump is requested again. */
class BrokenBodyError extends Error {}

/**
 * Where a dump read stands, so that after a broken body the same dump can be
 * read again without repeating records: records up to `handled` are skipped,
 * and the last of them must have the same bytes as before (or the same line
 * number, for an invalid line), otherwise ResumeMismatchError says the dump
 * must be read from the start.
 */
export class ResumeCursor {
  /** Records (and invalid lines) seen in the current read. */
  position = 0;
  /** Records handled across reads of an unchanged dump. */
  handled = 0;
  private buffer: Buffer | undefined;
  private start = 0;
  private end = 0;
  private line = 0;

  /** Starts a new read of the dump; `sameDump` keeps what was handled. */
  restart(sameDump: boolean): void {
    this.position = 0;
    if (!sameDump) this.handled = 0;
  }

  /** Counts a record (or, without bytes, an invalid line) and says whether it is new. */
  advance(buffer: Buffer | undefined, start: number, end: number, line: number): boolean {
    this.position++;
    if (this.position <= this.handled) {
      if (this.position === this.handled) {
        const same =
          buffer === undefined || this.buffer === undefined
            ? buffer === this.buffer && line === this.line
            : buffer.compare(this.buffer, this.start, this.end, start, end) === 0;
        if (!same) throw new ResumeMismatchError();
      }
      return false;
    }
    this.handled = this.position;
    this.buffer = buffer;
    this.start = start;
    this.end = end;
    this.line = line;
    return true;
  }
}

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

export type ReadOutcome = { status: 304 } | { status: 200; lastModified?: string };

/** What a read needs of the HTTP client. */
export type DumpOpener = Pick<DumpClient, 'open' | 'backOff'>;

/**
 * Reads one dump to its end: opens it (conditionally), feeds every chunk to
 * the attempt's consumer, and when the body breaks, backs off, requests the
 * dump again and resumes after the records already handled when the dump is
 * unchanged, or reads it again from the start when it is not.
 */
export async function readDump(client: DumpOpener, request: DumpRequest, logger: Logger, handlers: ReadHandlers): Promise<ReadOutcome> {
  const name = request.stream.name;
  const budget = new RetryBudget();
  let response = await client.open(request, budget);
  if (response.status === 304) {
    logger.info(`${name}: dump unchanged since ${request.ifModifiedSince} (HTTP 304); no records, bookmark kept`);
    return { status: 304 };
  }
  const cursor = new ResumeCursor();
  // Last-Modified of the read the cursor's handled records come from.
  let readLastModified = response.lastModified;
  for (;;) {
    const handledBefore = cursor.handled;
    try {
      await readBody(response, handlers.start(cursor), handlers);
      metric(logger, 'timer', 'http_request_duration', (Date.now() - response.startedAt) / 1000, { stream: name, endpoint: request.stream.path, status: 200 });
      return { status: 200, lastModified: response.lastModified };
    } catch (error) {
      response.abort();
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
      response = await reopen(client, request, budget);
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
}

type OpenBody = Extract<DumpResponse, { status: 200 }>;

async function reopen(client: DumpOpener, request: DumpRequest, budget: RetryBudget): Promise<OpenBody> {
  const response = await client.open({ ...request, ifModifiedSince: undefined }, budget);
  if (response.status !== 200) throw runtimeError(`${request.stream.name} dump: unexpected HTTP ${response.status} when requesting the dump again`);
  return response;
}

/** Feeds the body to the consumer; a failure of the body itself (not of the consumer) is a BrokenBodyError. */
async function readBody(response: OpenBody, consumer: BodyConsumer, handlers: ReadHandlers): Promise<void> {
  const chunks = response.body[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<Buffer>;
    try {
      next = await chunks.next();
    } catch (error) {
      throw new BrokenBodyError(describeError(error));
    }
    if (next.done) break;
    consumer.push(next.value);
    await handlers.afterChunk(next.value.length);
  }
  consumer.end();
}
