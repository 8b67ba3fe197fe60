import { describe, expect, it } from 'vitest';
import type { Bucket, BucketObject } from '../../src/store/bucket.js';
import { BucketHome } from '../../src/store/homes.js';
import type { GenerationOrigin } from '../../src/store/generation-file.js';
import type { TidyRun } from '../../src/store/retention.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 11, 1);
const OWN = { stream: 'training', fingerprint: 'fp' };
const [G1, G2, G3, OTHER] = ['20261001T020000Z-00000001', '20261002T020000Z-00000002', '20261003T020000Z-00000003', '20261004T020000Z-0000000f'];

/** A bucket in memory (a unit test's stand-in: the SDKs against their emulators are test/store/bucket.test.ts). */
class MemoryBucket implements Bucket {
  readonly url = 's3://memory/p';
  readonly objects = new Map<string, { modifiedMs: number; metadata: Record<string, string> }>();
  readonly touched: string[] = [];

  put(generation: string, modifiedMs: number, parent: string | null, extra: Record<string, string> = {}): void {
    this.objects.set(`t/training/${generation}.gen`, { modifiedMs, metadata: { stream: 'training', fingerprint: OWN.fingerprint, parent: parent ?? 'none', ...extra } });
  }

  names(): string[] {
    return [...this.objects.keys()].map((name) => name.slice('t/training/'.length, -'.gen'.length)).sort();
  }

  async download(): Promise<boolean> {
    return false;
  }
  async upload(): Promise<void> {}
  async list(prefix: string): Promise<BucketObject[]> {
    return [...this.objects].filter(([name]) => name.startsWith(prefix)).map(([name, o]) => ({ name, lastModifiedMs: o.modifiedMs }));
  }
  async metadata(name: string): Promise<Record<string, string> | undefined> {
    return this.objects.get(name)?.metadata;
  }
  async touch(name: string, metadata: Readonly<Record<string, string>>): Promise<void> {
    this.touched.push(name);
    // As s3rver: the metadata set again, the last-modified time left as it was.
    this.objects.get(name)!.metadata = { ...metadata };
  }
  async remove(name: string): Promise<void> {
    this.objects.delete(name);
  }
}

function run(incoming: string | undefined, written: string, known: Array<[string, GenerationOrigin]> = []): TidyRun {
  return { own: OWN, incoming, written, now: NOW, retentionDays: 60, known: new Map(known) };
}

describe('a bucket home, tidied after the state went out', () => {
  it('follows a chain that moved into the state back into the bucket: the ancestors of the incoming generation go, though they lie in the bucket and it does not', async () => {
    const bucket = new MemoryBucket();
    bucket.put(G1, NOW - 2 * DAY, null);
    // G2 and G3 travel in the state: only this run knows their headers.
    const known: Array<[string, GenerationOrigin]> = [[G2, { ...OWN, parent: G1 }], [G3, { ...OWN, parent: G2 }]];
    await new BucketHome(bucket, 't/training/').tidy(run(G2, G3, known));
    expect(bucket.names()).toEqual([]);
  });

  it('without the run\'s own headers, keeps what it cannot place in a chain (another pipeline\'s, as far as it can tell) until its age removes it', async () => {
    const bucket = new MemoryBucket();
    bucket.put(G1, NOW - 2 * DAY, null);
    await new BucketHome(bucket, 't/training/').tidy(run(G2, G3));
    expect(bucket.names()).toEqual([G1]);
  });

  it('marks the generation a run named again without writing one as used (metadata `used`), once a day at most, and judges age by it where the store leaves the object\'s time as it was', async () => {
    const bucket = new MemoryBucket();
    bucket.put(G1, NOW - 70 * DAY, null, { used: String(NOW - 2 * DAY) });
    bucket.put(OTHER, NOW - 70 * DAY, null, { fingerprint: 'another pipeline' });
    const home = new BucketHome(bucket, 't/training/');
    await home.tidy(run(G1, G1));
    expect(bucket.touched).toEqual([`t/training/${G1}.gen`]);
    expect(bucket.objects.get(`t/training/${G1}.gen`)!.metadata.used).toBe(String(NOW));
    // Another pipeline's run, judging G1 by its age: used two days ago, not seventy.
    await home.tidy({ ...run(undefined, G3), own: { stream: 'training', fingerprint: 'another pipeline' } });
    expect(bucket.names()).toEqual([G1]);
    // Named again within the day: not written again.
    await home.tidy(run(G1, G1));
    expect(bucket.touched).toHaveLength(1);
  });
});
