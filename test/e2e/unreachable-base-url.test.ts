import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { runSource, runTap, stderrLines, type TapRun } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { closedPort } from '../helpers/fake-server.js';
import { airbyteMessages, discoveredStreams, incrementalCatalog } from '../helpers/airbyte.js';
import { catalogOf, errorLine, expectNoSecret, secretToken } from '../helpers/resilience-util.js';

/**
 * A wrong base_url (a host name that does not resolve, a port where nothing
 * listens) fails a sync, a discover and an Airbyte read after about
 * connect_retry_seconds (15 s by default), not after max_retries' 40-50 s of
 * backoff: one line naming the host, the cause, the tries and base_url, exit
 * 1. Raised, the setting keeps trying longer (a service that restarts).
 * These runs wait real seconds: they run at once.
 */

const TOKEN = secretToken('unreachable-base-url');
const DEFAULT_BUDGET_MS = 15_000;

/** Seconds a run may take past its budget: the start of node, the last try, the exit. */
const SLACK_MS = 5_000;

let closedUrl: string;
let configuredCatalog: string;

beforeAll(async () => {
  await ensureBuilt();
  closedUrl = `http://127.0.0.1:${await closedPort()}`;
  // A configured catalog from the packaged schemas: no request, so none that fails.
  const discovered = await runSource(['discover', '--config', writeTempJson({ base_url: closedUrl, access_token: TOKEN, discovery: 'packaged' })]);
  expect(discovered.code, discovered.stderr).toBe(0);
  configuredCatalog = writeTempJson(incrementalCatalog(discoveredStreams(discovered.stdout)), 'configured_catalog.json');
});

const CAUSES = [
  {
    what: 'a host name that does not resolve',
    baseUrl: () => 'https://report-dump.invalid',
    cause: () => /the host name report-dump\.invalid does not resolve \((ENOTFOUND|EAI_AGAIN)\)/,
  },
  {
    what: 'a closed port',
    baseUrl: () => closedUrl,
    cause: () => new RegExp(`nothing accepts connections at ${closedUrl.replace('http://', '').replace(/\./g, '\\.')} \\(ECONNREFUSED\\)`),
  },
];

type Command = 'tap-report-dump sync' | 'tap-report-dump discover' | 'source-report-dump read';
const COMMANDS: Command[] = ['tap-report-dump sync', 'tap-report-dump discover', 'source-report-dump read'];

async function timedRun(command: Command, config: Record<string, unknown>): Promise<{ run: TapRun; elapsed: number }> {
  const configPath = writeTempJson({ access_token: TOKEN, ...config });
  // Killed after 90 s: before the change, such a run took 40-50 s. Its time is mostly sleep: all runs start at once, each timed alone.
  // A store folder of its own: runs of one base_url would otherwise wait for each other's lock of a stream.
  const options = { timeoutMs: 90_000, mostlyWaits: true, env: { XDG_STATE_HOME: mkdtempSync(join(inject('tempRoot'), 'state-home-')) } };
  const started = Date.now();
  const run =
    command === 'tap-report-dump sync'
      ? await runTap(['sync', '--config', configPath, '--catalog', writeTempJson(catalogOf(['training', 'phishing']))], options)
      : command === 'tap-report-dump discover'
        ? await runTap(['discover', '--config', configPath], options)
        : await runSource(['read', '--config', configPath, '--catalog', configuredCatalog], options);
  return { run, elapsed: Date.now() - started };
}

/** The run's one error line: on stderr for the Singer face, the TRACE error's message for the Airbyte face. */
function failureLine(command: Command, run: TapRun): string {
  if (command !== 'source-report-dump read') return errorLine(run).replace(/^tap-report-dump: error: /, '');
  const trace = airbyteMessages(run.stdout).at(-1)?.trace as { type: string; error: { message: string; failure_type: string } } | undefined;
  expect(trace?.type, run.stdout.slice(-2000)).toBe('ERROR');
  expect(trace?.error.failure_type).toBe('transient_error');
  return trace!.error.message;
}

/** The warnings of its retries: on stderr (Singer), in LOG messages (Airbyte). */
function retryWarnings(run: TapRun): string[] {
  return stderrLines({ stderr: `${run.stderr}\n${run.stdout}` }, /training dump: connection failed .*; retry \d+ in [\d.]+ s \(connect_retry_seconds: /);
}

describe.concurrent('a base_url that cannot be reached fails within about connect_retry_seconds, saying what was tried', () => {
  it('raised (connect_retry_seconds 18, a service that restarts): a sync keeps trying longer than the default 15 s', { timeout: 120_000 }, async () => {
    const { run, elapsed } = await timedRun('tap-report-dump sync', { base_url: closedUrl, connect_retry_seconds: 18 });
    expect(run.code, run.stderr).toBe(1);
    expect(failureLine('tap-report-dump sync', run)).toMatch(/: tried \d+ times over 18(\.\d)? s \(connect_retry_seconds\)\. Check base_url/);
    expect(elapsed).toBeGreaterThanOrEqual(18_000);
    expect(elapsed).toBeLessThan(18_000 + SLACK_MS);
  });

  // One test a command, its two causes at once: vitest runs at most five tests of a file at a time.
  for (const command of COMMANDS) {
    it(`${command}, a host name that does not resolve and a closed port: exit 1 after about 15 s of retries, one line naming the cause, the tries and base_url`, { timeout: 120_000 }, async () => {
      await Promise.all(
        CAUSES.map(async ({ what, baseUrl, cause }) => {
          const { run, elapsed } = await timedRun(command, { base_url: baseUrl() });
          expect(run.code, `${what}: ${run.stderr}${run.stdout.slice(-2000)}`).toBe(1);
          expect(failureLine(command, run)).toMatch(
            new RegExp(
              `^training dump: ${cause().source}: tried \\d+ times over 15(\\.\\d)? s \\(connect_retry_seconds\\)\\. Check base_url, and that this machine reaches the service \\(its DNS, a firewall or a proxy\\); for a service that may be restarting, raise connect_retry_seconds\\.$`,
            ),
          );
          expect(retryWarnings(run).length, `${what}: it did retry`).toBeGreaterThanOrEqual(2);
          expect(elapsed, what).toBeGreaterThanOrEqual(DEFAULT_BUDGET_MS);
          expect(elapsed, what).toBeLessThan(DEFAULT_BUDGET_MS + SLACK_MS);
          expectNoSecret(run, TOKEN, `${command}, ${what}`);
        }),
      );
    });
  }
});
