import { statSync } from 'node:fs';

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

/** Runs `work` with the umask at 000 (the most open): modes then come from the tap alone. */
export async function withOpenUmask<T>(work: () => Promise<T>): Promise<T> {
  const previous = process.umask(0o000);
  try {
    return await work();
  } finally {
    process.umask(previous);
  }
}
