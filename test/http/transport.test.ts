import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Transport } from '../../src/http/transport.js';

/** A plain HTTP server: answers GET with "ok". */
let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((_request, response) => response.end('ok'));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});

afterAll(() => {
  server.close();
});

describe('the transport picks the module by the URL scheme', () => {
  it('speaks plain HTTP to an http: URL', async () => {
    const transport = new Transport({ idleTimeoutMs: 5000 });
    try {
      const response = await transport.get(new URL(`http://127.0.0.1:${port}/`), {});
      let body = '';
      for await (const chunk of response) body += String(chunk);
      expect([response.statusCode, body]).toEqual([200, 'ok']);
    } finally {
      transport.close();
    }
  });

  it('speaks TLS to an https: URL (a plain HTTP server cannot answer the handshake), on every request', async () => {
    const transport = new Transport({ idleTimeoutMs: 5000 });
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        const error = await transport.get(new URL(`https://127.0.0.1:${port}/`), {}).then(
          () => undefined,
          (e: NodeJS.ErrnoException) => e,
        );
        expect(error?.code, `attempt ${attempt + 1}`).toMatch(/^(ERR_SSL_|EPROTO|ECONNRESET)/);
      }
    } finally {
      transport.close();
    }
  });
});
