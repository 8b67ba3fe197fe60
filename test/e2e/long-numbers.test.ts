import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { syncOk } from '../helpers/cli.js';
import { tempFolder } from '../helpers/files.js';
import { lastState, recordsOf, type JsonObject } from '../helpers/messages.js';
import { passDue } from '../helpers/pass-due.js';
import { catalogOf } from '../helpers/resilience-util.js';
import { startTenantServer, type TenantDumps } from '../helpers/tenant-server.js';
import type { FakeServer } from '../helpers/fake-server.js';
import { KEEPS_LONG_NUMBERS } from '../../src/records/long-numbers.js';

/**
 * Numbers with more digits than a double keeps, end to end over real HTTP
 * (a tenant server writing them as raw JSON), in JSONL and CSV: the digits
 * the service sent reach the target in records, keys and delete records. On
 * a runtime without raw JSON (Node 20, unsupported) the tap reads them as
 * doubles, as before: these tests run on the supported lines.
 */

const servers: FakeServer[] = [];

beforeAll(async () => {
  await ensureBuilt();
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

/** A number written with exactly these digits (JSON.stringify and the tenant server's CSV cells keep them). */
const digits = (text: string): unknown => (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON(text);

const row = (fields: JsonObject): JsonObject => ({ programId: 'p', moduleId: 'm', completed: true, completedAt: '2025-06-01T10:00:00Z', progress: 5, ...fields });

async function tenant(training: JsonObject[]): Promise<{ server: FakeServer; dumps: TenantDumps }> {
  const dumps: TenantDumps = { training, phishing: [] };
  const server = await startTenantServer(dumps);
  servers.push(server);
  return { server, dumps };
}

const RECORD_LINES = (stdout: string): string[] => stdout.split('\n').filter((line) => line.startsWith('{"type":"RECORD"'));

describe.runIf(KEEPS_LONG_NUMBERS).concurrent.each(['jsonl', 'csv'] as const)('%s: numbers beyond 2^53', (format) => {
  it('in a string field (the documented userId) become the digits sent: ids a unit apart stay two rows', async () => {
    const { server } = await tenant([row({ userId: digits('12345678901234567801') }), row({ userId: digits('12345678901234567802') })]);
    const run = await syncOk({ config: { base_url: server.url, access_token: 't', format, send_changes_only: false }, catalog: catalogOf(['training']) });
    expect(recordsOf(run.messages, 'training').map((r) => r.userId)).toEqual(['12345678901234567801', '12345678901234567802']);
  });

  it('as a numeric key: records carry every digit, and a change pass deletes the leaver by its exact key', async () => {
    const rows = [row({ learner: digits('12345678901234567801') }), row({ learner: digits('12345678901234567802') })];
    const { server, dumps } = await tenant(rows);
    const config = { base_url: server.url, access_token: 't', format, key_properties: { training: ['learner', 'programId', 'moduleId'] }, store_directory: tempFolder('tap-store-') };
    // No catalog: the run learns the service's fields (learner among them) from its sample.
    const first = await syncOk({ config });
    const lines = RECORD_LINES(first.stdout);
    expect(lines.some((line) => line.includes('"learner":12345678901234567801'))).toBe(true);
    expect(lines.some((line) => line.includes('"learner":12345678901234567802'))).toBe(true);
    dumps.training = [rows[0]];
    const pass = await syncOk({ config, state: passDue(lastState(first.messages)) });
    const deletes = RECORD_LINES(pass.stdout).filter((line) => /"_sdc_deleted_at":"\d/.test(line));
    expect(deletes).toHaveLength(1);
    expect(deletes[0]).toContain('"learner":12345678901234567802,');
  });
});
