import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** Body of every error answer. */
export interface ErrorBody {
  readonly error: string;
  readonly message: string;
  readonly parameter?: string;
  readonly scope?: string;
  readonly retryAfter?: number;
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders = {}): void {
  const text = JSON.stringify(body) + '\n';
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    ...headers,
  });
  res.end(res.req.method === 'HEAD' ? undefined : text);
}

export function sendError(res: ServerResponse, status: number, body: ErrorBody, headers: OutgoingHttpHeaders = {}): void {
  sendJson(res, status, body, headers);
}

/** Splits a request target into path and raw (still encoded) query. */
export function splitTarget(url: string | undefined): { path: string; query: string } {
  const target = url ?? '/';
  const q = target.indexOf('?');
  return q < 0 ? { path: target, query: '' } : { path: target.slice(0, q), query: target.slice(q + 1) };
}

/** True when the client asked for gzip with a non-zero quality. */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (coding.trim() !== 'gzip' && coding.trim() !== 'x-gzip') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/** Loopback peers only: 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.startsWith('::ffff:') ? address.slice(7) : address;
  return a === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
}

export async function readBody(req: IncomingMessage, limit = 64 * 1024): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new Error('request body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
