import { type Bucket, parseStoreUrl } from './bucket.js';

/** The bucket store_url names, its provider's SDK loaded only now (a run without store_url never loads one). */
export async function openBucket(url: string, env: NodeJS.ProcessEnv = process.env): Promise<Bucket> {
  const parsed = parseStoreUrl(url);
  if (parsed.provider === 's3') return (await import('./s3-bucket.js')).openS3Bucket(url, parsed, env);
  return (await import('./azure-bucket.js')).openAzureBucket(url, parsed, env);
}
