import { describe, expect, it } from 'vitest';
import { redirectTarget } from '../../src/http/responses.js';

const FROM = new URL('https://api.example.com/public/v1/report/training/dump.jsonl?filter%5Bemail%5D=alice%40example.com');

describe('redirectTarget: where a redirect points, as its error shows it', () => {
  it('keeps scheme, host and path; leaves out the query and the fragment', () => {
    expect(redirectTarget('https://moved.example.com:8443/v2/dump.jsonl?filter%5Bemail%5D=alice%40example.com#top', FROM)).toBe('https://moved.example.com:8443/v2/dump.jsonl');
  });

  it('resolves a relative Location against the request', () => {
    expect(redirectTarget('/login?next=%2Fpublic%2Fv1%3Ffilter%5Bemail%5D%3Dalice', FROM)).toBe('https://api.example.com/login');
  });

  it('leaves out user info a Location carries', () => {
    expect(redirectTarget('https://user:secret@moved.example.com/dump', FROM)).toBe('https://moved.example.com/dump');
  });

  it('a Location that is no URL: its text before any query or fragment', () => {
    expect(redirectTarget('http://[bad?x=alice', FROM)).toBe('http://[bad');
  });

  it('no Location: nothing', () => {
    expect(redirectTarget(undefined, FROM)).toBeUndefined();
  });
});
