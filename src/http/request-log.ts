import { shownQuery } from './query.js';
import { sanitizeServerText } from '../observe/sanitize.js';
import type { Logger } from '../observe/log.js';
import type { DumpFormat, StreamDescriptor } from '../catalog/reports.js';

/** What a request line names of a request (client.ts's DumpRequest has these). */
export interface LoggedRequest {
  readonly stream: StreamDescriptor;
  readonly format: DumpFormat;
  readonly query: ReadonlyArray<readonly [string, string]>;
  readonly ifModifiedSince?: string;
}

/** How one request ended, for its debug line. */
export interface RequestEnd {
  /** The HTTP status, or `error` when no answer came. */
  readonly status: number | 'error';
  readonly lastModified?: string;
  /** Body bytes read (after gzip), for an answer with a body. */
  readonly bytes?: number;
  readonly gzip?: boolean;
  /** What ended it when that was not the whole answer (`cut short: …`, `connection failed`). */
  readonly note?: string;
}

/**
 * One debug line per HTTP request (log_level debug), once it ended: the
 * path and query (personal filter values hidden: query.ts), the status, the
 * If-Modified-Since sent and the Last-Modified received, the body's bytes and
 * the time from sending to the last byte. Each retry is a request of its own.
 */
export class RequestLog {
  private readonly startedAt = Date.now();
  private done = false;

  constructor(
    private readonly logger: Logger,
    private readonly request: LoggedRequest,
  ) {}

  /** Logs the request's line; later calls (a body ended after it was aborted) are ignored. */
  ended(end: RequestEnd): void {
    if (this.done) return;
    this.done = true;
    this.logger.debug(requestLine(this.request, end, Date.now() - this.startedAt));
  }
}

export function requestLine(request: LoggedRequest, end: RequestEnd, ms: number): string {
  const query = shownQuery(request.stream, request.query);
  const parts = [
    `If-Modified-Since ${request.ifModifiedSince === undefined ? '-' : sanitizeServerText(request.ifModifiedSince, 64)}`,
    `Last-Modified ${end.lastModified === undefined ? '-' : sanitizeServerText(end.lastModified, 64)}`,
    ...(end.bytes === undefined ? [] : [`${end.bytes} bytes${end.gzip ? ' (gzip)' : ''}`]),
    `${(ms / 1000).toFixed(3)} s`,
    ...(end.note === undefined ? [] : [end.note]),
  ];
  return `${request.stream.name}: GET ${request.stream.path}.${request.format}${query === '' ? '' : `?${query}`} -> ${end.status === 'error' ? 'no answer' : `HTTP ${end.status}`}; ${parts.join(', ')}`;
}
