/**
 * An S3 bucket on loopback for the change store's bucket runs of npm run
 * bench: s3rver (a devDependency) in this process, its objects in a folder of
 * its own, and the environment a tap needs to reach it, as a user would set
 * it (the emulator's documented credentials, not secrets). The same start as
 * test/helpers/object-stores.ts startS3; bench/ is built without test/
 * (tsconfig.json), so it has its own.
 */
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);

/** How s3rver names the file holding an object's bytes. */
const OBJECT_FILE_END = '._S3rver_object';

export interface BenchBucket {
  /** store_url of the bucket, prefix `bench`. */
  readonly url: string;
  /** The variables the tap's SDK reads: endpoint, region, credentials. */
  readonly env: Record<string, string>;
  /** The size of the object whose key ends with `keyEnd`; NaN when there is none. */
  objectBytes(keyEnd: string): number;
  /** Stops s3rver and removes its folder. */
  close(): Promise<void>;
}

export async function startBucket(folder: string, name = 'bench-store'): Promise<BenchBucket> {
  mkdirSync(folder, { recursive: true });
  const S3rver = require('s3rver') as new (options: Record<string, unknown>) => { run(): Promise<{ port: number }>; close(): Promise<void> };
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: folder, configureBuckets: [{ name }] });
  const { port } = await server.run();
  return {
    url: `s3://${name}/bench`,
    env: { AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}`, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' },
    objectBytes: (keyEnd) => fileBytes(folder, `${keyEnd}${OBJECT_FILE_END}`),
    close: async () => {
      await server.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** The size of the file under `folder` whose name ends with `end`; NaN when there is none. */
export function fileBytes(folder: string, end: string): number {
  const file = readdirSync(folder, { recursive: true, encoding: 'utf8' }).find((name) => name.endsWith(end));
  return file === undefined ? Number.NaN : statSync(join(folder, file)).size;
}
