import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { configFormats } from '../../src/config/config-ajv.js';
import { pick, seeded } from '../helpers/random.js';

const { fullFormats } = createRequire(import.meta.url)('ajv-formats/dist/formats') as typeof import('ajv-formats/dist/formats.js');
const fullUri = fullFormats.uri as (value: string) => boolean;
const uri = configFormats().uri as (value: string) => boolean;

describe('the uri format of the config schema', () => {
  it('says what ajv-formats\' full uri format says on URLs of every shape', () => {
    const corpus = [
      'https://api.example.com', 'http://127.0.0.1:8080', 'http://127.0.0.1:8080/', 'https://API.Example.COM/base/v1', 'https://h:',
      'https://example.com/a b', 'https://exa mple.com', 'https://user:pw@example.com', 'https://[::1]:8080/x', 'https://example.com/?q=1',
      'https://example.com/#f', 'https://example.com/%41', 'https://example.com/%4', 'ftp://example.com', 'example.com', 'https:/x', 'https://',
      'https://ex_ample.com', 'https://example.com:80a', 'https://example.com/a/../b', 'http://example.com\n', 'mailto:a@b.c', '', 'https://é.com',
    ];
    for (const value of corpus) expect(uri(value), JSON.stringify(value)).toBe(fullUri(value));
  });

  it('agrees with it on random strings near the plain-URL shape', () => {
    const random = seeded(7);
    const parts = ['http', 'https', 'HTTPS', '://', ':/', '/', '//', ':', '8080', 'a', 'Z', '0', '.', '-', '_', '~', '%41', '%', '?', '#', '@', ' ', '[', ']', 'é', '\n', 'x.y'];
    for (let i = 0; i < 20_000; i++) {
      const value = (random() < 0.7 ? pick(random, ['http://', 'https://']) : '') + Array.from({ length: Math.floor(random() * 8) }, () => pick(random, parts)).join('');
      expect(uri(value), JSON.stringify(value)).toBe(fullUri(value));
    }
  });
});
