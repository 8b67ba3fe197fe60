import { describe, expect, it } from 'vitest';
import { refusedRead } from '../../../src/sync/read/refused-read.js';
import { planRun, type ReadPlan } from '../../../src/sync/plan/read-plans.js';
import { HttpStatusError } from '../../../src/http/responses.js';
import { resolveConfig, type Config } from '../../../src/config/config.js';
import { createLogger } from '../../../src/observe/log.js';
import { discoverStreams } from '../../../src/catalog/discovery.js';
import { defaultSelection } from '../../../src/catalog/selection.js';
import type { StreamBookmark } from '../../../src/state.js';

/** A read the service answered 400: the open rows' read is gone without; any other names only the settings the user set. */

const NOW = Date.UTC(2026, 5, 15, 12);
const training = defaultSelection(discoverStreams({})).find((s) => s.descriptor.name === 'training')!;
const LOADED: StreamBookmark = { replication_key: 'completedAt', replication_key_value: '2026-06-02T10:00:00Z', full_pass: { at: '2026-06-14T00:00:00Z', version: 7, rows: 100 } };

function config(extra: Record<string, unknown> = {}): Config {
  return resolveConfig({ base_url: 'http://127.0.0.1:1', access_token: 't', ...extra });
}

function reads(settings: Config, previous: StreamBookmark | undefined): ReadPlan[] {
  return [...planRun(training, settings, previous, NOW, true).reads];
}

const refusal = (): HttpStatusError => new HttpStatusError('training dump: HTTP 400 Bad Request: the server rejected the request with filter[completed]. The server said: completed is unsupported here.', 400, 'completed is unsupported here');

function refuse(plan: ReadPlan, settings: Config): { error?: Error; warnings: string[] } {
  const warnings: string[] = [];
  const logger = createLogger({ format: 'json', write: (line) => void warnings.push((JSON.parse(line) as { message: string }).message) });
  try {
    refusedRead(refusal(), plan, training, settings, logger);
    return { warnings };
  } catch (error) {
    return { error: error as Error, warnings };
  }
}

describe('a refused read', () => {
  it('of the open rows: the run goes on without it, with one warning naming refresh_open_rows and no setting the user did not set', () => {
    const settings = config();
    const openRows = reads(settings, LOADED).find((plan) => plan.kind === 'open_rows')!;
    const { error, warnings } = refuse(openRows, settings);
    expect(error).toBeUndefined();
    expect(warnings).toEqual([
      'training: the service refused the read of the open rows with HTTP 400; this run goes on without it, so rows still open are not refreshed, and full passes delete nothing while this lasts. If the service has no such filter, set refresh_open_rows to false to stop asking.',
    ]);
    // The server's words may quote a configured filter value: they stay out of the log.
    expect(warnings.join('')).not.toContain('unsupported');
  });

  it('of the open rows, with start_date set: the warning says what turning the read off means then', () => {
    const settings = config({ start_date: '2025-01-01' });
    const openRows = reads(settings, LOADED).find((plan) => plan.kind === 'open_rows')!;
    expect(refuse(openRows, settings).warnings[0]).toMatch(/set refresh_open_rows to false to stop asking: with start_date, a full pass then holds only completed rows, and a row reopened after it was loaded leaves the target until it completes again\.$/);
  });

  it('of the new records: fails the run, naming the date filter as the tap\'s own when the user set nothing', () => {
    const settings = config();
    const { error, warnings } = refuse(reads(settings, LOADED)[0], settings);
    expect(warnings).toEqual([]);
    expect(error).toBeInstanceOf(HttpStatusError);
    expect(error!.message).toMatch(/The server said: completed is unsupported here\. filter\[completedAt\] is the tap's own, from the bookmark in the state\.$/);
    expect(error!.message).not.toMatch(/start_date|filters\.training|filter_date_format/);
  });

  it('names the settings the user set that shaped it: configured filters, start_date on a first run, a date format', () => {
    const settings = config({ start_date: '2025-01-01', filters: { training: { program: 'prog-01' } }, filter_date_format: 'date' });
    const { error } = refuse(reads(settings, undefined)[0], settings);
    expect(error!.message).toMatch(/Check filters\.training\.program, start_date, filter_date_format\.$/);
  });

  it('passes anything but a 400 through as it is', () => {
    const settings = config();
    const other = new HttpStatusError('training dump: HTTP 401 Unauthorized', 401);
    expect(() => refusedRead(other, reads(settings, LOADED)[1], training, settings, createLogger({ write: () => undefined }))).toThrow(other);
    const plain = new Error('socket hang up');
    expect(() => refusedRead(plain, reads(settings, LOADED)[1], training, settings, createLogger({ write: () => undefined }))).toThrow(plain);
  });
});
