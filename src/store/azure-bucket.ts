import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { BlobServiceClient, type ContainerClient } from '@azure/storage-blob';
import { PRIVATE_FILE_MODE } from '../output/private-files.js';
import { type Bucket, bucketError, type BucketFailure, type BucketObject, type StoreUrl } from './bucket.js';

/**
 * store_url azure://container/prefix: Azure Blob Storage through its SDK,
 * with AZURE_STORAGE_CONNECTION_STRING (Azurite's too), or the account
 * AZURE_STORAGE_ACCOUNT with the Azure SDK's default credential chain
 * (environment, workload or managed identity, az login).
 */

async function containerOf(container: string, env: NodeJS.ProcessEnv): Promise<ContainerClient | 'no credentials'> {
  const connection = env.AZURE_STORAGE_CONNECTION_STRING;
  if (connection !== undefined && connection !== '') return BlobServiceClient.fromConnectionString(connection).getContainerClient(container);
  const account = env.AZURE_STORAGE_ACCOUNT;
  if (account === undefined || account === '') return 'no credentials';
  const { DefaultAzureCredential } = await import('@azure/identity');
  return new BlobServiceClient(`https://${account}.blob.core.windows.net`, new DefaultAzureCredential()).getContainerClient(container);
}

export async function openAzureBucket(url: string, { container, prefix }: StoreUrl, env: NodeJS.ProcessEnv): Promise<Bucket> {
  const place = `The container of store_url ${url}`;
  const client = await containerOf(container, env);
  if (client === 'no credentials') throw bucketError('open its container', place, 'no credentials', undefined, undefined);
  const key = (name: string): string => (prefix === '' ? name : `${prefix}/${name}`);
  const failed = (doing: string, error: unknown) => {
    const { failure, code } = classify(error);
    return bucketError(doing, place, failure, code, error);
  };
  return {
    url,
    async download(name, path) {
      try {
        const answer = await client.getBlockBlobClient(key(name)).download();
        await pipeline(answer.readableStreamBody!, createWriteStream(path, { flags: 'wx', mode: PRIVATE_FILE_MODE }));
        return true;
      } catch (error) {
        await rm(path, { force: true });
        if (isMissingBlob(error)) return false;
        throw failed(`read ${name}`, error);
      }
    },
    async upload(name, path, metadata) {
      try {
        await client.getBlockBlobClient(key(name)).uploadFile(path, { metadata: { ...metadata } });
      } catch (error) {
        throw failed(`write ${name}`, error);
      }
    },
    async list(namePrefix) {
      const found: BucketObject[] = [];
      try {
        for await (const blob of client.listBlobsFlat({ prefix: key(namePrefix) })) {
          found.push({ name: blob.name.slice(key('').length), lastModifiedMs: blob.properties.lastModified?.getTime() ?? Date.now() });
        }
      } catch (error) {
        throw failed(`list ${namePrefix}`, error);
      }
      return found;
    },
    async metadata(name) {
      try {
        return (await client.getBlockBlobClient(key(name)).getProperties()).metadata ?? {};
      } catch (error) {
        if (isMissingBlob(error)) return undefined;
        throw failed(`read ${name}`, error);
      }
    },
    async touch(name, metadata) {
      try {
        // Setting a blob's metadata sets its last-modified time, and nothing else.
        await client.getBlockBlobClient(key(name)).setMetadata({ ...metadata });
      } catch (error) {
        throw failed(`mark ${name} as used`, error);
      }
    },
    async remove(name) {
      try {
        await client.getBlockBlobClient(key(name)).deleteIfExists();
      } catch (error) {
        throw failed(`remove ${name}`, error);
      }
    },
  };
}

interface RestError {
  name?: string;
  code?: string;
  statusCode?: number;
  details?: { errorCode?: string };
}

function errorCode(error: unknown): string | undefined {
  const e = (error ?? {}) as RestError;
  return e.details?.errorCode ?? e.code;
}

function isMissingBlob(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'BlobNotFound' || ((error as RestError)?.statusCode === 404 && code !== 'ContainerNotFound');
}

const REFUSED = new Set(['AuthenticationFailed', 'AuthorizationFailure', 'AuthorizationPermissionMismatch', 'InsufficientAccountPermissions', 'AccountIsDisabled']);
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'REQUEST_SEND_ERROR']);

function classify(error: unknown): { failure: BucketFailure; code: string | undefined } {
  const code = errorCode(error);
  const e = (error ?? {}) as RestError;
  if (code === 'ContainerNotFound') return { failure: 'missing bucket', code };
  if (REFUSED.has(code ?? '') || e.statusCode === 403) return { failure: 'refused', code };
  if (e.name === 'CredentialUnavailableError' || e.name === 'AggregateAuthenticationError') return { failure: 'no credentials', code: e.name };
  if (UNREACHABLE.has(code ?? '')) return { failure: 'unreachable', code };
  return { failure: 'other', code };
}
