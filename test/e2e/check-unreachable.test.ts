import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SilentServer, startSilentServer } from '../helpers/silent-server.js';
import { ensureBuilt } from '../helpers/build.js';
import { runTap, type TapRun } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { expectNoSecret, secretToken } from '../helpers/resilience-util.js';
import { closedPort } from '../helpers/fake-server.js';

/**
 * `check` on both faces answers within seconds when the service cannot be
 * reached: one attempt per stream, no backoff, at most 5 s for the
 * connection and the headers (request_timeout left at its 300 s default, and
 * max_retries and backoff_base at theirs), and a sentence naming the cause.
 */

const TOKEN = secretToken('check-unreachable');

let silent: SilentServer;

beforeAll(async () => {
  await ensureBuilt();
  silent = await startSilentServer();
});

afterAll(() => silent.close());

/** The run and how long it took, for a check of `base_url` on a face. */
async function timedCheck(face: 'singer' | 'airbyte', baseUrl: string): Promise<{ run: TapRun; elapsed: number }> {
  const config = writeTempJson({ base_url: baseUrl, access_token: TOKEN });
  const started = Date.now();
  // Killed after 30 s: before the change, a closed port took about a minute of retries.
  const run = await runTap(face === 'singer' ? ['check', '--config', config] : ['airbyte', 'check', '--config', config], { timeoutMs: 30_000 });
  return { run, elapsed: Date.now() - started };
}

function singerLines(run: TapRun): string[] {
  return run.stdout.split('\n').filter((line) => line !== '');
}

/** The CONNECTION_STATUS of an Airbyte check: its last message on stdout, after LOG messages only. */
function connectionStatus(run: TapRun): { status: string; message: string } {
  const messages = run.stdout.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { type: string; connectionStatus?: { status: string; message: string } });
  expect(messages.map((m) => m.type)).toEqual([...messages.slice(0, -1).map(() => 'LOG'), 'CONNECTION_STATUS']);
  return messages.at(-1)!.connectionStatus!;
}

const CASES = [
  {
    what: 'a host name that does not resolve',
    baseUrl: async () => 'https://report-dump.invalid',
    sentence: () => /the host name report-dump\.invalid does not resolve \((ENOTFOUND|EAI_AGAIN)\)\. Check base_url, and that this machine reaches the service\./,
    withinMs: 5000,
  },
  {
    what: 'a closed port',
    baseUrl: async () => `http://127.0.0.1:${await closedPort()}`,
    sentence: (url: string) => new RegExp(`nothing accepts connections at ${url.replace('http://', '').replace(/\./g, '\\.')} \\(ECONNREFUSED\\)\\. Check base_url, and that this machine reaches the service\\.`),
    withinMs: 5000,
  },
  {
    what: 'a server that accepts and never answers',
    baseUrl: async () => silent.url,
    sentence: (url: string) => new RegExp(`${url.replace('http://', '').replace(/\./g, '\\.')} did not answer within 5 s \\(check waits at most 5 s, or request_timeout when shorter\\)\\. Check base_url, and that the service is up\\.`),
    // Both streams wait at once: one 5 s wait, not one per stream.
    withinMs: 9000,
  },
];

describe.concurrent('check against a service that cannot be reached answers within seconds, naming the cause', () => {
  for (const { what, baseUrl, sentence, withinMs } of CASES) {
    it(`tap-report-dump check, ${what}: exit 1, every stream FAILED with the cause, no retry`, async () => {
      const url = await baseUrl();
      const { run, elapsed } = await timedCheck('singer', url);
      expect(run.code, run.stderr).toBe(1);
      const lines = singerLines(run);
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(new RegExp(`^training: FAILED - training dump: ${sentence(url).source}$`));
      expect(lines[1]).toMatch(new RegExp(`^phishing: FAILED - phishing dump: ${sentence(url).source}$`));
      expect(run.stderr).not.toMatch(/retry/);
      expect(elapsed).toBeLessThan(withinMs);
      expectNoSecret(run, TOKEN, what);
    });

    it(`the Airbyte face (source-report-dump) check, ${what}: CONNECTION_STATUS FAILED with the cause for every stream, exit 0, no retry`, async () => {
      const url = await baseUrl();
      const { run, elapsed } = await timedCheck('airbyte', url);
      expect(run.code, run.stderr).toBe(0);
      const status = connectionStatus(run);
      expect(status.status).toBe('FAILED');
      expect(status.message).toMatch(new RegExp(`^training: training dump: ${sentence(url).source}; phishing: phishing dump: ${sentence(url).source}$`));
      expect(run.stdout + run.stderr).not.toMatch(/retry/);
      expect(elapsed).toBeLessThan(withinMs);
      expectNoSecret(run, TOKEN, what);
    });
  }
});
