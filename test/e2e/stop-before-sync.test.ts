import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SilentServer, startSilentServer } from '../helpers/silent-server.js';
import { ensureBuilt } from '../helpers/build.js';
import { startTap, waitFor } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { DEMO_TOKEN } from '../helpers/sandbox.js';

/**
 * A stop by signal while a command waits on the server outside the sync
 * (discovery before a sync of every stream, discover, check, on both faces)
 * leaves one warning line saying which signal and what it cut short, and the
 * process still dies of that signal.
 */

let silent: SilentServer;

beforeAll(async () => {
  await ensureBuilt();
  silent = await startSilentServer();
});

afterAll(() => silent.close());

/** Stdout's LOG messages (the Airbyte face's log) and stderr's lines: where a warning may be. */
function logLines(stdout: string, stderr: string): string[] {
  const logs = stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { type: string; log?: { level: string; message: string } })
    .filter((message) => message.type === 'LOG')
    .map((message) => `${message.log!.level} ${message.log!.message}`);
  return [...logs, ...stderr.split('\n')];
}

const CASES = [
  { command: 'sync of every stream (discovery first)', args: (config: string) => ['sync', '--config', config], doing: 'while discovering the streams, before the sync (nothing was synced; the state is unchanged)' },
  { command: 'discover', args: (config: string) => ['discover', '--config', config], doing: 'while discovering the streams (no catalog was written)' },
  { command: 'check', args: (config: string) => ['check', '--config', config], doing: 'while checking the streams (no result was written)' },
  { command: 'airbyte discover', args: (config: string) => ['airbyte', 'discover', '--config', config], doing: 'while discovering the streams (no catalog was sent)' },
  { command: 'airbyte check', args: (config: string) => ['airbyte', 'check', '--config', config], doing: 'while checking the connection (no CONNECTION_STATUS was sent)' },
];

describe('a stop by signal before the sync', () => {
  for (const { command, args, doing } of CASES) {
    it(`${command}: one warning line naming the signal and what it cut short, and death by the signal`, async () => {
      const before = silent.connections();
      const tap = startTap(args(writeTempJson({ base_url: silent.url, access_token: DEMO_TOKEN })));
      await waitFor(() => silent.connections() > before, 'the command connects to the server');
      tap.kill('SIGTERM');
      const [code, signal] = await tap.closed;
      expect({ code, signal }, tap.stderr()).toEqual({ code: null, signal: 'SIGTERM' });
      const stops = logLines(tap.stdout(), tap.stderr()).filter((line) => line.includes('stopping for'));
      expect(stops).toEqual([expect.stringMatching(new RegExp(`WARN.* stopping for SIGTERM ${doing.replace(/[()]/g, '\\$&')}$`))]);
    });
  }
});
