import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { tempFolder } from './files.js';

/**
 * Real object stores on loopback, from the npm registry (devDependencies):
 * s3rver (S3 over HTTP, path-style, no conditional writes) and Azurite
 * (Microsoft's Azure Storage emulator), each with an empty bucket or
 * container, and the environment a tap needs to reach it through the
 * providers' SDKs, as a user would set it. The credentials are the
 * emulators' documented defaults, not secrets.
 */

const require = createRequire(import.meta.url);

export interface ObjectStore {
  /** store_url of the bucket or container, with a prefix. */
  url(prefix?: string): string;
  /** The variables the SDK reads (endpoint, credentials). */
  readonly env: Record<string, string>;
  close(): Promise<void>;
}

/** s3rver in this process, with the bucket `name`. */
export async function startS3(name = 'tap-store'): Promise<ObjectStore> {
  const S3rver = require('s3rver') as new (options: Record<string, unknown>) => { run(): Promise<{ port: number }>; close(): Promise<void> };
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: tempFolder('s3rver-'), configureBuckets: [{ name }] });
  const { port } = await server.run();
  return {
    url: (prefix = 'runs') => `s3://${name}/${prefix}`,
    env: { AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}`, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' },
    close: () => server.close(),
  };
}

/** Azurite's well-known development account (Microsoft's documentation gives its key to every user). */
const AZURITE_ACCOUNT = 'devstoreaccount1';
const AZURITE_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

/** Azurite's blob service in a child process, with the container `name`. */
export async function startAzurite(name = 'tap-store'): Promise<ObjectStore> {
  const bin = require.resolve('azurite/dist/src/blob/main.js');
  const child = spawn(process.execPath, [bin, '--blobHost', '127.0.0.1', '--blobPort', '0', '--inMemoryPersistence', '--disableTelemetry', '--skipApiVersionCheck', '--loose'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const port = await listening(child);
  const connection = `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};BlobEndpoint=http://127.0.0.1:${port}/${AZURITE_ACCOUNT};`;
  const { BlobServiceClient } = await import('@azure/storage-blob');
  await BlobServiceClient.fromConnectionString(connection).getContainerClient(name).create();
  return {
    url: (prefix = 'runs') => `azure://${name}/${prefix}`,
    env: { AZURE_STORAGE_CONNECTION_STRING: connection },
    close: async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(undefined)));
    },
  };
}

function listening(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`Azurite did not start: ${text}`)), 20_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const match = /listens on http:\/\/127\.0\.0\.1:(\d+)/.exec(text);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`Azurite exited with ${code}: ${text}`)));
  });
}
