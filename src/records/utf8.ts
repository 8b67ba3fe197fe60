import { isUtf8 } from 'node:buffer';

/**
 * Validates UTF-8 across chunk boundaries: a multi-byte character may be split
 * between two chunks, so up to three trailing bytes wait for the next chunk.
 */
export class Utf8Validator {
  private carry: Buffer | undefined;
  bytesChecked = 0;

  /** Returns false when the bytes so far cannot be UTF-8. */
  push(chunk: Buffer): boolean {
    const buffer = this.carry ? Buffer.concat([this.carry, chunk]) : chunk;
    let cut = buffer.length;
    // Step back over an incomplete trailing sequence (at most 3 bytes).
    for (let back = 1; back <= 3 && back <= buffer.length; back++) {
      const byte = buffer[buffer.length - back];
      if ((byte & 0xc0) !== 0x80) {
        const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
        if (need > back) cut = buffer.length - back;
        break;
      }
    }
    const ok = isUtf8(buffer.subarray(0, cut));
    this.bytesChecked += cut;
    this.carry = cut < buffer.length ? Buffer.from(buffer.subarray(cut)) : undefined;
    return ok;
  }

  end(): boolean {
    return this.carry === undefined;
  }
}
