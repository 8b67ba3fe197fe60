import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { normaliseBaseUrl, storeRoot, streamFolder, tenantFolder, tenantName } from '../../src/store/store-directory.js';

describe('storeRoot', () => {
  it('is the setting store_directory when set, made absolute', () => {
    expect(storeRoot('/srv/tap-store', { XDG_STATE_HOME: '/x', HOME: '/home/a' })).toBe('/srv/tap-store');
    expect(storeRoot('relative/store', {})).toBe(resolve('relative/store'));
  });

  it('is $XDG_STATE_HOME/tap-report-dump, else ~/.local/state/tap-report-dump', () => {
    expect(storeRoot(undefined, { XDG_STATE_HOME: '/var/state', HOME: '/home/a' })).toBe('/var/state/tap-report-dump');
    expect(storeRoot(undefined, { HOME: '/home/a' })).toBe('/home/a/.local/state/tap-report-dump');
    expect(storeRoot('', { XDG_STATE_HOME: '', HOME: '/home/a' })).toBe('/home/a/.local/state/tap-report-dump');
  });

  it('ignores a relative XDG_STATE_HOME, as the XDG rules say', () => {
    expect(storeRoot(undefined, { XDG_STATE_HOME: 'state', HOME: '/home/a' })).toBe('/home/a/.local/state/tap-report-dump');
  });

  it('says, in one sentence naming the setting, why there is none when neither variable names an absolute path', () => {
    const none = storeRoot(undefined, { XDG_STATE_HOME: 'state', HOME: '' });
    expect(none).toEqual({ unwritable: expect.stringMatching(/^The change store has no folder: .*XDG_STATE_HOME.*HOME.*set store_directory to a folder this user can write\.$/) });
  });
});

describe('the tenant folder', () => {
  it('is the same for one tenant written differently: host case, a trailing slash, the default port', () => {
    const name = tenantName('https://api.example.com/v2');
    for (const same of ['https://API.Example.com/v2/', 'https://api.example.com:443/v2', 'https://api.example.com/v2//']) expect(tenantName(same)).toBe(name);
    expect(normaliseBaseUrl('HTTPS://API.example.com:443/v2/')).toBe('https://api.example.com/v2');
  });

  it('differs for another host, path, port or scheme, and names none of them (16 hex digits)', () => {
    const names = ['https://api.example.com', 'https://eu.example.com', 'https://api.example.com/v2', 'https://api.example.com:8443', 'http://api.example.com'].map(tenantName);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[0-9a-f]{16}$/);
    expect(tenantFolder('/store', 'https://api.example.com')).toBe(join('/store', names[0]));
  });
});

describe('streamFolder', () => {
  it('is the stream name for the tap\'s streams, and never leaves the tenant folder for any other name', () => {
    expect(streamFolder('/store/t', 'training')).toBe('/store/t/training');
    expect(streamFolder('/store/t', 'phishing_events-2')).toBe('/store/t/phishing_events-2');
    for (const name of ['..', '.', '../other', 'a/b', 'a\\b', '', 'naïve', '%41']) {
      const folder = streamFolder('/store/t', name);
      const inside = relative('/store/t', folder);
      expect(inside, name).not.toMatch(/^\.\.?$|\/|\\/);
      expect(inside.length, name).toBeGreaterThan(0);
    }
    expect(streamFolder('/store/t', '../x')).toBe('/store/t/%2E%2E%2Fx');
    // Names that differ stay apart.
    expect(streamFolder('/store/t', '%41')).not.toBe(streamFolder('/store/t', 'A'));
  });
});
