import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makePrivateFolder } from '../../src/output/private-files.js';
import { tempFolder } from '../helpers/files.js';

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe('makePrivateFolder', () => {
  it('makes the folder and every missing parent owner-only (0700) whatever the umask (000, or 277 that takes even the owner\'s write bit), and leaves a folder that exists as it is', () => {
    for (const umask of [0o000, 0o277]) {
      const base = tempFolder('private-folder-');
      mkdirSync(join(base, 'kept'), { mode: 0o755 });
      const previous = process.umask(umask);
      try {
        makePrivateFolder(join(base, 'kept', 'a', 'b'));
        makePrivateFolder(join(base, 'kept', 'a', 'b'));
      } finally {
        process.umask(previous);
      }
      expect(modeOf(join(base, 'kept', 'a')), `umask ${umask.toString(8)}`).toBe(0o700);
      expect(modeOf(join(base, 'kept', 'a', 'b')), `umask ${umask.toString(8)}`).toBe(0o700);
      expect(modeOf(join(base, 'kept'))).toBe(0o755);
    }
  });
});
