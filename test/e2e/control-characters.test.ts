import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { runTap, stderrLines } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { recordsOf, schemasOf, type JsonObject, recordFields } from '../helpers/messages.js';
import { canonical } from '../helpers/records.js';
import { startTenantServer, type TenantDumps } from '../helpers/tenant-server.js';
import type { FakeServer } from '../helpers/fake-server.js';

/**
 * Served names with control characters (a line feed, a tab, NUL, a C1
 * control, a zero-width space) never reach SCHEMA or RECORD messages, nor a
 * warehouse's columns: each run of them becomes one space and the name is
 * trimmed, with one warning at discovery naming the field escaped; the
 * same rule maps the served names at sync, so a catalog keeps matching when
 * the service sends the name with another control character; a field the
 * catalog does not declare is reported under its clean name; two names that
 * clean to one stop discovery with exit code 2.
 */

const servers: FakeServer[] = [];

beforeAll(async () => {
  await ensureBuilt();
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

/** Training records under served names; `completedAt`, `score`, `email` and `progress` in names with control characters. */
function training(names: { completedAt: string; score: string; email: string; progress: string; extra?: string }): JsonObject[] {
  return [0, 1, 2].map((i) =>
    Object.fromEntries([
      ['userId', `u-${i}`],
      ['programId', 'p-1'],
      ['moduleId', 'm-1'],
      [names.completedAt, `2025-03-0${1 + i}T10:00:00Z`],
      [names.score, 80 + i],
      [names.email, `person.${i}@example.com`],
      [names.progress, 100],
      ...(names.extra ? [[names.extra, 'x']] : []),
    ]),
  );
}

const PHISHING = [{ userId: 'u-1', campaignId: 'c-1', sentAt: '2025-05-01T09:00:00Z' }];
const SERVED = { completedAt: 'Completed\nAt', score: 'Sc\u0085ore', email: '\u0000email', progress: 'Pro\tgress' };
const CLEAN = { completedAt: 'Completed At', score: 'Sc ore', email: 'email', progress: 'Pro gress' };

async function tenant(dumps: TenantDumps): Promise<FakeServer> {
  const server = await startTenantServer(dumps);
  servers.push(server);
  return server;
}

describe.concurrent('served names with control characters', () => {
  it.each(['jsonl', 'csv'] as const)('%s: discover cleans them with a warning each; sync emits them clean; another control character in the same place still matches the catalog', async (format) => {
    const dumps: TenantDumps = { training: training(SERVED), phishing: PHISHING };
    const server = await tenant(dumps);
    const config = writeTempJson({ base_url: server.url, access_token: 'tok-anything', format });
    const discovered = await runTap(['discover', '--config', config]);
    expect(discovered.code, discovered.stderr).toBe(0);
    const catalog = JSON.parse(discovered.stdout) as { streams: Array<{ stream: string; replication_key: string; schema: { properties: JsonObject } }> };
    const entry = catalog.streams.find((s) => s.stream === 'training')!;
    expect(Object.keys(entry.schema.properties)).toEqual(['userId', 'programId', 'moduleId', ...Object.values(CLEAN)]);
    expect(entry.replication_key).toBe('Completed At');
    expect(entry.schema.properties['Sc ore']).toMatchObject({ type: ['number', 'null'] });
    expect(stderrLines(discovered, /with control or invisible characters/)).toEqual([
      expect.stringContaining('training: the service names a field "Completed\\u000aAt", with control or invisible characters; it is called "Completed At" in the catalog'),
      expect.stringContaining('"Sc\\u0085ore"'),
      expect.stringContaining('"\\u0000email"'),
      expect.stringContaining('"Pro\\u0009gress"'),
    ]);

    const catalogPath = writeTempJson(catalog);
    const expected = training(CLEAN).map(canonical).sort();
    const first = await runTap(['sync', '--config', config, '--catalog', catalogPath]);
    expect(first.code, first.stderr).toBe(0);
    expect(recordsOf(first.messages, 'training').map(canonical).sort()).toEqual(expected);
    expect(recordFields(schemasOf(first.messages, 'training')[0])).toEqual(Object.keys(entry.schema.properties));

    dumps.training = training({ completedAt: 'Completed\r\nAt', score: 'Sc\u200bore', email: 'email\u0000', progress: 'Pro\u001bgress' });
    const second = await runTap(['sync', '--config', config, '--catalog', catalogPath]);
    expect(second.code, second.stderr).toBe(0);
    expect(recordsOf(second.messages, 'training').map(canonical).sort()).toEqual(expected);
    expect(second.stderr).not.toMatch(/does not declare/);
  });

  it.each(['jsonl', 'csv'] as const)('%s: a field the catalog does not declare is reported by its clean name, and schema_drift fail stops on it', async (format) => {
    const dumps: TenantDumps = { training: training(CLEAN), phishing: PHISHING };
    const server = await tenant(dumps);
    const catalog = JSON.parse((await runTap(['discover', '--config', writeTempJson({ base_url: server.url, access_token: 'tok-anything', format })])).stdout) as JsonObject;
    dumps.training = training({ ...CLEAN, extra: 'Depart\u0007ment\n' });
    const warned = await runTap(['sync', '--config', writeTempJson({ base_url: server.url, access_token: 'tok-anything', format }), '--catalog', writeTempJson(catalog)]);
    expect(warned.code, warned.stderr).toBe(0);
    expect(stderrLines(warned, /does not declare/)).toEqual([expect.stringContaining('training: the service sends field "Depart ment", which the stream\'s schema does not declare')]);
    expect(recordsOf(warned.messages, 'training').every((r) => Object.keys(r).every((k) => !/[\u0000-\u001f]/.test(k)))).toBe(true);
    const failed = await runTap(['sync', '--config', writeTempJson({ base_url: server.url, access_token: 'tok-anything', format, schema_drift: 'fail' }), '--catalog', writeTempJson(catalog)]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('training: the service sends field "Depart ment", which the catalog does not declare (schema_drift: fail).');
  });

  it('two served names that clean to one name stop discovery with exit code 2, naming both escaped', async () => {
    const server = await tenant({ training: training({ ...CLEAN, extra: 'Sc ore\u0000' }), phishing: PHISHING });
    const run = await runTap(['discover', '--config', writeTempJson({ base_url: server.url, access_token: 'tok-anything' })]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n').at(-1)).toBe(
      'tap-report-dump: error: The training dump sends the fields "Sc ore" and "Sc ore\\u0000", which are both named "Sc ore" once control characters are cleaned (or the same name twice), so their values could not be told apart. Ask the service to rename one of them.',
    );
  });
});
