import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { CopyObjectCommand, DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { fs } from '../builtins.js';
import { PRIVATE_FILE_MODE } from '../output/private-files.js';
import { type Bucket, bucketError, type BucketFailure, type BucketObject, type StoreUrl } from './bucket.js';

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

export function openS3Bucket(url: string, { container, prefix }: StoreUrl, env: NodeJS.ProcessEnv): Bucket {
  const endpoint = env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL;
  const region = env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  // Region and endpoint as the SDK itself reads them (passed on, so that an environment given to the tap counts); credentials from its chain alone.
  const client = new S3Client({
    ...(region === undefined || region === '' ? {} : { region }),
    ...(endpoint === undefined || endpoint === '' ? {} : { endpoint }),
    forcePathStyle: customEndpoint(env),
    // S3-compatible stores take plain bodies: the SDK's default (chunked bodies with trailing checksums) only where asked.
    ...(customEndpoint(env) ? { requestChecksumCalculation: 'WHEN_REQUIRED' as const, responseChecksumValidation: 'WHEN_REQUIRED' as const } : {}),
    // Seconds, not the SDK's wait without end: a store that does not answer fails the run, in one line.
    requestHandler: { connectionTimeout: 10_000, requestTimeout: 120_000 },
  });
  const key = (name: string): string => (prefix === '' ? name : `${prefix}/${name}`);
  const place = `The bucket of store_url ${url}`;
  const failed = (doing: string, error: unknown) => {
    const { failure, code } = classify(error);
    return bucketError(doing, place, failure, code, error);
  };
  return {
    url,
    async download(name, path) {
      try {
        const answer = await client.send(new GetObjectCommand({ Bucket: container, Key: key(name) }));
        await pipeline(answer.Body as Readable, createWriteStream(path, { flags: 'wx', mode: PRIVATE_FILE_MODE }));
        return true;
      } catch (error) {
        await rm(path, { force: true });
        if (isMissingObject(error)) return false;
        throw failed(`read ${name}`, error);
      }
    },
    async upload(name, path, metadata) {
      try {
        await client.send(new PutObjectCommand({ Bucket: container, Key: key(name), Body: createReadStream(path), ContentLength: fs.statSync(path).size, Metadata: { ...metadata } }));
      } catch (error) {
        throw failed(`write ${name}`, error);
      }
    },
    async list(namePrefix) {
      const found: BucketObject[] = [];
      try {
        for (let token: string | undefined, more = true; more; ) {
          const page = await client.send(new ListObjectsV2Command({ Bucket: container, Prefix: key(namePrefix), ContinuationToken: token }));
          for (const object of page.Contents ?? []) {
            if (object.Key !== undefined) found.push({ name: object.Key.slice(key('').length), lastModifiedMs: object.LastModified?.getTime() ?? Date.now() });
          }
          token = page.NextContinuationToken;
          more = page.IsTruncated === true && token !== undefined;
        }
      } catch (error) {
        throw failed(`list ${namePrefix}`, error);
      }
      return found;
    },
    async metadata(name) {
      try {
        return (await client.send(new HeadObjectCommand({ Bucket: container, Key: key(name) }))).Metadata ?? {};
      } catch (error) {
        if (isMissingObject(error)) return undefined;
        throw failed(`read ${name}`, error);
      }
    },
    async touch(name, metadata) {
      try {
        // S3 has no touch: the object copied onto itself, which it takes only with its metadata given again.
        await client.send(new CopyObjectCommand({ Bucket: container, Key: key(name), CopySource: `${container}/${encodeURIComponent(key(name)).replace(/%2F/g, '/')}`, Metadata: { ...metadata }, MetadataDirective: 'REPLACE' }));
      } catch (error) {
        throw failed(`mark ${name} as used`, error);
      }
    },
    async remove(name) {
      try {
        await client.send(new DeleteObjectCommand({ Bucket: container, Key: key(name) }));
      } catch (error) {
        throw failed(`remove ${name}`, error);
      }
    },
  };
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
