import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/build.js';

/**
 * The layout's rules, checked on the source: the folders show the pipeline,
 * so who may import whom is part of the design (see README, Architecture).
 */

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** Project-relative paths of the project files a file imports (static and dynamic). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]);
  return specifiers.map((s) => relative(ROOT, resolve(dirname(file), s.replace(/\.js$/, '.ts'))));
}

const files = [...sources(join(ROOT, 'src')), ...sources(join(ROOT, 'sandbox'))];
const graph = new Map(files.map((f) => [relative(ROOT, f), importsOf(f)]));

function importers(of: (target: string) => boolean, from: (file: string) => boolean): string[] {
  return [...graph].filter(([file, targets]) => from(file) && targets.some(of)).map(([file]) => file);
}

const under = (folder: string) => (path: string) => path.startsWith(folder);

describe('the layout', () => {
  it('reads every import it checks (the graph is not empty and every target exists)', () => {
    expect(graph.size).toBeGreaterThan(40);
    for (const [file, targets] of graph) for (const target of targets) expect(graph.has(target), `${file} imports ${target}`).toBe(true);
  });

  it('has no import circles', () => {
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') return void circles.push([...path.slice(path.indexOf(file)), file].join(' -> '));
      state.set(file, 'open');
      for (const target of graph.get(file) ?? []) visit(target, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of graph.keys()) visit(file, []);
    expect(circles).toEqual([]);
  });

  it('keeps the sandbox out of the tap: only the entry points in src/bin may import it', () => {
    expect(importers(under('sandbox/'), (f) => f.startsWith('src/') && !f.startsWith('src/bin/'))).toEqual([]);
  });

  it('keeps the two faces apart: neither the Singer nor the Airbyte face imports the other', () => {
    expect(importers(under('src/singer/'), under('src/airbyte/'))).toEqual([]);
    expect(importers(under('src/airbyte/'), under('src/singer/'))).toEqual([]);
  });

  it('keeps the core protocol-neutral: nothing below the faces imports a face or an entry point', () => {
    const face = (path: string) => ['src/singer/', 'src/airbyte/', 'src/bin/'].some((folder) => path.startsWith(folder));
    expect(importers(face, (f) => f.startsWith('src/') && !face(f))).toEqual([]);
  });

  it('lets data flow one way: records know nothing of the sync engine, the HTTP client or the output', () => {
    const later = (path: string) => ['src/sync/', 'src/http/', 'src/output/'].some((folder) => path.startsWith(folder));
    expect(importers(later, under('src/records/'))).toEqual([]);
    expect(importers(under('src/sync/'), (f) => ['src/http/', 'src/output/', 'src/catalog/', 'src/config/'].some((folder) => f.startsWith(folder)))).toEqual([]);
  });
});
