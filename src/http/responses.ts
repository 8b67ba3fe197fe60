import { TapError } from '../errors.js';
import { sanitizeServerText } from '../observe/sanitize.js';

/** What the tap says about an answer that is not a dump. */

/**
 * A Content-Type that no dump can have (an HTML login page, an image, a PDF),
 * or undefined when it may be one: the API does not publish its media types,
 * so anything else (missing, text/plain, octet-stream, a JSON or CSV type) is read.
 */
export function notADumpType(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  const type = contentType.split(';')[0].trim().toLowerCase();
  const never = /^(text\/html|application\/xhtml\+xml|text\/xml|application\/xml|application\/pdf|application\/problem\+json|multipart\/.*|image\/.*|audio\/.*|video\/.*|font\/.*)$/;
  return never.test(type) ? `Content-Type ${type}` : undefined;
}

/** An answer with a status that is neither a dump nor worth retrying. */
export class HttpStatusError extends TapError {
  constructor(
    message: string,
    readonly status: number,
    /** What the server said, sanitised and redacted ('' when nothing). */
    readonly detail = '',
    airbyteMessage?: string,
  ) {
    const configLike = (status >= 300 && status < 400) || (status >= 400 && status <= 404);
    super(message, 'runtime', { failureType: configLike ? 'config_error' : 'system_error', airbyteMessage });
  }
}

/**
 * Where a redirect points, as its error shows it: scheme, host and path, not
 * its query, fragment or user info. A server that moved the API repeats the
 * request's query there, and a filter on a personal field (an e-mail) would
 * reach the error line with it.
 */
export function redirectTarget(location: string | undefined, from: URL): string | undefined {
  if (location === undefined) return undefined;
  try {
    const target = new URL(location, from);
    return `${target.protocol}//${target.host}${target.pathname}`;
  } catch {
    return location.split(/[?#]/)[0];
  }
}

export function statusError(stream: string, scope: string, status: number, detail: string, url: URL, location: string | undefined, redact: (text: string) => string): TapError {
  const message = statusErrorMessage(stream, scope, status, detail, url, location === undefined ? undefined : sanitizeServerText(redact(location), 200));
  return new HttpStatusError(message, status, detail, status === 401 ? unauthorized(stream, "the access_token field of the source's configuration") : undefined);
}

function statusErrorMessage(stream: string, scope: string, status: number, detail: string, url: URL, location: string | undefined): string {
  const said = detail ? ` The server said: ${detail}.` : '';
  if (status >= 300 && status < 400) {
    const where = location ? ` to ${location}` : ' without a Location';
    return `${stream} dump: HTTP ${status} redirect${where}, which the tap does not follow (the token would go with it). Set base_url to the address that serves the API.`;
  }
  switch (status) {
    case 400:
      return `${stream} dump: HTTP 400 Bad Request: the server rejected the request${sentFilters(url)}.${said}`;
    case 401:
      return unauthorized(stream, 'access_token (or TAP_REPORT_DUMP_ACCESS_TOKEN)');
    case 403:
      return `${stream} dump: HTTP 403 Forbidden: the token lacks the scope ${scope} for the ${stream} dump. Grant the scope to the token, or deselect the ${stream} stream.`;
    case 404:
      return `${stream} dump: HTTP 404 Not Found for ${url.pathname}. Check base_url: it should be the API root, without /public/v1.`;
    default:
      return `${stream} dump: HTTP ${status}.${said} This status is not retried.`;
  }
}

/** `setting`: where the token is set, in the words of the face that reports it. */
function unauthorized(stream: string, setting: string): string {
  return `${stream} dump: HTTP 401 Unauthorized: the access token was rejected. Check ${setting}; it may be wrong or expired.`;
}

/** ` with filter[a], filter[b]`: the names of the filters a request sent (their values may be personal), or nothing. */
export function sentFilters(url: URL): string {
  const names = [...new Set(url.searchParams.keys())];
  return names.length === 0 ? ' without filters' : ` with ${names.join(', ')}`;
}
