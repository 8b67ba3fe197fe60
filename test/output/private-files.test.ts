import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makePrivateFolder } from '../../src/output/private-files.js';
import { tempFolder } from '../helpers/files.js';

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe('makePrivateFolder', () => {
  it('makes the folder and every missing parent owner-only (0700) whatever the umask, and leaves a folder that exists as it is', () => {
    const base = tempFolder('private-folder-');
    mkdirSync(join(base, 'kept'), { mode: 0o755 });
    const previous = process.umask(0o000);
    try {
      makePrivateFolder(join(base, 'kept', 'a', 'b'));
      makePrivateFolder(join(base, 'kept', 'a', 'b'));
    } finally {
      process.umask(previous);
    }
    expect(modeOf(join(base, 'kept', 'a'))).toBe(0o700);
    expect(modeOf(join(base, 'kept', 'a', 'b'))).toBe(0o700);
    expect(modeOf(join(base, 'kept'))).toBe(0o755);
  });
});
