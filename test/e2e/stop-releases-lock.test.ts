import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { startTap, waitFor } from '../helpers/cli.js';
import { tempFolder, writeTempJson } from '../helpers/files.js';
import { startTestSandbox, tapConfig } from '../helpers/sandbox.js';

/** A run stopped by a signal lets go of the change store's lock it holds: the next run starts without taking over a dead run's lock. */

/** The change store's lock files under `folder`. */
function locks(folder: string): string[] {
  return (readdirSync(folder, { recursive: true }) as string[]).filter((name) => name === 'lock' || name.endsWith('/lock')).map((name) => join(folder, name));
}

describe('a stop by signal with the change store', () => {
  it('releases the stream\'s lock before the process dies of the signal', async () => {
    await ensureBuilt();
    const slow = await startTestSandbox({ trainingRecords: 3000, phishingRecords: 10, faults: { bodyBytesPerSecond: 100_000 } });
    try {
      const store = tempFolder('tap-store-');
      const config = writeTempJson({ ...tapConfig(slow), discovery: 'packaged', send_changes_only: true, store_directory: store });
      const tap = startTap(['--config', config]);
      await waitFor(() => locks(store).length > 0, 'the run takes the lock of its first stream');
      tap.kill('SIGTERM');
      const [code, signal] = await tap.closed;
      expect({ code, signal }, tap.stderr()).toEqual({ code: null, signal: 'SIGTERM' });
      expect(tap.stderr()).toMatch(/stopping for SIGTERM/);
      expect(locks(store)).toEqual([]);
    } finally {
      await slow.close();
    }
  });
});
