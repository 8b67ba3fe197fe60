import { BlobServiceClient, type BlockBlobClient, type ContainerClient } from '@azure/storage-blob';
import { runtimeError, type TapError } from '../errors.js';
import { type Bucket, bucketError, type BucketFailure, type BucketObject, saveObject, type StoreUrl } from './bucket.js';

/**
 * store_url azure://container/prefix: Azure Blob Storage through its SDK,
 * with AZURE_STORAGE_CONNECTION_STRING (Azurite's too), or the account
 * AZURE_STORAGE_ACCOUNT with the Azure SDK's default credential chain
 * (environment, workload or managed identity, az login).
 */

async function containerOf(container: string, env: NodeJS.ProcessEnv): Promise<ContainerClient | 'no credentials'> {
  const connection = env.AZURE_STORAGE_CONNECTION_STRING;
  if (connection !== undefined && connection !== '') return fromConnectionString(connection).getContainerClient(container);
  const account = env.AZURE_STORAGE_ACCOUNT;
  if (account === undefined || account === '') return 'no credentials';
  const { DefaultAzureCredential } = await import('@azure/identity');
  return new BlobServiceClient(`https://${account}.blob.core.windows.net`, new DefaultAzureCredential()).getContainerClient(container);
}

/** The SDK's client of a connection string; one it cannot read is a one-line error that never quotes it (it holds the account key). */
function fromConnectionString(connection: string): BlobServiceClient {
  try {
    return BlobServiceClient.fromConnectionString(connection);
  } catch (error) {
    throw runtimeError(
      'AZURE_STORAGE_CONNECTION_STRING is not a connection string the Azure SDK reads: copy it again from the storage account\'s Access keys (without surrounding quotes: docker --env-file keeps them), or use AZURE_STORAGE_ACCOUNT with a managed identity. Nothing was sent as this run\'s state.',
      error,
    );
  }
}

/**
 * How long one call to the container may take. The SDK has no client-side
 * limit, so a store that accepts and never answers held the run (and its
 * lock) without end; S3's client gives up after 120 s of silence. A whole
 * call, not a silence, here: a generation of millions of rows downloads in
 * far less.
 */
const CALL_TIMEOUT_MS = 10 * 60_000;

export async function openAzureBucket(url: string, { container, prefix }: StoreUrl, env: NodeJS.ProcessEnv, callTimeoutMs = CALL_TIMEOUT_MS): Promise<Bucket> {
  const client = await containerOf(container, env);
  if (client === 'no credentials') throw bucketError('open its container', placeOf(url), 'no credentials', undefined, undefined);
  return new AzureBucket(url, prefix, client, callTimeoutMs);
}

function placeOf(url: string): string {
  return `The container of store_url ${url}`;
}

class AzureBucket implements Bucket {
  constructor(
    readonly url: string,
    private readonly prefix: string,
    private readonly client: ContainerClient,
    private readonly callTimeoutMs: number,
  ) {}

  /** A call's options: it fails as unreachable once CALL_TIMEOUT_MS passed. */
  private within(): { abortSignal: AbortSignal } {
    return { abortSignal: AbortSignal.timeout(this.callTimeoutMs) };
  }

  download(name: string, path: string): Promise<boolean> {
    const body = async () => (await this.blob(name).download(0, undefined, this.within())).readableStreamBody!;
    return saveObject(path, body, isMissingBlob, (error) => this.failed(`read ${name}`, error));
  }

  async upload(name: string, path: string, metadata: Readonly<Record<string, string>>): Promise<void> {
    try {
      await this.blob(name).uploadFile(path, { metadata: { ...metadata }, ...this.within() });
    } catch (error) {
      throw this.failed(`write ${name}`, error);
    }
  }

  async list(namePrefix: string): Promise<BucketObject[]> {
    const found: BucketObject[] = [];
    try {
      for await (const blob of this.client.listBlobsFlat({ prefix: this.key(namePrefix), ...this.within() })) {
        found.push({ name: blob.name.slice(this.key('').length), lastModifiedMs: blob.properties.lastModified?.getTime() ?? Date.now() });
      }
    } catch (error) {
      throw this.failed(`list ${namePrefix}`, error);
    }
    return found;
  }

  async metadata(name: string): Promise<Record<string, string> | undefined> {
    try {
      return (await this.blob(name).getProperties(this.within())).metadata ?? {};
    } catch (error) {
      if (isMissingBlob(error)) return undefined;
      throw this.failed(`read ${name}`, error);
    }
  }

  async touch(name: string, metadata: Readonly<Record<string, string>>): Promise<void> {
    try {
      // Setting a blob's metadata sets its last-modified time, and nothing else.
      await this.blob(name).setMetadata({ ...metadata }, this.within());
    } catch (error) {
      throw this.failed(`mark ${name} as used`, error);
    }
  }

  async remove(name: string): Promise<void> {
    try {
      await this.blob(name).deleteIfExists(this.within());
    } catch (error) {
      throw this.failed(`remove ${name}`, error);
    }
  }

  private blob(name: string): BlockBlobClient {
    return this.client.getBlockBlobClient(this.key(name));
  }

  private key(name: string): string {
    return this.prefix === '' ? name : `${this.prefix}/${name}`;
  }

  private failed(doing: string, error: unknown): TapError {
    const { failure, code } = classify(error);
    return bucketError(doing, placeOf(this.url), failure, code, error);
  }
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
  if (e.name === 'AbortError') return { failure: 'unreachable', code: 'CallTimeout' };
  return { failure: 'other', code };
}
