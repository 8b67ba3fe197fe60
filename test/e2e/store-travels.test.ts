import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/config.js';
import { discoverStreams } from '../../src/catalog/discovery.js';
import { catalogMessage } from '../../src/airbyte/catalog.js';
import { openBucket } from '../../src/store/open-bucket.js';
import { tempFolder } from '../helpers/files.js';
import { ModelWarehouse } from '../helpers/model-warehouse.js';
import { AirbyteDedupTable, dedupOf } from '../helpers/airbyte-dedup.js';
import { incrementalCatalog, serviceFields, type AirbyteStream } from '../helpers/airbyte.js';
import { DEMO_TOKEN, type Sandbox, startTestSandbox, type Stream, tapConfig } from '../helpers/sandbox.js';
import { startAzurite, startS3, type ObjectStore } from '../helpers/object-stores.js';
import { type Face, type Loader, simulateDays } from '../helpers/warehouse-days.js';
import { type JsonObject, lastState, recordMessages, type StateValue, statesOf } from '../helpers/messages.js';
import { syncOk, syncTap } from '../helpers/cli.js';

/**
 * The change store travels with the state: every daily run starts in a new
 * container (a new, empty store folder: no HOME, XDG_STATE_HOME or TMPDIR of
 * the day before), as on Airbyte, a Kubernetes CronJob, Meltano with a remote
 * state backend or a CI runner, and keeps only its state. Each day is still a
 * change pass that sends what changed and deletes the leavers, through the
 * model targets, with the store in the state, in an S3 bucket (s3rver) and in
 * an Azure container (Azurite), on both faces.
 */

const sandboxes: Sandbox[] = [];
const stores: Record<'s3' | 'azure', ObjectStore> = {} as Record<'s3' | 'azure', ObjectStore>;

beforeAll(async () => {
  [stores.s3, stores.azure] = await Promise.all([startS3(), startAzurite()]);
  // The SDKs find their endpoints and credentials in the process's environment, as a user's run does.
  Object.assign(process.env, stores.s3.env, stores.azure.env);
}, 60_000);

afterAll(async () => {
  await Promise.all([...sandboxes.map((s) => s.close()), ...Object.values(stores).map((s) => s.close())]);
});

type Home = 'state' | 's3' | 'azure';

/** Each day's settings: a store folder of its own (a new container), and where generations live. */
function settingsOf(home: Home, prefix: string): (day: number) => JsonObject {
  const where = home === 'state' ? {} : { state_store_max_kb: 0, store_url: stores[home].url(prefix) };
  return () => ({ ...where, store_directory: tempFolder('container-store-') });
}

function airbyteDestination(): Loader {
  const discovered = (JSON.parse(catalogMessage(discoverStreams(resolveConfig({ base_url: 'http://127.0.0.1:1', access_token: DEMO_TOKEN, discovery: 'packaged' })))) as { catalog: { streams: AirbyteStream[] } }).catalog.streams;
  const destination = new AirbyteDedupTable(dedupOf(incrementalCatalog(discovered)));
  return { load: (stdout) => destination.load(stdout), rows: (stream: Stream) => new Map([...destination.rows(stream)].map(([key, data]) => [key, serviceFields(data)])) };
}

const TARGETS: Record<string, () => Loader> = {
  'MeltanoLabs target-postgres (hard_delete)': () => new ModelWarehouse('hard', 'mark'),
  'pipelinewise-target-postgres (hard_delete)': () => new ModelWarehouse('ignore', 'remove'),
  'an Airbyte append_dedup destination': airbyteDestination,
};

const CASES: Array<[Home, Face, string]> = [
  ['state', 'singer', 'pipelinewise-target-postgres (hard_delete)'],
  ['state', 'airbyte', 'an Airbyte append_dedup destination'],
  ['s3', 'singer', 'pipelinewise-target-postgres (hard_delete)'],
  ['s3', 'airbyte', 'an Airbyte append_dedup destination'],
  ['azure', 'singer', 'MeltanoLabs target-postgres (hard_delete)'],
  ['azure', 'airbyte', 'an Airbyte append_dedup destination'],
];

describe.concurrent('every daily run in a new container keeps only its state', () => {
  it.each(CASES)('store in %s, %s face, into %s: each day a change pass, only changes and delete records, the warehouse equal to the source', async (home, face, target) => {
    const sandbox = await startTestSandbox({ seed: 37, trainingRecords: 300, phishingRecords: 300 });
    sandboxes.push(sandbox);
    const prefix = `runs-${face}-${Math.random().toString(36).slice(2, 8)}`;
    const { deleted, last } = await simulateDays(sandbox, face, 'jsonl', TARGETS[target](), 3, settingsOf(home, prefix));
    expect(deleted, 'leavers were deleted by delete records').toBeGreaterThan(0);
    const records = JSON.stringify(last.state).length;
    if (home === 'state') {
      const rows = sandbox.recordCount('training') + sandbox.recordCount('phishing');
      expect(records, 'the state: at most 16 bytes a row and 16 KiB').toBeLessThanOrEqual(16 * rows + 16 * 1024);
    } else {
      expect(JSON.stringify(last.state)).toContain(`"url":"${stores[home].url(prefix)}"`);
      // Generations no state can name are gone: one a stream is left (the last run's), and at most its parent.
      const objects = await (await openBucket(stores[home].url(prefix))).list('');
      expect(objects.length, objects.map((o) => o.name).join(', ')).toBeLessThanOrEqual(4);
    }
  });

  it('a store that moves from the bucket into the state (the table shrank below state_store_max_kb) leaves nothing of its chain in the bucket', async () => {
    const sandbox = await startTestSandbox({ seed: 38, trainingRecords: 200, phishingRecords: 200 });
    sandboxes.push(sandbox);
    const prefix = `moved-${Math.random().toString(36).slice(2, 8)}`;
    const url = stores.s3.url(prefix);
    // Day 0 in the bucket (no room in the state), from day 1 on in the state, store_url still set.
    const settings = (day: number): JsonObject => ({ store_url: url, store_directory: tempFolder('container-store-'), ...(day === 0 ? { state_store_max_kb: 0 } : {}) });
    const { last } = await simulateDays(sandbox, 'singer', 'jsonl', TARGETS['pipelinewise-target-postgres (hard_delete)'](), 2, settings);
    expect(JSON.stringify(last.state)).toContain('"data":"');
    expect((await (await openBucket(url)).list('')).map((o) => o.name)).toEqual([]);
  });
});

describe.concurrent('a store folder that persists beside a bucket (cron on one machine)', () => {
  it.each(['s3', 'azure'] as const)('%s: a run that failed after fetching its generation leaves a copy in the folder; the next run replaces it and makes its change pass', async (home) => {
    const sandbox = await startTestSandbox({ seed: 39, trainingRecords: 120, phishingRecords: 120 });
    sandboxes.push(sandbox);
    const config = { ...tapConfig(sandbox), state_store_max_kb: 0, store_url: stores[home].url(`kept-${Math.random().toString(36).slice(2, 8)}`), store_directory: tempFolder('kept-store-'), max_retries: 0 };
    const first = await syncOk({ config });
    const state = dueForChangePass(lastState(first.messages));
    expect(JSON.stringify(state)).toContain(`"url":"${stores[home].url('')}`);

    sandbox.setFaults({ dropAfterBytes: 3000, dropRate: 1 });
    const failed = await syncTap({ config, state });
    expect(failed.code, failed.stderr).toBe(1);
    expect(failed.stderr).toMatch(/gave up/);

    sandbox.setFaults({ dropAfterBytes: null });
    const next = await syncTap({ config, state });
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).not.toMatch(/EEXIST|answered with an error/);
    expect(next.stderr).toMatch(/change pass/);
    expect(recordMessages(next.messages)).toEqual([]);
  });
});

describe.concurrent('a connection string the Azure SDK cannot read (quotes kept by docker --env-file)', () => {
  const quoted = '"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=c2VjcmV0LWtleS0xMjM0NQ==;EndpointSuffix=core.windows.net"';

  it.each([
    ['the store bound for the container', 0, 1],
    ['the store fits the state (the container only tidied after the STATE)', undefined, 0],
  ] as const)('%s: one line naming the variable, never the key; the run fails before its STATE only when it needed the container', async (_what, maxKb, code) => {
    const sandbox = await startTestSandbox({ seed: 40, trainingRecords: 60, phishingRecords: 60 });
    sandboxes.push(sandbox);
    const config = { ...tapConfig(sandbox), store_url: 'azure://tap-store/quoted', store_directory: tempFolder('quoted-store-'), ...(maxKb === undefined ? {} : { state_store_max_kb: maxKb }) };
    const run = await syncTap({ config, env: { AZURE_STORAGE_CONNECTION_STRING: quoted } });
    expect(run.code, run.stderr).toBe(code);
    expect(run.stderr).toContain('AZURE_STORAGE_CONNECTION_STRING is not a connection string the Azure SDK reads');
    expect(run.stderr).not.toMatch(/c2VjcmV0|unexpected error/);
    if (code === 1) expect(statesOf(run.messages)).toEqual([]);
    else expect(run.stderr).toMatch(/WARN.*while removing generations no state names/);
  });
});

/** The state as a day later: training's change pass due (its last pass two days ago), so the run fetches its generation. */
function dueForChangePass(state: StateValue): StateValue {
  const copy = JSON.parse(JSON.stringify(state)) as { bookmarks: { training: { full_pass?: { at: string }; change_pass?: unknown } } };
  copy.bookmarks.training.full_pass!.at = new Date(Date.now() - 2 * 86_400_000).toISOString();
  delete copy.bookmarks.training.change_pass;
  return copy as unknown as StateValue;
}
