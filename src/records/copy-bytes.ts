/**
 * Buffer.copy for the short ranges an encoder copies (a value, a name, an
 * envelope's tail): below about 32 bytes a loop costs less than the call.
 */
export function copyBytes(source: Buffer, start: number, end: number, out: Buffer, p: number): number {
  if (end - start > 32) return p + source.copy(out, p, start, end);
  for (let i = start; i < end; i++) out[p++] = source[i];
  return p;
}

/** The members an encoder adds to a record when the envelope adds none. */
export const NO_MEMBERS = Buffer.alloc(0);
