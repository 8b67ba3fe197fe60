import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { dumpLines, type DumpSource } from './dump-writer.js';
import type { DumpFormat } from '../src/catalog/reports.js';

export interface RenderedFile {
  readonly path: string;
  readonly size: number;
}

interface Entry {
  readonly version: number;
  readonly file: Promise<RenderedFile>;
}

/** Lines grouped into large strings, so file writes are few and big. */
function* chunked(lines: Iterable<string>, size = 256 * 1024): Generator<string> {
  let chunk = '';
  for (const line of lines) {
    chunk += line;
    if (chunk.length >= size) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}

/**
 * Unfiltered dumps rendered once per dataset version into temp files (not
 * memory) and served from disk; a data change makes the next request render anew.
 */
export class PrerenderCache {
  private dir: Promise<string> | null = null;
  private readonly entries = new Map<string, Entry>();

  private directory(): Promise<string> {
    this.dir ??= mkdtemp(join(tmpdir(), 'report-dump-sandbox-'));
    return this.dir;
  }

  /** The file for this stream, format and encoding at `source.snapshot`'s version. */
  file(stream: string, format: DumpFormat, gzip: boolean, source: DumpSource): Promise<RenderedFile> {
    const key = `${stream}.${format}${gzip ? '.gz' : ''}`;
    const version = source.snapshot.version;
    const existing = this.entries.get(key);
    if (existing && existing.version === version) return existing.file;
    if (existing && existing.version > version) {
      // The request holds an older snapshot than the cache: it is served live instead.
      return Promise.reject(new Error('stale snapshot'));
    }
    const file = this.render(`${key}.v${version}`, gzip, source);
    // Open read streams keep their data after unlink, so old versions can go at once.
    if (existing) void existing.file.then((f) => unlink(f.path)).catch(() => undefined);
    this.entries.set(key, { version, file });
    file.catch(() => {
      if (this.entries.get(key)?.file === file) this.entries.delete(key);
    });
    return file;
  }

  private async render(name: string, gzip: boolean, source: DumpSource): Promise<RenderedFile> {
    const path = join(await this.directory(), name);
    const lines = Readable.from(chunked(dumpLines(source)));
    if (gzip) await pipeline(lines, createGzip({ level: 1 }), createWriteStream(path));
    else await pipeline(lines, createWriteStream(path));
    return { path, size: (await stat(path)).size };
  }

  async close(): Promise<void> {
    if (this.dir) await rm(await this.dir, { recursive: true, force: true });
    this.entries.clear();
  }
}
