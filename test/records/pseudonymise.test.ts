import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Pseudonymiser, pseudonymText } from '../../src/records/pseudonymise.js';

const KEY = 'k'.repeat(32);
const hmac = (key: string, text: string): string => createHmac('sha256', key).update(text, 'utf8').digest('hex');

describe('keyed pseudonyms', () => {
  it('are the lowercase hex HMAC-SHA256 of the trimmed text, e-mail addresses lower-cased first', () => {
    const p = new Pseudonymiser(KEY);
    expect(p.pseudonym('  Zoë.Smith@Example.COM ')).toBe(hmac(KEY, 'zoë.smith@example.com'));
    expect(p.pseudonym('Zoë.Smith@example.com')).toBe(p.pseudonym('zoë.smith@EXAMPLE.com'));
    // Text without @ keeps its case: names and IDs are compared as written.
    expect(p.pseudonym(' Schröder ')).toBe(hmac(KEY, 'Schröder'));
    expect(p.pseudonym('E100042')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('hash other values as their JSON text, so JSONL numbers and CSV cells agree; null and the empty string stay null', () => {
    const p = new Pseudonymiser(KEY);
    expect(p.pseudonym(42)).toBe(p.pseudonym('42'));
    expect(p.pseudonym(true)).toBe(hmac(KEY, 'true'));
    expect(p.pseudonym({ a: 1 })).toBe(hmac(KEY, '{"a":1}'));
    expect(p.pseudonym(null)).toBeNull();
    expect(p.pseudonym('')).toBeNull();
    expect(pseudonymText(undefined)).toBeNull();
  });

  it('keep the domain of an e-mail address after the pseudonym of the whole address', () => {
    const p = new Pseudonymiser(KEY);
    expect(p.pseudonymKeepingDomain(' Ann@Example.com')).toBe(`${hmac(KEY, 'ann@example.com')}@example.com`);
    expect(p.pseudonymKeepingDomain('not an address')).toBe(hmac(KEY, 'not an address'));
    expect(p.pseudonymKeepingDomain(null)).toBeNull();
  });

  it('change with the key, and give the same results after the cache of recent values was emptied', () => {
    const a = new Pseudonymiser(KEY);
    const b = new Pseudonymiser('m'.repeat(32));
    expect(a.pseudonym('x@example.com')).not.toBe(b.pseudonym('x@example.com'));
    const first = a.pseudonym('x@example.com');
    for (let i = 0; i < 10_000; i++) a.pseudonym(`user${i}@example.com`);
    expect(a.pseudonym('x@example.com')).toBe(first);
    expect(a.pseudonym('user9999@example.com')).toBe(hmac(KEY, 'user9999@example.com'));
  });

  it('have a key id that changes with the key and is not the key', () => {
    const id = new Pseudonymiser(KEY).keyId();
    expect(id).not.toContain(KEY.slice(0, 8));
    expect(id).toBe(new Pseudonymiser(KEY).keyId());
    expect(id).not.toBe(new Pseudonymiser(`${KEY}x`).keyId());
  });
});
