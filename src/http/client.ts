import { setTimeout as sleep } from 'node:timers/promises';
import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';
import { Agent, request, errors as undiciErrors, type Dispatcher } from 'undici';
import { runtimeError, TapError } from '../errors.js';
import type { Logger } from '../observe/log.js';
import type { StreamDescriptor, DumpFormat } from '../catalog/reports.js';
import { parseRetryAfter, retryDelay } from './backoff.js';
import { RequestPacer } from './pacer.js';
import { metric } from '../observe/metrics.js';

export interface ClientOptions {
  baseUrl: string;
  accessToken: string;
  userAgent: string;
  gzip: boolean;
  /** Milliseconds to wait for headers, and between body chunks. */
  timeoutMs: number;
  maxRetries: number;
  retryMaxElapsedMs: number;
  backoffBaseMs: number;
  minRequestIntervalMs: number;
  logger: Logger;
  /** Masks secrets in text the server sent back (an error body may echo the request). */
  redact: (text: string) => string;
  dispatcher?: Dispatcher;
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

  /** A read that made progress before it broke starts a fresh budget: a long dump may break late more than once. */
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

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The `message` of a JSON error body, or the start of a text body, on one line. */
async function errorDetail(body: Readable, redact: (text: string) => string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (size < 4096) chunks.push(chunk);
      size += chunk.length;
    }
  } catch {
    // The detail is a courtesy; the status already tells what happened.
  }
  const text = Buffer.concat(chunks).toString('utf8').slice(0, 4096);
  try {
    const parsed = JSON.parse(text) as { message?: unknown; error?: unknown };
    const message = parsed.message ?? parsed.error;
    if (typeof message === 'string') return redact(message).replace(/\s+/g, ' ').slice(0, 300);
  } catch {
    // not JSON
  }
  return redact(text).replace(/\s+/g, ' ').trim().slice(0, 300);
}

export function isTransientNetworkError(error: unknown): boolean {
  if (error instanceof undiciErrors.UndiciError) {
    return !(error instanceof undiciErrors.InvalidArgumentError || error instanceof undiciErrors.RequestAbortedError);
  }
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && /^(ECONNRESET|ECONNREFUSED|ECONNABORTED|EPIPE|ETIMEDOUT|EAI_AGAIN|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|ENETDOWN|Z_BUF_ERROR|Z_DATA_ERROR|ERR_STREAM_PREMATURE_CLOSE|UND_ERR_.*)$/.test(code);
}

export class DumpClient {
  private readonly dispatcher: Dispatcher;
  private readonly pacer: RequestPacer;
  private readonly sleep: (ms: number) => Promise<unknown>;

  constructor(private readonly options: ClientOptions) {
    this.dispatcher =
      options.dispatcher ??
      new Agent({ headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs, keepAliveTimeout: 10_000, connect: { timeout: options.timeoutMs } });
    this.pacer = new RequestPacer(options.minRequestIntervalMs);
    this.sleep = options.sleep ?? ((ms: number) => sleep(ms));
  }

  async close(): Promise<void> {
    if (!this.options.dispatcher) await this.dispatcher.close();
  }

  /**
   * Waits before the next attempt, or throws when the budget is spent. Called
   * for failures before the body (here) and in the middle of it (by the engine).
   */
  async backOff(budget: RetryBudget, streamName: string, failure: string, retryAfterMs?: number, fatal?: TapError): Promise<void> {
    budget.lastFailure = failure;
    const elapsed = Date.now() - budget.startedAt;
    if (budget.attempts > this.options.maxRetries) {
      throw fatal ?? runtimeError(`${streamName} dump: gave up after ${budget.attempts} attempts: ${failure}. The service or network kept failing; run again later or raise max_retries.`, undefined, 'transient_error');
    }
    const delay = retryDelay(budget.attempts - 1, this.options.backoffBaseMs, retryAfterMs, this.options.random);
    if (elapsed + delay > this.options.retryMaxElapsedMs) {
      throw fatal ?? runtimeError(`${streamName} dump: gave up after ${budget.attempts} attempts in ${Math.round(elapsed / 1000)} s (retry_max_elapsed): ${failure}. Run again later.`, undefined, 'transient_error');
    }
    this.options.logger.warn(`${streamName} dump: ${failure}; retry ${budget.attempts} of ${this.options.maxRetries} in ${(delay / 1000).toFixed(1)} s`);
    await this.sleep(delay);
  }

  /** Opens a dump, retrying what is worth retrying until headers of a usable response arrive. */
  async open(dump: DumpRequest, budget: RetryBudget = new RetryBudget()): Promise<DumpResponse> {
    const name = dump.stream.name;
    const url = dumpUrl(this.options.baseUrl, dump);
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.options.accessToken}`,
      'user-agent': this.options.userAgent,
      accept: dump.format === 'csv' ? 'text/csv, */*;q=0.5' : 'application/jsonl, application/x-ndjson, */*;q=0.5',
      'accept-encoding': this.options.gzip ? 'gzip' : 'identity',
    };
    if (dump.ifModifiedSince) headers['if-modified-since'] = dump.ifModifiedSince;

    for (;;) {
      await this.pacer.wait();
      budget.attempts++;
      const startedAt = Date.now();
      const timing = (status: number | string): void =>
        metric(this.options.logger, 'timer', 'http_request_duration', (Date.now() - startedAt) / 1000, { stream: name, endpoint: dump.stream.path, status });
      let response: Dispatcher.ResponseData;
      try {
        response = await request(url, { method: 'GET', headers, dispatcher: this.dispatcher });
      } catch (error) {
        timing('error');
        if (!isTransientNetworkError(error)) throw runtimeError(`${name} dump: request failed: ${(error as Error).message}`, error);
        await this.backOff(budget, name, `connection failed (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
        continue;
      }
      const { statusCode } = response;
      const lastModified = header(response.headers, 'last-modified');
      if (statusCode === 304) {
        timing(304);
        await response.body.dump();
        return { status: 304, lastModified };
      }
      if (statusCode >= 200 && statusCode < 300) {
        const encoding = header(response.headers, 'content-encoding')?.toLowerCase();
        let body: Readable = response.body;
        if (encoding === 'gzip' || encoding === 'x-gzip') {
          const gunzip = createGunzip({ chunkSize: 64 * 1024 });
          body.on('error', (error) => gunzip.destroy(error));
          body = body.pipe(gunzip);
        } else if (encoding && encoding !== 'identity') {
          response.body.destroy();
          throw runtimeError(`${name} dump: the server sent Content-Encoding ${encoding}, which this tap cannot decode. Set compression to none.`);
        }
        const raw = response.body;
        return {
          status: 200,
          lastModified,
          contentType: header(response.headers, 'content-type'),
          body,
          abort: () => {
            raw.destroy();
            body.destroy();
          },
          startedAt,
        };
      }
      timing(statusCode);
      const detail = await errorDetail(response.body, this.options.redact);
      const failure = `HTTP ${statusCode}${detail ? ` (${detail})` : ''}`;
      if (RETRYABLE_STATUS.has(statusCode)) {
        const retryAfter = parseRetryAfter(response.headers['retry-after']);
        const fatal =
          statusCode === 429
            ? runtimeError(`${name} dump: still rate limited (HTTP 429) after ${budget.attempts} attempts. Set min_request_interval to space requests, or run off-peak.`, undefined, 'transient_error')
            : undefined;
        await this.backOff(budget, name, failure, retryAfter, fatal);
        continue;
      }
      throw statusError(name, dump.stream.scope, statusCode, detail, url);
    }
  }
}

function statusError(stream: string, scope: string, status: number, detail: string, url: string): TapError {
  const error = statusErrorMessage(stream, scope, status, detail, url);
  return runtimeError(error, undefined, status >= 400 && status <= 404 ? 'config_error' : 'system_error');
}

function statusErrorMessage(stream: string, scope: string, status: number, detail: string, url: string): string {
  const said = detail ? ` The server said: ${detail}.` : '';
  switch (status) {
    case 400:
      return `${stream} dump: HTTP 400 Bad Request: the server rejected the request.${said} Check the filters.${stream} settings and start_date.`;
    case 401:
      return `${stream} dump: HTTP 401 Unauthorized: the access token was rejected. Check access_token (or TAP_REPORT_DUMP_ACCESS_TOKEN); it may be wrong or expired.`;
    case 403:
      return `${stream} dump: HTTP 403 Forbidden: the token lacks the scope ${scope} for the ${stream} dump. Grant the scope to the token, or deselect the ${stream} stream.`;
    case 404:
      return `${stream} dump: HTTP 404 Not Found for ${new URL(url).pathname}. Check base_url: it should be the API root, without /public/v1.`;
    default:
      return `${stream} dump: HTTP ${status}.${said} This status is not retried.`;
  }
}
