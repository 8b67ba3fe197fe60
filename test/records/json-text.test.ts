import { describe, expect, it } from 'vitest';
import { integerBytes, isJsonDecimal, isJsonInteger, isStringifyEscaped, needsEscape } from '../../src/records/json-text.js';
import { pick, seeded } from '../helpers/random.js';

const bytes = (text: string): [Buffer, number, number] => {
  const buffer = Buffer.from(`xx${text}yy`);
  return [buffer, 2, buffer.length - 2];
};

/** Number texts of every shape: random digit strings, and numbers written by toString and toFixed across magnitudes. */
function numberTexts(seed: number, count: number): string[] {
  const random = seeded(seed);
  const texts = ['0', '-0', '0.5', '-0.5', '1.50', '01', '1.', '.5', '9999999999999999', '999999999999999', '0.0000001', '0.000001', '1e21', '1e5', '-', '', '-01', '123456789012345.6'];
  for (let k = 0; k < count; k++) {
    const length = 1 + Math.floor(random() * 20);
    let text = '';
    for (let c = 0; c < length; c++) text += pick(random, [...'0123456789.-']);
    texts.push(text);
    const n = (random() - 0.3) * 10 ** (Math.floor(random() * 40) - 20);
    texts.push(String(n), n.toFixed(Math.floor(random() * 10)), String(Math.round(n)));
  }
  return texts;
}

describe('bytes that already are JSON text', () => {
  it('a decimal is taken as canonical only when JSON.stringify writes it so', () => {
    let canonical = 0;
    for (const text of numberTexts(11, 20_000)) {
      if (!isJsonDecimal(...bytes(text))) continue;
      canonical++;
      expect(JSON.stringify(Number(text)), text).toBe(text);
    }
    expect(canonical).toBeGreaterThan(10_000);
  });

  it('an integer is taken as canonical only when it is safe and JSON.stringify writes it so, and its value is read right', () => {
    let canonical = 0;
    for (const text of numberTexts(12, 20_000)) {
      if (!isJsonInteger(...bytes(text))) continue;
      canonical++;
      expect(Number.isSafeInteger(Number(text)), text).toBe(true);
      expect(JSON.stringify(Number(text)), text).toBe(text);
      expect(integerBytes(...bytes(text))).toBe(Number(text));
    }
    expect(canonical).toBeGreaterThan(5_000);
  });

  it('a JSON string is taken as written by JSON.stringify exactly when it is', () => {
    const random = seeded(13);
    const alphabet = [...'ab"\\/ é😀', '\n', '\t', '\b', '\f', '\r', '\u0000', '\u001f', '\u007f', '\u2028', '\ud800'];
    /** Each character as JSON.stringify writes it, or escaped another way a service might. */
    const writings = (c: string): string[] => {
      const code = c.charCodeAt(0);
      const hex = (n: number): string => `\\u${n.toString(16).padStart(4, '0')}`;
      const forms = [JSON.stringify(c).slice(1, -1), hex(code), hex(code).toUpperCase().replace('\\U', '\\u')];
      if (c === '/') forms.push('\\/');
      if (c.length === 2) forms.push(hex(code) + hex(c.charCodeAt(1)));
      return forms;
    };
    let canonical = 0;
    for (let k = 0; k < 20_000; k++) {
      const chars = Array.from({ length: 1 + Math.floor(random() * 6) }, () => pick(random, alphabet));
      const text = `"${chars.map((c) => (random() < 0.7 ? JSON.stringify(c).slice(1, -1) : pick(random, writings(c)))).join('')}"`;
      // Lone surrogates, which JSON.stringify escapes, are left to it: the check may say no to those.
      const expected = JSON.stringify(JSON.parse(text)) === text && !text.includes('\\ud8');
      expect(isStringifyEscaped(...bytes(text)), text).toBe(expected);
      if (expected) canonical++;
    }
    expect(canonical).toBeGreaterThan(2_000);
    expect(canonical).toBeLessThan(18_000);
  });

  it('text needs escaping exactly when JSON.stringify would escape it', () => {
    for (const text of ['plain', 'é 小 😀', 'tab\there', 'quote"', 'back\\slash', '\u0001', '\u007f']) {
      expect(needsEscape(...bytes(text)), text).toBe(JSON.stringify(text) !== `"${text}"`);
    }
  });
});
