import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { BatchFiles } from '../../src/output/batch-files.js';
import type { BatchSettings } from '../../src/config/batch.js';
import { tempFolder } from '../helpers/files.js';

function settings(extra: Partial<BatchSettings> = {}): BatchSettings {
  const directory = tempFolder('batch-files-');
  return { directory, prefix: 'p-', compression: 'gzip', batchSize: 3, ...extra };
}

/** Writes `count` records through the three ways a decoder queues a line. */
async function write(files: BatchFiles, count: number, from = 0): Promise<void> {
  for (let i = from; i < from + count; i++) {
    const text = `{"n":${i}}`;
    if (i % 3 === 0) files.line(text);
    else if (i % 3 === 1) files.spliced(Buffer.from('{"n":'), Buffer.from(`xx${i}yy`), 2, 2 + String(i).length, Buffer.from('}\n'));
    else {
      const block = files.reserve(64);
      const start = files.pos;
      files.commit(start + block.write(`${text}\n`, start));
    }
    if (files.full) await files.drain();
  }
}

function read(url: string, gzip = true): string[] {
  const bytes = readFileSync(fileURLToPath(url));
  return (gzip ? gunzipSync(bytes) : bytes).toString('utf8').split('\n').slice(0, -1);
}

/** An `announce` whose messages go out, or not, when the test says so. */
class Announcements {
  readonly names: string[] = [];
  private readonly pending: Array<(sent: boolean) => void> = [];

  readonly announce = (url: string): Promise<boolean> => {
    this.names.push(url.slice(url.lastIndexOf('/') + 1));
    return new Promise((resolve) => this.pending.push(resolve));
  };

  /** Waits until `count` files were announced. */
  async called(count: number): Promise<void> {
    for (let i = 0; i < 200 && this.names.length < count; i++) await sleep(5);
    expect(this.names).toHaveLength(count);
  }

  /** The oldest message waiting went out, or did not. */
  settle(sent: boolean): void {
    this.pending.shift()!(sent);
  }
}

describe('BatchFiles', () => {
  for (const [count, sizes] of [[0, []], [1, [1]], [3, [3]], [4, [3, 1]], [7, [3, 3, 1]]] as const) {
    it(`puts ${count} records in files of at most batch_size, announced in order`, async () => {
      const announced: string[] = [];
      const files = new BatchFiles(settings(), 'training', 'RUN', (url) => announced.push(url));
      await write(files, count);
      await files.finish();
      expect(announced.map((url) => read(url).length)).toEqual(sizes);
      expect(announced.flatMap((url) => read(url))).toEqual(Array.from({ length: count }, (_, i) => `{"n":${i}}`));
      expect(announced.map((url) => url.slice(url.lastIndexOf('/') + 1))).toEqual(sizes.map((_, i) => `p-training-RUN-${i + 1}.jsonl.gz`));
      expect(files.files).toBe(sizes.length);
    });
  }

  it('writes plain JSONL without compression', async () => {
    const announced: string[] = [];
    const files = new BatchFiles(settings({ compression: 'none' }), 's', 'RUN', (url) => announced.push(url));
    await write(files, 4);
    await files.finish();
    expect(announced.map((url) => url.endsWith('.jsonl'))).toEqual([true, true]);
    expect(announced.flatMap((url) => read(url, false))).toEqual(['{"n":0}', '{"n":1}', '{"n":2}', '{"n":3}']);
  });

  it('removes an empty last file: a line reserved but never committed', async () => {
    const config = settings();
    const announced: string[] = [];
    const files = new BatchFiles(config, 's', 'RUN', (url) => announced.push(url));
    await write(files, 3);
    files.reserve(64);
    await files.finish();
    expect(announced).toHaveLength(1);
    expect(readdirSync(config.directory)).toEqual(['p-s-RUN-1.jsonl.gz']);
  });

  it('on abort removes the file being written and keeps the ones announced', async () => {
    const config = settings();
    const announced: string[] = [];
    const files = new BatchFiles(config, 's', 'RUN', (url) => announced.push(url));
    await write(files, 7);
    await files.drain();
    await files.abort();
    expect(readdirSync(config.directory).sort()).toEqual(announced.map((url) => url.slice(url.lastIndexOf('/') + 1)).sort());
    expect(announced.length).toBeGreaterThanOrEqual(1);
    expect(readdirSync(config.directory).some((name) => name.endsWith('.partial'))).toBe(false);
  });

  it('a file begun is on disk as soon as it is listed for removal: a stop that removes the listed files at once (synchronously, as SIGTERM does) leaves none of them behind', () => {
    const config = settings({ compression: 'none' });
    const unannounced = new Set<string>();
    const files = new BatchFiles(config, 's', 'RUN', async () => true, unannounced);
    files.line('{"n":1}');
    expect([...unannounced]).toEqual([join(config.directory, 'p-s-RUN-1.jsonl.partial')]);
    expect([...unannounced].every((path) => existsSync(path)), 'opened before it is listed, not later on the thread pool').toBe(true);
    for (const path of unannounced) rmSync(path, { force: true });
    expect(readdirSync(config.directory)).toEqual([]);
  });

  it('announces one file at a time, the next once the last settled; on abort removes a file whose message did not go out, with those after it, and keeps those that did', async () => {
    const config = settings();
    const unannounced = new Set<string>();
    const announcing = new Announcements();
    const files = new BatchFiles(config, 's', 'RUN', announcing.announce, unannounced);
    // Two files waiting make the writer full: it waits for the first message.
    const written = write(files, 7);
    await announcing.called(1);
    await sleep(20);
    expect(announcing.names, 'the second waits for the first').toEqual(['p-s-RUN-1.jsonl.gz']);
    expect(unannounced.has(join(config.directory, 'p-s-RUN-1.jsonl.gz')), 'removed by a stop while its message waits for stdout').toBe(true);
    announcing.settle(true);
    await announcing.called(2);
    expect(unannounced.has(join(config.directory, 'p-s-RUN-1.jsonl.gz')), 'kept once stdout took its message').toBe(false);
    announcing.settle(false);
    await written;
    await files.drain();
    expect(unannounced.has(join(config.directory, 'p-s-RUN-2.jsonl.gz')), 'removed if the run is stopped').toBe(true);
    await files.abort();
    expect(readdirSync(config.directory)).toEqual(['p-s-RUN-1.jsonl.gz']);
    expect([...unannounced]).toEqual([]);
  });

  it('held back, announces its files in order, each once the last settled; on abort removes a file whose message did not go out, and the held ones after it', async () => {
    const config = settings();
    const announcing = new Announcements();
    const files = new BatchFiles(config, 's', 'RUN', announcing.announce, new Set(), true);
    await write(files, 7);
    await files.finish();
    let released = false;
    const release = files.release().then(() => (released = true));
    await announcing.called(1);
    announcing.settle(true);
    await announcing.called(2);
    await sleep(20);
    expect(released, 'release waits for the last message').toBe(false);
    expect(announcing.names).toEqual(['p-s-RUN-1.jsonl.gz', 'p-s-RUN-2.jsonl.gz']);
    announcing.settle(false);
    await announcing.called(3);
    announcing.settle(false);
    await release;
    await files.abort();
    expect(readdirSync(config.directory)).toEqual(['p-s-RUN-1.jsonl.gz']);
  });

  it('keeps the set of files under their temporary names, for removal if the run is stopped', async () => {
    const partials = new Set<string>();
    const config = settings();
    const files = new BatchFiles(config, 's', 'RUN', () => undefined, partials);
    await write(files, 4);
    expect(partials.has(join(config.directory, 'p-s-RUN-2.jsonl.gz.partial'))).toBe(true);
    await files.finish();
    expect([...partials]).toEqual([]);
  });

  it('never overwrites a file of that name: the run fails naming the file', async () => {
    const config = settings();
    writeFileSync(join(config.directory, 'p-s-RUN-1.jsonl.gz.partial'), 'another run');
    const files = new BatchFiles(config, 's', 'RUN', () => undefined);
    await expect(async () => {
      await write(files, 4);
      await files.finish();
    }).rejects.toThrow(/Cannot write batch file .*p-s-RUN-1\.jsonl\.gz\.partial \(EEXIST\)/);
    await files.abort();
    expect(readFileSync(join(config.directory, 'p-s-RUN-1.jsonl.gz.partial'), 'utf8')).toBe('another run');
  });

  it('held back, fails the pass naming a file that is gone (another run took this one for dead) before anything is announced; abort removes the rest', async () => {
    const config = settings();
    const announced: string[] = [];
    const files = new BatchFiles(config, 's', 'RUN', (url) => announced.push(url), new Set(), true);
    await write(files, 7);
    const first = join(config.directory, 'p-s-RUN-1.jsonl.gz');
    for (let i = 0; i < 100 && !existsSync(first); i++) await sleep(10);
    rmSync(first);
    await expect(files.finish()).rejects.toThrow(/^Batch file .*p-s-RUN-1\.jsonl\.gz of the held full pass is gone: another run took this one for dead, its lease not renewed for minutes \(was the run paused\?\)\. The pass was stopped and nothing was deleted\.$/);
    await files.abort();
    expect(announced).toEqual([]);
    expect(readdirSync(config.directory)).toEqual([]);
  });
});
