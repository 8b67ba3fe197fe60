import { setTimeout as sleep } from 'node:timers/promises';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { runtimeError, TapError } from '../errors.js';
import { sanitizeServerText } from '../observe/sanitize.js';
import type { Logger } from '../observe/log.js';
import type { StreamDescriptor, DumpFormat } from '../catalog/reports.js';
import { connectRetryDelay, MAX_WAIT_MS, parseRetryAfter, retryDelay } from './backoff.js';
import { RequestPacer } from './pacer.js';
import { AttemptTimeoutError, IdleTimeoutError, isTransientNetworkError, SlowServerError, tlsProblem, Transport, unreachableHost, giveUpAdvice } from './transport.js';
import { notADumpType, redirectTarget, statusError } from './responses.js';
import { metric } from '../observe/metrics.js';
import { RequestLog } from './request-log.js';
import { announcingWait, limitedWait, limitSeconds, WAIT_NOTICE_MS, waitedSeconds } from './wait-notice.js';
import { withoutPersonalValues } from './query.js';

/**
 * Inflated bytes per chunk of a gzip body: each chunk is a round trip to
 * libuv's thread pool and through the stream. 256 KiB instead of 64: a
 * 200,000-record gzip sync 0.972x the time, 5 MiB more peak (paired, 21 runs, Node 24).
 */
const GUNZIP_CHUNK_BYTES = 256 * 1024;

export interface ClientOptions {
  baseUrl: string;
  accessToken: string;
  userAgent: string;
  gzip: boolean;
  /** Milliseconds to wait for headers, and for each chunk of the body. */
  timeoutMs: number;
  /** Milliseconds one attempt (request and whole body) may take; none when undefined. */
  dumpTimeoutMs?: number;
  /** Bytes per second the server must deliver while the tap waits for it (measured over each minute of waiting); none when undefined. */
  minBytesPerSecond?: number;
  maxRetries: number;
  retryMaxElapsedMs: number;
  /** Milliseconds a dump keeps retrying a host that has not answered in this run yet and cannot be reached (connect_retry_seconds). */
  connectRetryMs: number;
  backoffBaseMs: number;
  minRequestIntervalMs: number;
  /** Milliseconds between the log lines that say the tap is still waiting for the server (30 s unless a test sets less). */
  waitNoticeMs?: number;
  logger: Logger;
  /** Masks secrets in text the server sent back (an error body may echo the request). */
  redact: (text: string) => string;
  /** Injected in tests to make retry timing observable. */
  sleep?: (ms: number) => Promise<unknown>;
  random?: () => number;
}

export interface DumpRequest {
  stream: StreamDescriptor;
  format: DumpFormat;
  /** Query parameters in order, unencoded; encoding is the client's job. */
  query: ReadonlyArray<readonly [string, string]>;
  ifModifiedSince?: string;
}

export type DumpResponse =
  | { status: 304; lastModified?: string }
  | { status: 200; lastModified?: string; contentType?: string; body: AsyncIterable<Buffer>; abort(): void; startedAt: number };

/** Shared by the first request and every retry of one dump, so "give up" is decided once. */
export class RetryBudget {
  attempts = 0;
  startedAt = Date.now();
  lastFailure = '';
  /** What broke the last attempt that got no response, for a caller that words it itself (check). */
  lastError: unknown;

  /** A read that got further into the dump than any before starts a fresh budget: a long dump may break late more than once. */
  renew(): void {
    this.attempts = 1;
    this.startedAt = Date.now();
  }
}

const RETRYABLE_STATUS = new Set([408, 429, 500, 502, 503, 504]);

export function dumpUrl(baseUrl: string, request: Pick<DumpRequest, 'stream' | 'format' | 'query'>): string {
  const query = request.query.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join('&');
  return `${baseUrl}${request.stream.path}.${request.format}${query ? `?${query}` : ''}`;
}

function header(response: IncomingMessage, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The `message` of a JSON error body, or the start of a text body, as one clean line. Reads at most 64 KiB. */
async function errorDetail(body: Readable, redact: (text: string) => string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= 64 * 1024) break;
    }
  } catch {
    // The detail is a courtesy; the status already tells what happened.
  }
  body.destroy();
  const text = Buffer.concat(chunks).toString('utf8').slice(0, 4096);
  let detail = text;
  try {
    const parsed = JSON.parse(text) as { message?: unknown; error?: unknown; detail?: unknown };
    const message = parsed.message ?? parsed.error ?? parsed.detail;
    if (typeof message === 'string') detail = message;
  } catch {
    // not JSON
  }
  return sanitizeServerText(redact(detail));
}

export class DumpClient {
  private readonly transport: Transport;
  private readonly pacer: RequestPacer;
  private readonly sleep: (ms: number) => Promise<unknown>;
  /**
   * Whether the host sent any response in this run. Until it has, a name that
   * does not resolve or a refused connection most likely means a wrong
   * base_url; after, it is a restart or a passing DNS failure, worth the full
   * retries.
   */
  private answered = false;

  constructor(private readonly options: ClientOptions) {
    this.transport = new Transport({ idleTimeoutMs: options.timeoutMs });
    this.pacer = new RequestPacer(options.minRequestIntervalMs);
    this.sleep = options.sleep ?? ((ms: number) => sleep(ms));
  }

  private get noticeMs(): number {
    return this.options.waitNoticeMs ?? WAIT_NOTICE_MS;
  }

  async close(): Promise<void> {
    this.transport.close();
  }

  /**
   * Waits before the next attempt, or throws when the budget is spent. Called
   * for failures before the body (here) and in the middle of it (by the engine).
   */
  async backOff(budget: RetryBudget, streamName: string, failure: string, retryAfterMs?: number, fatal?: TapError): Promise<void> {
    budget.lastFailure = failure;
    const elapsed = Date.now() - budget.startedAt;
    if (budget.attempts > this.options.maxRetries) {
      throw fatal ?? runtimeError(`${streamName} dump: gave up after ${budget.attempts} attempts: ${failure}. ${giveUpAdvice(budget.lastError, 'The service or network kept failing; run again later or raise max_retries.')}`, undefined, 'transient_error');
    }
    const delay = retryDelay(budget.attempts - 1, this.options.backoffBaseMs, retryAfterMs, this.options.random);
    if (elapsed + delay > this.options.retryMaxElapsedMs) {
      const asked = retryAfterMs !== undefined && retryAfterMs >= delay ? ` The server asked to wait ${Math.round(retryAfterMs / 1000)} s (Retry-After).` : '';
      // A wait the server asked for outlasts the budget: that is the news (the fatal text, a 429's advice, would hide it).
      if (asked === '' && fatal !== undefined) throw fatal;
      throw runtimeError(`${streamName} dump: gave up after ${budget.attempts} attempts in ${Math.round(elapsed / 1000)} s (retry_max_elapsed): ${failure}.${asked} ${giveUpAdvice(budget.lastError, 'Run again later.')}`, undefined, 'transient_error');
    }
    this.options.logger.warn(`${streamName} dump: ${failure}; retry ${budget.attempts} of ${this.options.maxRetries} in ${(delay / 1000).toFixed(1)} s`);
    await this.sleep(Math.min(delay, MAX_WAIT_MS));
  }

  /** Opens a dump, retrying what is worth retrying until headers of a usable response arrive. */
  async open(dump: DumpRequest, budget: RetryBudget = new RetryBudget()): Promise<DumpResponse> {
    const url = new URL(dumpUrl(this.options.baseUrl, dump));
    for (;;) {
      await this.pacer.wait();
      budget.attempts++;
      const attempt = new Attempt(this.options.dumpTimeoutMs);
      const startedAt = Date.now();
      const log = new RequestLog(this.options.logger, dump);
      const timing = (status: number | string): void =>
        metric(this.options.logger, 'timer', 'http_request_duration', (Date.now() - startedAt) / 1000, { stream: dump.stream.name, endpoint: dump.stream.path, status });
      let response: IncomingMessage;
      try {
        response = await this.responseHeaders(dump, url, attempt.signal);
        this.answered = true;
      } catch (error) {
        attempt.end();
        timing('error');
        const failure = attempt.failure(error);
        log.ended({ status: 'error', note: (failure as NodeJS.ErrnoException).code ?? 'request failed' });
        await this.connectionFailed(budget, dump, failure);
        continue;
      }
      const status = response.statusCode ?? 0;
      const lastModified = header(response, 'last-modified');
      if (status === 304) {
        attempt.end();
        timing(304);
        log.ended({ status, lastModified });
        response.resume();
        return { status: 304, lastModified };
      }
      if (status >= 200 && status < 300) return this.dumpBody(dump, url, response, attempt, startedAt, log);
      attempt.end();
      timing(status);
      log.ended({ status, lastModified });
      await this.refused(budget, dump, url, response);
    }
  }

  /** The response of one attempt once its headers arrived, saying every waitNoticeMs that the tap still waits for them. */
  private responseHeaders(dump: DumpRequest, url: URL, signal: AbortSignal): Promise<IncomingMessage> {
    const notice = (waited: number): void =>
      this.options.logger.warn(`${dump.stream.name}: waited ${waitedSeconds(waited)} for the response headers from the server (request_timeout ${limitSeconds(this.options.timeoutMs)})`);
    return announcingWait(this.transport.get(url, this.headers(dump), signal), this.noticeMs, notice);
  }

  private headers(dump: DumpRequest): Record<string, string> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.options.accessToken}`,
      'user-agent': this.options.userAgent,
      accept: dump.format === 'csv' ? 'text/csv, */*;q=0.5' : 'application/jsonl, application/x-ndjson, */*;q=0.5',
      'accept-encoding': this.options.gzip ? 'gzip' : 'identity',
    };
    if (dump.ifModifiedSince) headers['if-modified-since'] = dump.ifModifiedSince;
    return headers;
  }

  /** A failure before any response: retried when it may pass, a clear error otherwise. */
  private async connectionFailed(budget: RetryBudget, dump: DumpRequest, error: unknown): Promise<void> {
    const name = dump.stream.name;
    budget.lastError = error;
    const tls = tlsProblem(error);
    if (tls) throw runtimeError(`${name} dump: cannot connect securely to ${new URL(this.options.baseUrl).host}: ${tls}. Check base_url, or the certificate on the server.`, error);
    if (!isTransientNetworkError(error)) throw runtimeError(`${name} dump: request failed: ${sanitizeServerText((error as Error).message)}`, error);
    const code = (error as NodeJS.ErrnoException).code;
    const unreachable = unreachableHost(error, new URL(this.options.baseUrl));
    const what = error instanceof IdleTimeoutError || error instanceof AttemptTimeoutError ? error.message : `connection failed (${code ?? (error as Error).message})${unreachable ? `: ${unreachable}` : ''}`;
    // max_retries 0 turns every retry off, these too.
    if (unreachable && !this.answered && this.options.maxRetries > 0) await this.unreachableBackOff(budget, name, what, `${unreachable} (${code})`);
    else await this.backOff(budget, name, what);
  }

  /**
   * Waits before the next try at a host that has not answered in this run
   * (connectRetryDelay), or throws once connect_retry_seconds is spent:
   * base_url is then the likely fault, and 40 s of backoff would only delay
   * saying so.
   */
  private async unreachableBackOff(budget: RetryBudget, name: string, what: string, cause: string): Promise<void> {
    budget.lastFailure = what;
    const elapsed = Date.now() - budget.startedAt;
    const delay = connectRetryDelay(budget.attempts - 1, elapsed, this.options.connectRetryMs, this.options.backoffBaseMs, this.options.random);
    const spent = `${seconds(elapsed)} of ${seconds(this.options.connectRetryMs)} s`;
    if (delay === undefined) {
      const tries = `${budget.attempts} time${budget.attempts === 1 ? '' : 's'}`;
      throw runtimeError(
        `${name} dump: ${cause}: tried ${tries} over ${seconds(elapsed)} s (connect_retry_seconds). Check base_url, and that this machine reaches the service (its DNS, a firewall or a proxy); for a service that may be restarting, raise connect_retry_seconds.`,
        undefined,
        'transient_error',
      );
    }
    this.options.logger.warn(`${name} dump: ${what}; retry ${budget.attempts} in ${seconds(delay)} s (connect_retry_seconds: ${spent} spent)`);
    await this.sleep(delay);
  }

  /** A status that is not a dump: retried when it may pass (after Retry-After), a clear error otherwise. */
  private async refused(budget: RetryBudget, dump: DumpRequest, url: URL, response: IncomingMessage): Promise<void> {
    const name = dump.stream.name;
    const status = response.statusCode ?? 0;
    const detail = withoutPersonalValues(dump.stream, url, await errorDetail(response, this.options.redact));
    if (!RETRYABLE_STATUS.has(status)) throw statusError(name, dump.stream.scope, status, detail, url, redirectTarget(header(response, 'location'), url), this.options.redact);
    const retryAfter = parseRetryAfter(response.headers['retry-after']);
    const fatal =
      status === 429
        ? runtimeError(`${name} dump: still rate limited (HTTP 429) after ${budget.attempts} attempts. Set min_request_interval to space requests, or run off-peak.`, undefined, 'transient_error')
        : undefined;
    await this.backOff(budget, name, `HTTP ${status}${detail ? ` (${detail})` : ''}`, retryAfter, fatal);
  }

  private dumpBody(dump: DumpRequest, url: URL, response: IncomingMessage, attempt: Attempt, startedAt: number, log: RequestLog): DumpResponse {
    const name = dump.stream.name;
    const contentType = header(response, 'content-type');
    const lastModified = header(response, 'last-modified');
    const status = response.statusCode ?? 200;
    const notDump = notADumpType(contentType);
    if (notDump) {
      log.ended({ status, lastModified, note: 'not a dump' });
      attempt.end();
      response.destroy();
      throw runtimeError(`${name} dump: the server answered with ${sanitizeServerText(notDump, 80)} at ${url.pathname}, not a dump (a login or error page?). Check base_url and the token.`, undefined, 'config_error');
    }
    const encoding = header(response, 'content-encoding')?.toLowerCase();
    let stream: Readable = response;
    if (encoding === 'gzip' || encoding === 'x-gzip') {
      // node:zlib is loaded only for a gzip body: a 304, or a plain body, never needs it.
      const gunzip = process.getBuiltinModule('node:zlib').createGunzip({ chunkSize: GUNZIP_CHUNK_BYTES });
      response.on('error', (error) => gunzip.destroy(error));
      stream = response.pipe(gunzip);
    } else if (encoding && encoding !== 'identity') {
      log.ended({ status, lastModified, note: 'undecodable Content-Encoding' });
      attempt.end();
      response.destroy();
      throw runtimeError(`${name} dump: the server sent Content-Encoding ${sanitizeServerText(encoding, 40)}, which this tap cannot decode. Set compression to none.`);
    }
    const gzip = stream !== response;
    const read = { bytes: 0 };
    const abort = (): void => {
      log.ended({ status, lastModified, bytes: read.bytes, gzip, note: 'aborted' });
      attempt.end();
      response.destroy();
      stream.destroy();
    };
    const ended = (note?: string): void => log.ended({ status, lastModified, bytes: read.bytes, gzip, ...(note === undefined ? {} : { note }) });
    const idleMs = this.options.timeoutMs;
    const notice = (waited: number): void => this.options.logger.warn(`${name}: no data from the server for ${waitedSeconds(waited)} (request_timeout ${limitSeconds(idleMs)})`);
    const body = watchedBody(stream, attempt, { idleMs, noticeMs: this.noticeMs, notice, minBytesPerSecond: this.options.minBytesPerSecond }, read, ended);
    return { status: 200, lastModified, contentType, body, abort, startedAt };
  }
}

/** Milliseconds as seconds with at most one decimal: 7500 is 7.5, 15000 is 15. */
function seconds(ms: number): string {
  return String(Number((ms / 1000).toFixed(1)));
}

/** The limits of one attempt: dump_timeout, and the cause when the attempt was cut on purpose. */
class Attempt {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(timeoutMs: number | undefined) {
    if (timeoutMs !== undefined) {
      this.timer = setTimeout(() => this.controller.abort(new AttemptTimeoutError(`the attempt took longer than ${timeoutMs / 1000} s (dump_timeout)`)), timeoutMs);
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The error to report: the reason the attempt was cut, when it was, rather than the socket error that followed. */
  failure(error: unknown): unknown {
    return this.controller.signal.aborted ? this.controller.signal.reason : error;
  }

  end(): void {
    clearTimeout(this.timer);
  }
}

/**
 * The body's chunks, with the limits that apply while the tap waits for the
 * server (not while the server waits for the tap): request_timeout between
 * chunks, and the optional minimum rate. Errors name the attempt's own cause.
 */
async function* watchedBody(
  stream: Readable,
  attempt: Attempt,
  limits: { idleMs: number; noticeMs: number; notice: (waitedMs: number) => void; minBytesPerSecond?: number },
  read: { bytes: number },
  ended: (note?: string) => void,
): AsyncGenerator<Buffer> {
  const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let waitedMs = 0;
  let windowBytes = 0;
  let outcome: string | undefined = 'not read to its end';
  try {
    for (;;) {
      const waitStart = Date.now();
      const endWait = limitedWait(limits.idleMs, limits.noticeMs, limits.notice, () =>
        stream.destroy(new IdleTimeoutError(`no data for ${Number((limits.idleMs / 1000).toFixed(3))} s (request_timeout)`)),
      );
      let next: IteratorResult<Buffer>;
      try {
        next = await chunks.next();
      } catch (error) {
        const failure = attempt.failure(error);
        outcome = `broke: ${(failure as NodeJS.ErrnoException).code ?? 'error'}`;
        throw failure;
      } finally {
        endWait();
      }
      if (next.done) {
        outcome = undefined;
        return;
      }
      waitedMs += Date.now() - waitStart;
      windowBytes += next.value.length;
      read.bytes += next.value.length;
      if (limits.minBytesPerSecond && waitedMs >= 60_000) {
        const rate = windowBytes / (waitedMs / 1000);
        if (rate < limits.minBytesPerSecond) throw new SlowServerError(`the server sent ${Math.round(rate)} bytes/s over the last minute of waiting, below min_throughput`);
        waitedMs = 0;
        windowBytes = 0;
      }
      yield next.value;
    }
  } finally {
    attempt.end();
    ended(outcome);
  }
}
