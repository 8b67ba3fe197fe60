import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { runTap, type TapRun } from '../helpers/cli.js';
import { writeTempJson } from '../helpers/files.js';
import { airbyteMessages, discoveredStreams, incrementalCatalog } from '../helpers/airbyte.js';
import { recordsOf } from '../helpers/messages.js';
import { nodeWarnings } from '../helpers/node-warning.js';
import { type Sandbox, startTestSandbox, tapConfig } from '../helpers/sandbox.js';

/**
 * A run on a Node.js line the tap does not support says so once, at its
 * start, in the run's log format; a run on a supported line says nothing.
 * The version is faked in the child (a module preloaded by NODE_OPTIONS), so
 * that both cases are tested whichever Node.js runs the suite.
 */

function onNode(version: string, env: Record<string, string> = {}): Record<string, string> {
  const preload = `Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '${version}' } });`;
  return { NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(preload)}`, ...env };
}

const WARNING = "is not a line tap-report-dump supports (package.json engines: ^22.12.0 || ^24.0.0 || >=26.0.0); run it on Node.js 22, 24 or 26, see the README's Install section.";

function lines(run: TapRun): string[] {
  return run.stderrAsWritten.split('\n').filter((line) => line !== '');
}

describe.concurrent('the Node.js line a run is on', () => {
  let sandbox: Sandbox;
  let config: string;

  beforeAll(async () => {
    await ensureBuilt();
    sandbox = await startTestSandbox({ trainingRecords: 20, phishingRecords: 20 });
    config = writeTempJson(tapConfig(sandbox, { discovery: 'packaged' }));
  });

  afterAll(async () => {
    await sandbox?.close();
  });

  it('unsupported (20, 22 before 22.12, 25): one WARN line first on stderr, naming it, and the sync runs as usual', async () => {
    const runs = await Promise.all(['20.19.0', '22.11.0', '25.1.0'].map((version) => runTap(['--config', config], { env: onNode(version) })));
    for (const [i, version] of ['20.19.0', '22.11.0', '25.1.0'].entries()) {
      const run = runs[i];
      expect(run.code, run.stderrAsWritten).toBe(0);
      expect(nodeWarnings(run.stderrAsWritten), version).toBe(1);
      expect(lines(run)[0]).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z WARN  Node\\.js ${version.replace(/\./g, '\\.')} `));
      expect(lines(run)[0].endsWith(WARNING)).toBe(true);
      expect(recordsOf(run.messages, 'training')).toHaveLength(20);
    }
  });

  it('unsupported, with log_format json: the warning is a JSON log object at level warn', async () => {
    const run = await runTap(['--config', config], { env: onNode('20.19.0', { TAP_REPORT_DUMP_LOG_FORMAT: 'json' }) });
    expect(run.code, run.stderrAsWritten).toBe(0);
    const first = JSON.parse(lines(run)[0]) as { level: string; message: string };
    expect([first.level, first.message]).toEqual(['warn', `Node.js 20.19.0 ${WARNING}`]);
    expect(nodeWarnings(run.stderrAsWritten)).toBe(1);
  });

  it('unsupported: discover, check, the demo and the Airbyte face warn once too; --about and --version do not', async () => {
    const env = onNode('20.19.0');
    const discovered = await runTap(['airbyte', 'discover', '--config', config]);
    const catalog = writeTempJson(incrementalCatalog(discoveredStreams(discovered.stdout)));
    const [discover, check, demo, airbyteRead, about, version] = await Promise.all([
      runTap(['discover', '--config', config], { env }),
      runTap(['check', '--config', config], { env }),
      runTap(['demo', '--records', '10'], { env }),
      runTap(['airbyte', 'read', '--config', config, '--catalog', catalog], { env }),
      runTap(['--about'], { env }),
      runTap(['--version'], { env }),
    ]);
    for (const run of [discover, check, demo, airbyteRead]) {
      expect(run.code, run.stderrAsWritten).toBe(0);
      expect(nodeWarnings(run.stderrAsWritten), run.stderrAsWritten).toBe(1);
    }
    // The Airbyte face's stdout stays protocol messages only: the warning is on stderr, as the platform's log takes it.
    expect(airbyteMessages(airbyteRead.stdout).some((m) => m.type === 'RECORD')).toBe(true);
    expect(airbyteRead.stdout).not.toContain('is not a line tap-report-dump supports');
    for (const run of [about, version]) expect([run.code, run.stderrAsWritten]).toEqual([0, '']);
  });

  it('supported (22.12, 24, 26): no warning', async () => {
    const runs = await Promise.all(['22.12.0', '24.11.1', '26.0.0'].map((version) => runTap(['--config', config], { env: onNode(version) })));
    for (const run of runs) {
      expect(run.code, run.stderrAsWritten).toBe(0);
      expect(nodeWarnings(run.stderrAsWritten)).toBe(0);
    }
  });
});
