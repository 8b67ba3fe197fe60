import type { IncomingMessage } from 'node:http';

/**
 * node:http as a CommonJS module: an ESM import of it reads every export,
 * WebSocket's getter included, which loads Node's bundled undici (about 30 ms
 * of every start). node:https (TLS) is loaded only for an https: URL.
 */
const http = process.getBuiltinModule('node:http');
const https = (): typeof import('node:https') => process.getBuiltinModule('node:https');

/**
 * One GET over node:http or node:https, with the tap's timeouts. node:http is
 * used for the dump body because it keeps backpressure from the consumer all
 * the way to the socket, and because undici 7 crashes on a gzip body with
 * Content-Length and `Connection: close` once its parser is paused (an
 * uncaught assertion no caller can catch; nodejs/undici#5360).
 */

/** No data arrived for the idle timeout (connect, headers, or between body chunks). */
export class IdleTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
}

/** The server delivered less than min_throughput while the tap waited for it. */
export class SlowServerError extends Error {
  readonly code = 'ETIMEDOUT';
}

/** The whole attempt took longer than dump_timeout. */
export class AttemptTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
}

export interface TransportOptions {
  /** Milliseconds without any data (connecting, waiting for headers, between body chunks). */
  idleTimeoutMs: number;
}

/** Keep-alive agents for http: and https:, one pair per client. */
export class Transport {
  private readonly agents: { 'http:': import('node:http').Agent; 'https:'?: import('node:https').Agent } = { 'http:': new http.Agent({ keepAlive: true }) };

  constructor(private readonly options: TransportOptions) {}

  /**
   * Sends the request and resolves with the response once its headers arrived.
   * `signal` aborts the request (and its body) at any time with its reason.
   */
  get(url: URL, headers: Record<string, string>, signal?: AbortSignal): Promise<IncomingMessage> {
    const { module, agent } = this.route(url);
    return new Promise((resolve, reject) => {
      const request = module.request(url, { method: 'GET', headers, agent, signal });
      const idle = this.options.idleTimeoutMs;
      request.setTimeout(idle, () => request.destroy(new IdleTimeoutError(`no data for ${formatSeconds(idle)} (request_timeout)`)));
      // From the headers on, the body's reader times the waits itself: a socket idle because the tap's own consumer is slow is not the server's fault.
      request.once('response', (response) => {
        request.setTimeout(0);
        resolve(response);
      });
      request.once('error', reject);
      request.end();
    });
  }

  /** The module and keep-alive agent for the URL's scheme; https: (TLS) is loaded at its first use. */
  private route(url: URL): { module: Pick<typeof http, 'request'>; agent: import('node:http').Agent } {
    if (url.protocol !== 'https:') return { module: http, agent: this.agents['http:'] };
    const tls = https();
    return { module: tls, agent: (this.agents['https:'] ??= new tls.Agent({ keepAlive: true })) };
  }

  close(): void {
    this.agents['http:'].destroy();
    this.agents['https:']?.destroy();
  }
}

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}

const TRANSIENT_CODES = new Set([
  'ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN',
  'Z_BUF_ERROR', 'Z_DATA_ERROR', 'ERR_STREAM_PREMATURE_CLOSE', 'HPE_INVALID_CONSTANT', 'HPE_INVALID_CHUNK_SIZE', 'HPE_UNEXPECTED_CONTENT_LENGTH',
]);

/** Whether a failure to connect or to read is worth another attempt. */
export function isTransientNetworkError(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && (TRANSIENT_CODES.has(code) || code.startsWith('HPE_'));
}

/** What the address of a connection that could not start is wrong with (a name that does not resolve, a port where nothing listens), or undefined. */
export function unreachableHost(error: unknown, url: URL): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `the host name ${url.hostname} does not resolve`;
  if (code === 'ECONNREFUSED') return `nothing accepts connections at ${url.hostname}:${url.port || (url.protocol === 'https:' ? 443 : 80)}`;
  return undefined;
}

/**
 * What to do once the retries are spent: where no connection could even
 * start (the name does not resolve, nothing listens), more retries rarely
 * help and base_url is the likely fault; otherwise the service or the
 * network was failing.
 */
export function giveUpAdvice(error: unknown, fallback: string): string {
  return unreachableHost(error, new URL('http://service')) === undefined ? fallback : 'Check base_url, and that this machine reaches the service (its DNS, a firewall or a proxy).';
}

const TLS_MESSAGES: Record<string, string> = {
  CERT_HAS_EXPIRED: "the server's TLS certificate has expired",
  CERT_NOT_YET_VALID: "the server's TLS certificate is not valid yet (check this machine's clock)",
  DEPTH_ZERO_SELF_SIGNED_CERT: 'the server presents a self-signed TLS certificate',
  SELF_SIGNED_CERT_IN_CHAIN: "the server's TLS certificate chain has a self-signed certificate",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "the server's TLS certificate cannot be verified (an intermediate certificate is missing, or its issuer is not trusted)",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "the issuer of the server's TLS certificate is not trusted by this machine",
  ERR_TLS_CERT_ALTNAME_INVALID: "the server's TLS certificate is for another host name",
  CERT_REVOKED: "the server's TLS certificate was revoked",
  ERR_SSL_WRONG_VERSION_NUMBER: 'the server did not answer with TLS (is base_url https:// on a plain-http port?)',
  ERR_SSL_UNSUPPORTED_PROTOCOL: 'the server offers only TLS versions this Node.js no longer accepts',
  EPROTO: 'the TLS handshake failed',
};

/** OpenSSL's reasons that have a plainer sentence, found in its message (which itself is never printed). */
const OPENSSL_REASONS: Array<[RegExp, string]> = [
  [/wrong version number/i, 'ERR_SSL_WRONG_VERSION_NUMBER'],
  [/unsupported protocol|no protocols available/i, 'ERR_SSL_UNSUPPORTED_PROTOCOL'],
];

/** A human sentence for a TLS failure, or undefined when the error is not one. */
export function tlsProblem(error: unknown): string | undefined {
  const raw = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof raw !== 'string') return undefined;
  const message = (error as Error).message ?? '';
  const code = raw === 'EPROTO' ? (OPENSSL_REASONS.find(([pattern]) => pattern.test(message))?.[1] ?? raw) : raw;
  const known = TLS_MESSAGES[code];
  if (known) return `${known} (${code})`;
  return /^(ERR_SSL_|ERR_TLS_|CERT_)/.test(code) ? `the TLS connection failed (${code})` : undefined;
}
