import { createHash } from 'node:crypto';
import { recordHash } from '../state.js';

/** Canonical content of a record for boundary dedupe: keys sorted, so CSV and JSONL hash alike. */
export function contentHash(record: Record<string, unknown>): string {
  const keys = Object.keys(record).sort();
  let text = '';
  for (const key of keys) text += `${JSON.stringify(key)}:${JSON.stringify(record[key])},`;
  return recordHash(text);
}

/** Short digest of what a request meant, stored beside the Last-Modified it got. */
export function fingerprint(parts: unknown): string {
  return createHash('sha1').update(JSON.stringify(parts)).digest('base64url').slice(0, 16);
}

/** Tracks the greatest replication-key instant among emitted records and the content hashes of the records at it. */
export class BookmarkTracker {
  maxMs = Number.NEGATIVE_INFINITY;
  maxValue: string | null = null;
  hashes = new Set<string>();

  /** Whether a record at `ms` may become or join the boundary (worth hashing). */
  wants(ms: number): boolean {
    return ms >= this.maxMs;
  }

  add(ms: number, value: string, hash: string): void {
    if (ms > this.maxMs) {
      this.maxMs = ms;
      this.maxValue = value;
      this.hashes = new Set([hash]);
    } else if (ms === this.maxMs) {
      this.hashes.add(hash);
    }
  }
}
