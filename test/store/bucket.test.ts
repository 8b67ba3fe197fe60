import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bucket } from '../../src/store/bucket.js';
import { openBucket } from '../../src/store/open-bucket.js';
import { openAzureBucket } from '../../src/store/azure-bucket.js';
import { parseStoreUrl } from '../../src/store/bucket.js';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { TapError } from '../../src/errors.js';
import { tempFolder } from '../helpers/files.js';
import { modeOf } from '../helpers/store-rows.js';
import { startAzurite, startS3, type ObjectStore } from '../helpers/object-stores.js';

/** The two providers of store_url against their emulators, over HTTP, through the SDKs. */

const stores: Record<string, ObjectStore> = {};

beforeAll(async () => {
  [stores.s3, stores.azure] = await Promise.all([startS3(), startAzurite()]);
  // The AWS SDK finds credentials in the process's environment, as a user's run does.
  Object.assign(process.env, stores.s3.env);
}, 60_000);

afterAll(async () => {
  await Promise.all(Object.values(stores).map((s) => s.close()));
});

describe.each(['s3', 'azure'] as const)('%s bucket', (provider) => {
  const bucket = (prefix = `p-${Math.random().toString(36).slice(2)}`): Promise<Bucket> => openBucket(stores[provider].url(prefix), stores[provider].env);

  it('writes an object from a file with metadata, lists it, reads its metadata, reads it into an owner-only file, and removes it', async () => {
    const b = await bucket();
    const folder = tempFolder('bucket-');
    writeFileSync(join(folder, 'in'), 'generation bytes');
    await b.upload('t1/training/g1.gen', join(folder, 'in'), { parent: 'none', fingerprint: 'fp-1' });
    expect((await b.list('t1/training/')).map((o) => o.name)).toEqual(['t1/training/g1.gen']);
    expect(await b.metadata('t1/training/g1.gen')).toMatchObject({ parent: 'none', fingerprint: 'fp-1' });
    expect(await b.download('t1/training/g1.gen', join(folder, 'out'))).toBe(true);
    expect(readFileSync(join(folder, 'out'), 'utf8')).toBe('generation bytes');
    expect(modeOf(join(folder, 'out'))).toBe(0o600);
    await b.remove('t1/training/g1.gen');
    expect(await b.list('t1/')).toEqual([]);
    expect(await b.download('t1/training/g1.gen', join(folder, 'gone'))).toBe(false);
    expect(await b.metadata('t1/training/g1.gen')).toBeUndefined();
  });

  it('sets an object\'s metadata again, its bytes as they were (and its last-modified time, where the store moves it on a copy onto itself: Azure and S3 do, s3rver does not)', async () => {
    const b = await bucket();
    const folder = tempFolder('bucket-');
    writeFileSync(join(folder, 'in'), 'generation bytes');
    await b.upload('t1/training/g1.gen', join(folder, 'in'), { parent: 'none', fingerprint: 'fp-1', used: '1' });
    const [before] = await b.list('t1/');
    // Both stores keep the time to the second.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await b.touch('t1/training/g1.gen', { parent: 'none', fingerprint: 'fp-1', used: '2' });
    const [after] = await b.list('t1/');
    if (provider === 'azure') expect(after.lastModifiedMs).toBeGreaterThanOrEqual(before.lastModifiedMs + 1000);
    expect(await b.metadata('t1/training/g1.gen')).toMatchObject({ parent: 'none', fingerprint: 'fp-1', used: '2' });
    expect(await b.download('t1/training/g1.gen', join(folder, 'out'))).toBe(true);
    expect(readFileSync(join(folder, 'out'), 'utf8')).toBe('generation bytes');
  });

  it('reads an object over a copy already at its path (a failed run\'s, or the same run\'s first read of a pass read again), through a partial file that never stays', async () => {
    const b = await bucket();
    const folder = tempFolder('bucket-');
    writeFileSync(join(folder, 'in'), 'generation bytes');
    await b.upload('t1/training/g1.gen', join(folder, 'in'), { parent: 'none', fingerprint: 'fp-1' });
    writeFileSync(join(folder, 'out'), 'a copy a failed run left');
    expect(await b.download('t1/training/g1.gen', join(folder, 'out'))).toBe(true);
    expect(await b.download('t1/training/g1.gen', join(folder, 'out'))).toBe(true);
    expect(readFileSync(join(folder, 'out'), 'utf8')).toBe('generation bytes');
    expect(modeOf(join(folder, 'out'))).toBe(0o600);
    expect(await b.download('t1/training/no-such.gen', join(folder, 'none'))).toBe(false);
    expect(readdirSync(folder).sort()).toEqual(['in', 'out']);
  });

  it('fails in one line naming store_url and the fix when the bucket does not exist, never a silent miss', async () => {
    const missing = await openBucket(stores[provider].url('x').replace('tap-store', 'no-such-store'), stores[provider].env);
    const error = await missing.download('t1/training/g1.gen', join(tempFolder('bucket-'), 'out')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TapError);
    expect((error as Error).message).toMatch(/^The change store could not read t1\/training\/g1\.gen: The (bucket|container) of store_url (s3|azure):\/\/no-such-store\/x does not exist \(\w+\); create it, or fix store_url\. Nothing was sent as this run's state\.$/);
  });
});

describe('azure bucket, a connection string the SDK cannot read', () => {
  it('is one line naming AZURE_STORAGE_CONNECTION_STRING and the fix, never quoting it (it holds the account key)', async () => {
    const quoted = '"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=c2VjcmV0LWtleS0xMjM0NQ==;EndpointSuffix=core.windows.net"';
    const error = await openBucket('azure://tap-store/x', { AZURE_STORAGE_CONNECTION_STRING: quoted }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TapError);
    expect((error as Error).message).toMatch(/^AZURE_STORAGE_CONNECTION_STRING is not a connection string the Azure SDK reads: .*docker --env-file.*\. Nothing was sent as this run's state\.$/);
    expect((error as Error).message).not.toContain('c2VjcmV0');
  });
});

describe('azure bucket, a store that accepts connections and never answers', () => {
  it('fails each call as unreachable once its time is up, instead of holding the run without end', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      const connection = `DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=${Buffer.from('k').toString('base64')};BlobEndpoint=http://127.0.0.1:${port}/devstoreaccount1;`;
      const url = 'azure://tap-store/silent';
      const bucket = await openAzureBucket(url, parseStoreUrl(url), { AZURE_STORAGE_CONNECTION_STRING: connection }, 300);
      const started = Date.now();
      const error = await bucket.list('t1/').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TapError);
      expect((error as Error).message).toBe(
        "The change store could not list t1/: The container of store_url azure://tap-store/silent could not be reached (CallTimeout); check the network, and the endpoint (AWS_ENDPOINT_URL_S3 for an S3-compatible store). Nothing was sent as this run's state.",
      );
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(await bucket.download('t1/g.gen', join(tempFolder('bucket-'), 'out')).catch((e: unknown) => (e as Error).message)).toMatch(/could not be reached \(CallTimeout\)/);
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });
});

