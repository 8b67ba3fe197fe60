import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { runSource, runTap, syncOk, syncTap } from '../helpers/cli.js';
import { writeTempJson, writeTempText } from '../helpers/files.js';
import { recordMessages } from '../helpers/messages.js';
import { type Sandbox, startTestSandbox, tapConfig } from '../helpers/sandbox.js';

/**
 * Input files as hands and editors leave them. A config, catalog and state
 * saved with a byte-order mark (Windows editors) sync as without one; an
 * empty config says it is empty. A catalog edited by hand with a wrong type deep inside (a metadata entry or
 * a property schema set to null, a key list of numbers) fails as the
 * catalog's fault on both faces: one line naming the entry, the config exit
 * code, no request made. Before, each crashed deep in field selection as an
 * "unexpected error" (Singer) or a system_error TRACE (Airbyte).
 */

type Json = Record<string, unknown>;
let sandbox: Sandbox;

beforeAll(async () => {
  await ensureBuilt();
  sandbox = await startTestSandbox({ trainingRecords: 20, phishingRecords: 20 });
});

afterAll(() => sandbox.close());

async function discovered(face: 'singer' | 'airbyte'): Promise<{ streams: Json[] }> {
  const config = writeTempJson(tapConfig(sandbox));
  const run = face === 'singer' ? await runTap(['--config', config, '--discover']) : await runSource(['configured-catalog', '--config', config]);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as { streams: Json[] };
}

describe('a catalog with a wrong type deep inside', () => {
  it.each([
    ['a metadata entry null', (stream: Json) => ((stream.metadata as unknown[])[0] = null), 'streams[0].metadata[0] is not a {breadcrumb, metadata} object'],
    ['a property schema null', (stream: Json) => (((stream.schema as Json).properties as Json).completedAt = null), 'streams[0].schema.properties.completedAt is not a schema (an object)'],
    ['key_properties of numbers', (stream: Json) => (stream.key_properties = [1]), 'streams[0].key_properties is not a list of field names'],
  ])('singer sync, %s: exit 2, one line naming the entry, no request', async (_what, edit, problem) => {
    const catalog = await discovered('singer');
    edit(catalog.streams[0]);
    const requests = sandbox.requestCount;
    const run = await syncTap({ config: tapConfig(sandbox), catalog });
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^tap-report-dump: error: Catalog file \\S+: ${escape(problem)}\\. Regenerate the catalog with discover, or fix that entry\\.$`))]);
    expect(run.stdout).toBe('');
    expect(sandbox.requestCount).toBe(requests);
  });

  it('airbyte read, a property schema null: a config_error TRACE naming the entry, exit 2, no request', async () => {
    const catalog = await discovered('airbyte');
    const stream = catalog.streams[0].stream as Json;
    ((stream.json_schema as Json).properties as Json).completedAt = null;
    const requests = sandbox.requestCount;
    const run = await runSource(['read', '--config', writeTempJson(tapConfig(sandbox)), '--catalog', writeTempJson(catalog)]);
    expect(run.code).toBe(2);
    const traces = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; trace?: { error?: { message: string; failure_type: string } } }).filter((message) => message.type === 'TRACE' && message.trace?.error);
    expect(traces.map((message) => message.trace!.error!.failure_type)).toEqual(['config_error']);
    expect(traces[0].trace!.error!.message).toMatch(/streams\[0\]\.stream\.json_schema\.properties\.completedAt is not a schema \(an object\)\./);
    expect(sandbox.requestCount).toBe(requests);
  });
});

describe('files saved by an editor', () => {
  it('a config, catalog and state each with a byte-order mark: the sync runs as without them', async () => {
    const catalog = await discovered('singer');
    const withMark = (value: unknown, name: string): string => writeTempText(`\uFEFF${JSON.stringify(value, null, 2)}`, name);
    const first = await syncOk({ config: tapConfig(sandbox), catalog });
    const states = first.stdout.trim().split('\n').filter((line) => line.startsWith('{"type":"STATE"'));
    const state = (JSON.parse(states.at(-1)!) as { value: unknown }).value;
    const run = await runTap(['--config', withMark(tapConfig(sandbox), 'config.json'), '--catalog', withMark(catalog, 'catalog.json'), '--state', withMark(state, 'state.json')]);
    expect(run.code, run.stderr).toBe(0);
    expect(recordMessages(run.messages)).toEqual([]);
    expect(recordMessages(first.messages).length).toBeGreaterThan(0);
  });

  it('an empty config file: exit 2, one line saying it is empty', async () => {
    const run = await runTap(['--config', writeTempText('\n', 'config.json'), '--discover']);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^tap-report-dump: error: Config file \S+config\.json is empty, not an object of settings\. Write it as \{"base_url": "…", "access_token": "…"\}\.$/)]);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
