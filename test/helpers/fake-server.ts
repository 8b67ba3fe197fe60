import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';

/** A tiny real HTTP server serving hand-made dumps, for what the sandbox does not do. */

export interface FakeRequest {
  path: string;
  query: string;
  headers: IncomingMessage['headers'];
}

export type FakeHandler = (req: IncomingMessage, res: ServerResponse, info: { path: string; query: string; nth: number }) => void | Promise<void>;

export interface FakeServer {
  readonly url: string;
  readonly requests: FakeRequest[];
  close(): Promise<void>;
}

/**
 * A tiny real HTTP server on 127.0.0.1 (port 0). `handler` answers every
 * request; `nth` counts requests per path from 1.
 */
export async function startFakeServer(handler: FakeHandler): Promise<FakeServer> {
  const requests: FakeRequest[] = [];
  const perPath = new Map<string, number>();
  const server = createServer((req, res) => {
    res.on('error', () => undefined);
    const target = req.url ?? '/';
    const q = target.indexOf('?');
    const path = q < 0 ? target : target.slice(0, q);
    const query = q < 0 ? '' : target.slice(q + 1);
    requests.push({ path, query, headers: req.headers });
    const nth = (perPath.get(path) ?? 0) + 1;
    perPath.set(path, nth);
    Promise.resolve(handler(req, res, { path, query, nth })).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export const FAKE_LAST_MODIFIED = 'Wed, 01 Jan 2025 00:00:00 GMT';

/** Sends a complete 200 dump body (chunked), with Last-Modified (none when it is null). */
export function sendDump(res: ServerResponse, body: string | Buffer, contentType = 'application/jsonl', lastModified: string | null = FAKE_LAST_MODIFIED): void {
  res.writeHead(200, { 'Content-Type': contentType, ...(lastModified === null ? {} : { 'Last-Modified': lastModified }) });
  res.end(body);
}

/** Sends the first `cut` bytes of a dump, then destroys the connection (chunked, or with the full Content-Length). */
export function sendCutDump(res: ServerResponse, body: Buffer, cut: number, options: { contentLength?: boolean; contentType?: string; lastModified?: string } = {}): void {
  const headers: Record<string, string | number> = {
    'Content-Type': options.contentType ?? 'application/jsonl',
    'Last-Modified': options.lastModified ?? FAKE_LAST_MODIFIED,
  };
  if (options.contentLength) headers['Content-Length'] = body.length;
  res.writeHead(200, headers);
  res.write(body.subarray(0, cut), () => {
    // Give the bytes a moment to reach the client before the connection goes.
    setTimeout(() => res.socket?.destroy(), 30);
  });
}

export interface RawRequest {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  /** Requests on this path so far, from 1. */
  nth: number;
}

/**
 * A raw TCP server on 127.0.0.1 that parses each request's head and lets the
 * handler write the response bytes itself: for framing no HTTP library would
 * produce (a close-delimited body, a Content-Length that does not match).
 */
export async function startRawServer(handler: (socket: Socket, request: RawRequest) => void): Promise<FakeServer> {
  const requests: FakeRequest[] = [];
  const perPath = new Map<string, number>();
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let head = '';
    const onData = (chunk: Buffer): void => {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) return;
      socket.off('data', onData);
      const [requestLine, ...lines] = head.slice(0, end).split('\r\n');
      const [method, target] = requestLine.split(' ');
      const q = target.indexOf('?');
      const path = q < 0 ? target : target.slice(0, q);
      const query = q < 0 ? '' : target.slice(q + 1);
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      requests.push({ path, query, headers });
      const nth = (perPath.get(path) ?? 0) + 1;
      perPath.set(path, nth);
      handler(socket, { method, path, query, headers, nth });
    };
    socket.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

/** A TCP port on 127.0.0.1 that nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
