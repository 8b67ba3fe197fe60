import { describe, expect, it } from 'vitest';
import { sanitizeServerText } from '../../src/observe/sanitize.js';
import { Redactor, secretForms } from '../../src/observe/redact.js';

describe('server text is made safe to print', () => {
  it('drops terminal escape sequences with their parameters: title changes, cursor moves, screen clears, OSC 8 links', () => {
    expect(sanitizeServerText('a\u001b]0;pwned\u0007b')).toBe('ab');
    expect(sanitizeServerText('a\u001b[2J\u001b[1A\u001b[31mred\u001b[0mb')).toBe('aredb');
    expect(sanitizeServerText('\u001b]8;;https://evil.example\u001b\\click\u001b]8;;\u001b\\ here')).toBe('click here');
    expect(sanitizeServerText('lone \u001b escape')).toBe('lone escape');
  });

  it('drops C0 (but makes tab and line breaks spaces), DEL, C1 and the characters that reorder or hide text', () => {
    expect(sanitizeServerText('a\u0000b\u0007c\u0008d\u007fe\u0085f\u009bg')).toBe('abcdefg');
    expect(sanitizeServerText('line 1\r\nline 2\ttabbed')).toBe('line 1 line 2 tabbed');
    expect(sanitizeServerText('abc\u202edef\u2066g\u200bh\ufeffi')).toBe('abcdefghi');
  });

  it('keeps ordinary text, non-ASCII letters included, on one line and caps its length', () => {
    expect(sanitizeServerText('  Zoë 小林 😀  ok ')).toBe('Zoë 小林 😀 ok');
    const long = sanitizeServerText('x'.repeat(500), 300);
    expect(long).toHaveLength(300);
    expect(long.endsWith('…')).toBe(true);
    expect(sanitizeServerText('short', 300)).toBe('short');
  });
});

describe('the token is masked in every form a server may echo it', () => {
  const token = 'abc/def+ghi=JKL"mn\\o';
  const redactor = new Redactor();
  redactor.add(token);

  it.each([
    ['as it is', token],
    ['JSON-escaped', JSON.stringify(token).slice(1, -1)],
    ['JSON-escaped with \\/ (PHP)', JSON.stringify(token).slice(1, -1).replace(/\//g, '\\/')],
    ['URL-encoded', encodeURIComponent(token)],
    ['URL-encoded with lower-case hex', encodeURIComponent(token).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase())],
  ])('%s', (_label, form) => {
    const out = redactor.redact(`before ${form} after`);
    expect(out).toBe('before *** after');
  });

  it('inside base64 and base64url text, at any alignment, alone or with Bearer or the whole header', () => {
    for (const prefix of ['', 'x', 'xy', 'Bearer ', 'Authorization: Bearer ']) {
      for (const encoding of ['base64', 'base64url'] as const) {
        const encoded = Buffer.from(`${prefix}${token} trailing`).toString(encoding);
        const out = redactor.redact(encoded);
        expect(out, `${encoding} after ${JSON.stringify(prefix)}`).toContain('***');
        // What is left encodes at most the few bits that share a character with the text around the token.
        const inner = Buffer.from(token).toString(encoding).slice(2, -2);
        expect(out.includes(inner), `${encoding} after ${JSON.stringify(prefix)}`).toBe(false);
      }
    }
  });

  it('masks the longest form first, so no part of a longer secret stays visible', () => {
    const two = new Redactor();
    two.add('abcd');
    two.add('abcdefgh');
    expect(two.redact('x abcdefgh y abcd z')).toBe('x *** y *** z');
  });

  it('does not mask short encoded forms that would hit ordinary text', () => {
    expect(secretForms('abcd')).toEqual(['abcd']);
    expect(new Redactor().redact('nothing registered')).toBe('nothing registered');
  });
});
