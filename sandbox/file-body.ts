import { closeSync, openSync, readSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { waitDrain } from './dump-writer.js';

const CHUNK_BYTES = 64 * 1024;

/**
 * Sends a pre-rendered dump file as the body, for a response no body fault
 * applies to. The file is read synchronously (it is in the page cache: it was
 * just written) and written until the socket's buffer is full, then 'drain' is
 * awaited. A read stream piped through the fault-injecting writer hops to
 * libuv's thread pool and through a Writable for every 64 KiB; a client that
 * reads fast waited for those hops, and on a machine with few cores they took
 * CPU time from the client being measured (bench/README: both pipelines got
 * 4–6 % faster).
 */
export async function sendFileBody(res: ServerResponse, path: string, size: number): Promise<void> {
  const fd = openSync(path, 'r');
  try {
    let position = 0;
    while (position < size && !res.destroyed) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, size - position));
      const read = readSync(fd, chunk, 0, chunk.length, position);
      if (read === 0) break;
      position += read;
      if (!res.write(read === chunk.length ? chunk : chunk.subarray(0, read))) await waitDrain(res);
    }
  } finally {
    closeSync(fd);
  }
  if (res.destroyed) return;
  await new Promise<void>((resolve) => {
    res.once('close', resolve);
    res.end();
  });
}
