import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { CopyObjectCommand, DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { fs } from '../builtins.js';
import type { TapError } from '../errors.js';
import { type Bucket, bucketError, type BucketFailure, type BucketObject, saveObject, type StoreUrl } from './bucket.js';

/**
 * store_url s3://bucket/prefix: AWS S3, and the S3-compatible stores (MinIO,
 * Cloudflare R2, Google Cloud Storage's XML API with HMAC keys) through the
 * AWS SDK's own settings: AWS_REGION, AWS_ENDPOINT_URL_S3 (or
 * AWS_ENDPOINT_URL) for another endpoint, the SDK's credential chain. With an
 * endpoint of its own, a store is addressed by path (bucket names in the
 * path) and sent plain bodies, checksums only where the API asks for them:
 * what those stores take.
 */

/** Whether the environment names an endpoint other than AWS's. */
function customEndpoint(env: NodeJS.ProcessEnv): boolean {
  return (env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL ?? '') !== '';
}

export function openS3Bucket(url: string, where: StoreUrl, env: NodeJS.ProcessEnv): Bucket {
  return new S3Bucket(url, where, s3Client(env));
}

/** A client with region and endpoint as the SDK itself reads them (passed on, so that an environment given to the tap counts); credentials from its chain alone. */
function s3Client(env: NodeJS.ProcessEnv): S3Client {
  const endpoint = env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL;
  const region = env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  return new S3Client({
    ...(region === undefined || region === '' ? {} : { region }),
    ...(endpoint === undefined || endpoint === '' ? {} : { endpoint }),
    forcePathStyle: customEndpoint(env),
    // S3-compatible stores take plain bodies: the SDK's default (chunked bodies with trailing checksums) only where asked.
    ...(customEndpoint(env) ? { requestChecksumCalculation: 'WHEN_REQUIRED' as const, responseChecksumValidation: 'WHEN_REQUIRED' as const } : {}),
    // Seconds, not the SDK's wait without end: a store that does not answer fails the run, in one line.
    requestHandler: { connectionTimeout: 10_000, requestTimeout: 120_000 },
  });
}

class S3Bucket implements Bucket {
  private readonly bucket: string;
  private readonly prefix: string;

  constructor(
    readonly url: string,
    { container, prefix }: StoreUrl,
    private readonly client: S3Client,
  ) {
    this.bucket = container;
    this.prefix = prefix;
  }

  download(name: string, path: string): Promise<boolean> {
    const body = async () => (await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key(name) }))).Body as Readable;
    return saveObject(path, body, isMissingObject, (error) => this.failed(`read ${name}`, error));
  }

  async upload(name: string, path: string, metadata: Readonly<Record<string, string>>): Promise<void> {
    try {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.key(name), Body: createReadStream(path), ContentLength: fs.statSync(path).size, Metadata: { ...metadata } }));
    } catch (error) {
      throw this.failed(`write ${name}`, error);
    }
  }

  async list(namePrefix: string): Promise<BucketObject[]> {
    const found: BucketObject[] = [];
    try {
      for (let token: string | undefined, more = true; more; ) {
        const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.key(namePrefix), ContinuationToken: token }));
        for (const object of page.Contents ?? []) {
          if (object.Key !== undefined) found.push({ name: object.Key.slice(this.key('').length), lastModifiedMs: object.LastModified?.getTime() ?? Date.now() });
        }
        token = page.NextContinuationToken;
        more = page.IsTruncated === true && token !== undefined;
      }
    } catch (error) {
      throw this.failed(`list ${namePrefix}`, error);
    }
    return found;
  }

  async metadata(name: string): Promise<Record<string, string> | undefined> {
    try {
      return (await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(name) }))).Metadata ?? {};
    } catch (error) {
      if (isMissingObject(error)) return undefined;
      throw this.failed(`read ${name}`, error);
    }
  }

  async touch(name: string, metadata: Readonly<Record<string, string>>): Promise<void> {
    try {
      // S3 has no touch: the object copied onto itself, which it takes only with its metadata given again.
      const source = `${this.bucket}/${encodeURIComponent(this.key(name)).replace(/%2F/g, '/')}`;
      await this.client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: this.key(name), CopySource: source, Metadata: { ...metadata }, MetadataDirective: 'REPLACE' }));
    } catch (error) {
      throw this.failed(`mark ${name} as used`, error);
    }
  }

  async remove(name: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(name) }));
    } catch (error) {
      throw this.failed(`remove ${name}`, error);
    }
  }

  private key(name: string): string {
    return this.prefix === '' ? name : `${this.prefix}/${name}`;
  }

  private failed(doing: string, error: unknown): TapError {
    const { failure, code } = classify(error);
    return bucketError(doing, `The bucket of store_url ${this.url}`, failure, code, error);
  }
}

interface SdkError {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

/** A missing object (not a missing bucket). */
function isMissingObject(error: unknown): boolean {
  const e = error as SdkError;
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || (e.$metadata?.httpStatusCode === 404 && e.name !== 'NoSuchBucket');
}

const REFUSED = new Set(['AccessDenied', 'InvalidAccessKeyId', 'SignatureDoesNotMatch', 'InvalidToken', 'ExpiredToken', 'Forbidden', 'AllAccessDisabled']);
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'TimeoutError', 'RequestTimeout']);

function classify(error: unknown): { failure: BucketFailure; code: string | undefined } {
  const e = (error ?? {}) as SdkError;
  const code = e.name !== undefined && e.name !== 'Error' ? e.name : e.code;
  if (e.name === 'NoSuchBucket') return { failure: 'missing bucket', code };
  if (REFUSED.has(e.name ?? '') || e.$metadata?.httpStatusCode === 403) return { failure: 'refused', code };
  if (e.name === 'CredentialsProviderError') return { failure: 'no credentials', code };
  if (/region is missing/i.test(e.message ?? '')) return { failure: 'no region', code: undefined };
  if (UNREACHABLE.has(e.code ?? '') || UNREACHABLE.has(e.name ?? '')) return { failure: 'unreachable', code };
  return { failure: 'other', code };
}
