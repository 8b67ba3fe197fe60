import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { stateFromAirbyte } from '../../src/airbyte/state.js';
import { ensureBuilt, ROOT } from '../helpers/build.js';
import { runSource } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { REPLICATION_KEY, type Sandbox, startTestSandbox, STREAM_NAMES } from '../helpers/sandbox.js';

/**
 * The files with which the connector ships as Airbyte's connectors do, so that
 * anyone with Airbyte's Connector Acceptance Test (CAT) runs it as Airbyte
 * does: metadata.yaml, the icon, acceptance-test-config.yml and the
 * integration_tests/ it names, checked against the package, the connector's
 * own parsers and the sandbox over HTTP. (The metadata against the
 * Dockerfile's labels: dockerfile.test.ts.)
 */

const text = (file: string): string => readFileSync(join(ROOT, file), 'utf8');
const json = (file: string): unknown => JSON.parse(text(file));
const pkg = json('package.json') as { version: string; license: string; homepage?: string };

interface Metadata {
  metadataSpecVersion: string;
  data: Record<string, unknown> & { tags: string[]; icon: string; dockerRepository: string };
}
const metadata = parseYaml(text('metadata.yaml')) as Metadata;

interface TestEntry {
  config_path?: string;
  configured_catalog_path?: string;
  spec_path?: string;
  future_state?: { future_state_path?: string };
}
interface AcceptanceConfig {
  connector_image: string;
  acceptance_tests: Record<string, { tests?: TestEntry[]; bypass_reason?: string }>;
}
const acceptance = parseYaml(text('acceptance-test-config.yml')) as AcceptanceConfig;
const entries = (section: string): TestEntry[] => acceptance.acceptance_tests[section]?.tests ?? [];
const SAMPLE_CONFIG = 'integration_tests/sample_config.json';
const CONFIGURED_CATALOG = 'integration_tests/configured_catalog.json';
const FUTURE_STATE = 'integration_tests/abnormal_state.json';

describe('metadata.yaml', () => {
  it('describes an API source with a fixed definitionId, its release stage, support level, licence and language', () => {
    expect(metadata.metadataSpecVersion).toBe('1.0');
    expect(metadata.data).toMatchObject({ connectorType: 'source', connectorSubtype: 'api', releaseStage: 'alpha', supportLevel: 'community', license: pkg.license });
    expect(metadata.data.definitionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(metadata.data.name).toEqual(expect.any(String));
    expect(metadata.data.tags).toContain('language:typescript');
  });

  it('tags the image with package.json\'s version, and names the protocol version the spec declares', async () => {
    await ensureBuilt();
    expect(metadata.data.dockerImageTag).toBe(pkg.version);
    const spec = await runSource(['spec']);
    expect(metadata.data.protocolVersion).toBe((JSON.parse(spec.stdout) as { spec: { protocol_version: string } }).spec.protocol_version);
  });

  it('links documentation only when package.json has a homepage (a link must open a page), as the spec does', () => {
    if (pkg.homepage === undefined) expect(metadata.data).not.toHaveProperty('documentationUrl');
    else expect(metadata.data.documentationUrl).toBe(pkg.homepage);
  });

  it('names an icon that exists: a small SVG of plain shapes, nothing it loads or runs', () => {
    const icon = metadata.data.icon;
    expect(existsSync(join(ROOT, icon)), icon).toBe(true);
    expect(statSync(join(ROOT, icon)).size).toBeLessThan(4096);
    const svg = text(icon);
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]* viewBox="0 0 \d+ \d+"/);
    expect(svg).not.toMatch(/<script|<image|href=|url\(|<foreignObject|on\w+=/i);
  });
});

describe('acceptance-test-config.yml', () => {
  it('tests the image metadata.yaml names, with spec, connection, discovery, basic_read, full_refresh and incremental with a future state', () => {
    expect(acceptance.connector_image).toBe(`${metadata.data.dockerRepository}:dev`);
    expect(Object.keys(acceptance.acceptance_tests)).toEqual(['spec', 'connection', 'discovery', 'basic_read', 'full_refresh', 'incremental']);
    for (const section of Object.keys(acceptance.acceptance_tests)) expect(entries(section).length, section).toBeGreaterThan(0);
    for (const section of Object.keys(acceptance.acceptance_tests)) for (const entry of entries(section)) expect(entry.config_path, section).toBe(SAMPLE_CONFIG);
    for (const section of ['basic_read', 'full_refresh', 'incremental']) expect(entries(section)[0].configured_catalog_path, section).toBe(CONFIGURED_CATALOG);
    expect(entries('connection')[0]).toMatchObject({ status: 'succeed' });
    expect(entries('incremental')[0].future_state?.future_state_path).toBe(FUTURE_STATE);
  });

  it('names only files that exist', () => {
    const named = Object.keys(acceptance.acceptance_tests).flatMap((section) =>
      entries(section).flatMap((entry) => [entry.config_path, entry.configured_catalog_path, entry.spec_path, entry.future_state?.future_state_path]),
    );
    const paths = [...new Set(named.filter((path): path is string => path !== undefined))];
    expect(paths.sort()).toEqual([FUTURE_STATE, CONFIGURED_CATALOG, SAMPLE_CONFIG].sort());
    for (const path of paths) expect(existsSync(join(ROOT, path)), path).toBe(true);
  });
});

describe('integration_tests/', () => {
  let sandbox: Sandbox;

  beforeAll(async () => {
    await ensureBuilt();
    // As `tap-report-dump sandbox` starts (docs/airbyte.md), on a free port instead of 8080.
    sandbox = await startTestSandbox({ trainingRecords: 2000, phishingRecords: 2000 });
  });

  afterAll(async () => {
    await sandbox?.close();
  });

  it('sample_config.json points at the sandbox on the port docs/airbyte.md starts it on, with the demo token', () => {
    expect(json(SAMPLE_CONFIG)).toEqual({ base_url: 'http://localhost:8080', access_token: 'demo-token' });
    expect(text('docs/airbyte.md')).toContain('tap-report-dump sandbox --port 8080');
  });

  it('configured_catalog.json is what configured-catalog writes against the sandbox, with the sample config', async () => {
    const config = { ...(json(SAMPLE_CONFIG) as object), base_url: sandbox.url };
    const made = await runSource(['configured-catalog', '--config', writeTempJson(config, 'sample_config.json')]);
    expect(made.code, made.stderr).toBe(0);
    expect(json(CONFIGURED_CATALOG), `${CONFIGURED_CATALOG} is stale: write it anew with source-report-dump configured-catalog --config ${SAMPLE_CONFIG} (docs/airbyte.md)`).toEqual(JSON.parse(made.stdout));
    const streams = (json(CONFIGURED_CATALOG) as { streams: Array<{ stream: { name: string }; sync_mode: string; destination_sync_mode: string; cursor_field: string[]; primary_key: string[][] }> }).streams;
    expect(streams.map((s) => [s.stream.name, s.sync_mode, s.destination_sync_mode])).toEqual(STREAM_NAMES.map((name) => [name, 'incremental', 'append_dedup']));
    for (const s of streams) expect(s.cursor_field.length * s.primary_key.length, s.stream.name).toBeGreaterThan(0);
  });

  it('abnormal_state.json is a per-stream Airbyte state the connector reads, each stream\'s bookmark in 2999', () => {
    const state = stateFromAirbyte(json(FUTURE_STATE), FUTURE_STATE);
    expect(Object.keys(state.bookmarks ?? {}).sort()).toEqual([...STREAM_NAMES].sort());
    for (const stream of STREAM_NAMES) {
      expect(state.bookmarks?.[stream]).toMatchObject({ replication_key: REPLICATION_KEY[stream] });
      expect(String(state.bookmarks?.[stream]?.replication_key_value)).toMatch(/^2999-/);
    }
  });

  it('a read with abnormal_state.json exits 0 with no records, and each stream\'s STATE as it came (CAT\'s future-state test)', async () => {
    const config = writeTempJson({ ...(json(SAMPLE_CONFIG) as object), base_url: sandbox.url }, 'sample_config.json');
    const read = await runSource(['read', '--config', config, '--catalog', join(ROOT, CONFIGURED_CATALOG), '--state', join(ROOT, FUTURE_STATE)]);
    expect(read.code, read.stderr).toBe(0);
    const messages = read.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; state?: { stream?: { stream_descriptor: { name: string }; stream_state: unknown } } });
    expect(messages.filter((m) => m.type === 'RECORD')).toEqual([]);
    const sent = messages.filter((m) => m.type === 'STATE').map((m) => [m.state?.stream?.stream_descriptor.name, m.state?.stream?.stream_state]);
    const came = (json(FUTURE_STATE) as Array<{ stream: { stream_descriptor: { name: string }; stream_state: unknown } }>).map((s) => [s.stream.stream_descriptor.name, s.stream.stream_state]);
    expect(sent.sort()).toEqual(came.sort());
  });
});
