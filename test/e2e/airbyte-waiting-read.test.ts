import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SilentServer, startSilentServer } from '../helpers/silent-server.js';
import { ensureBuilt, SOURCE_CLI } from '../helpers/build.js';
import { runSource } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { startHeldTap } from '../helpers/held-stdout.js';
import { airbyteMessages, discoveredStreams, incrementalCatalog } from '../helpers/airbyte.js';

/**
 * An Airbyte read whose server accepts the request and never answers: the
 * platform sees the stream STARTED and the plan's LOG line while the read
 * waits, not only once a block of records fills (none ever comes). Stopped
 * by SIGTERM, the read ends the stream INCOMPLETE.
 */

let silent: SilentServer;

beforeAll(async () => {
  await ensureBuilt();
  silent = await startSilentServer();
});

afterAll(() => silent.close());

/** `promise`, or a failure naming `what` after `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not come within ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe('an Airbyte read waiting on a silent server', () => {
  it('has sent the stream\'s STARTED status and its plan line while it waits, and ends INCOMPLETE when stopped', async () => {
    const config = writeTempJson({ base_url: silent.url, access_token: 'waiting-read-token', discovery: 'packaged' });
    const discovered = await runSource(['discover', '--config', config]);
    expect(discovered.code, discovered.stderr).toBe(0);
    const catalog = writeTempJson(incrementalCatalog(discoveredStreams(discovered.stdout)));
    const tap = startHeldTap(['read', '--config', config, '--catalog', catalog], SOURCE_CLI);
    // The server never answers: what came, came while the read waited for it.
    await within(tap.holdAfter('"level":"INFO","message":"training: '), 10_000, 'the plan line of training');
    tap.resume();
    const waiting = airbyteMessages(tap.stdout());
    expect(waiting.find((m) => m.type === 'TRACE')?.trace?.stream_status).toEqual({ stream_descriptor: { name: 'training' }, status: 'STARTED' });
    expect(waiting.filter((m) => m.type === 'RECORD' || m.type === 'STATE')).toEqual([]);
    tap.kill('SIGTERM');
    expect(await tap.closed).toEqual([null, 'SIGTERM']);
    expect(airbyteMessages(tap.stdout()).at(-1)?.trace?.stream_status).toEqual({ stream_descriptor: { name: 'training' }, status: 'INCOMPLETE' });
  });
});
