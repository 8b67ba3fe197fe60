import { describe, expect, it } from 'vitest';
import { BOOLEAN_WORDS, booleanWordBytes } from '../../src/records/fields.js';

/** The reference: the text lower-cased and looked up, as the object path reads a boolean. */
function byText(text: string): boolean | undefined {
  return BOOLEAN_WORDS.get(text.toLowerCase());
}

describe('boolean words read on bytes', () => {
  it('reads every word in every case as the object path does', () => {
    for (const word of BOOLEAN_WORDS.keys()) {
      const variants = [word, word.toUpperCase(), word[0].toUpperCase() + word.slice(1), [...word].map((c, k) => (k % 2 ? c.toUpperCase() : c)).join('')];
      for (const variant of variants) expect(booleanWordBytes(Buffer.from(`"${variant}"`), 1, variant.length + 1), variant).toBe(byText(variant));
    }
  });

  it('takes no other byte string of one or two bytes for a word (control bytes that OR to a digit included)', () => {
    for (let a = 0; a < 256; a++) {
      expect(booleanWordBytes(Uint8Array.of(a), 0, 1), String(a)).toBe(byText(String.fromCharCode(a)));
      for (let b = 0; b < 256; b++) {
        const text = String.fromCharCode(a, b);
        expect(booleanWordBytes(Uint8Array.of(a, b), 0, 2), `${a},${b}`).toBe(a < 128 && b < 128 ? byText(text) : undefined);
      }
    }
    expect(booleanWordBytes(Buffer.from('truey'), 0, 5)).toBeUndefined();
    expect(booleanWordBytes(Buffer.from(''), 0, 0)).toBeUndefined();
  });
});
