import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';
import { request } from 'undici';

/** The dump's body as the baseline pipelines read it: one GET, gzip asked for if `gzip` is "gzip", decompressed here. */
export async function dumpBody(program: string, url: string, token: string, gzip: string | undefined): Promise<Readable> {
  const response = await request(url, {
    headers: { authorization: `Bearer ${token}`, 'accept-encoding': gzip === 'gzip' ? 'gzip' : 'identity' },
  });
  if (response.statusCode !== 200) throw new Error(`${program}: HTTP ${response.statusCode}`);
  const body: Readable = response.body;
  return response.headers['content-encoding'] === 'gzip' ? body.pipe(createGunzip()) : body;
}
