import { readFileSync, statSync } from 'node:fs';
import { encodeKey, type GenerationExpectation, GenerationWriter } from '../../src/store/generation-file.js';

/** Rows as the change store takes them: training-like keys, hashes made from the row's number (and its version: another version, another content). */

export interface StoreRow {
  keyHi: number;
  keyLo: number;
  contentHi: number;
  contentLo: number;
  key: Buffer;
}

/** murmur3's finaliser: numbers to random-looking uint32. */
function mix(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

export function keyText(i: number): string {
  return `["usr-${String(Math.floor(i / 8)).padStart(7, '0')}","prog-01","mod-01-${String(i % 8).padStart(2, '0')}"]`;
}

export function row(i: number, version = 0): StoreRow {
  return { keyHi: mix(i ^ 0x51ed270b), keyLo: mix(i + 0x2545f491), contentHi: mix(i * 31 + version * 0x9e3779b1), contentLo: mix(i * 17 + version + 7), key: Buffer.from(keyText(i)) };
}

/** The permission bits of a file or folder. */
export function modeOf(path: string): number {
  return statSync(path).mode & 0o777;
}

/**
 * The umasks a test of modes runs under: 000 (the most open: a mode the tap
 * does not ask for shows) and 277 (takes even the owner's write bit: a mode
 * the tap does not set again after creating shows).
 */
export const UMASKS = [0o000, 0o277] as const;

export async function withUmask<T>(umask: number, work: () => Promise<T>): Promise<T> {
  const previous = process.umask(umask);
  try {
    return await work();
  } finally {
    process.umask(previous);
  }
}

export const EXPECT: GenerationExpectation = { stream: 'training', fingerprint: 'fp-1' };

/** The hashes of rows as the file holds them; undefined: a dead entry (zeros). */
export function hashesOf(rows: ReadonlyArray<StoreRow | undefined>): Uint32Array {
  const words = new Uint32Array(rows.length * 4);
  rows.forEach((r, i) => words.set(r === undefined ? [0, 0, 0, 0] : [r.keyHi, r.keyLo, r.contentHi, r.contentLo], i * 4));
  return words;
}

/** Keys as key entries (u16 length, key). */
export function keyEntries(keys: readonly Buffer[]): Buffer {
  const block = Buffer.alloc(keys.reduce((sum, key) => sum + 2 + key.length, 0));
  keys.reduce((at, key) => encodeKey(block, at, key), 0);
  return block;
}

/** Writes a generation file of `rows` (undefined: a dead entry, its key `["dead-<n>"]`). */
export async function writeGenerationFile(path: string, rows: ReadonlyArray<StoreRow | undefined>, origin: GenerationExpectation & { parent?: string | null } = EXPECT): Promise<void> {
  const dead = rows.filter((r) => r === undefined).length;
  const writer = await GenerationWriter.create(path, { parent: null, ...origin, rows: rows.length - dead, dead });
  await writer.hashes(hashesOf(rows), rows.length);
  await writer.keys(keyEntries(rows.map((r, i) => r?.key ?? Buffer.from(`["dead-${i}"]`))), rows.length);
  await writer.complete();
}

/** Where a generation file's keys section starts and how long it is, from its header (format 1 has no repeats). */
export function keysSectionOf(path: string): { at: number; length: number } {
  const bytes = readFileSync(path);
  const end = bytes.indexOf(10);
  const header = JSON.parse(bytes.toString('utf8', 0, end)) as { rows: number; dead: number; repeats?: number; keys_bytes: number };
  return { at: end + 1 + (header.rows + header.dead) * 16 + (header.repeats ?? 0) * 8, length: header.keys_bytes };
}
