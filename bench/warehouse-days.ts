/**
 * What the daily runs cost, measured on the sandbox's simulated organisation:
 * a run a simulated day, the tap in process (over real HTTP, its clock on the
 * sandbox's calendar), and for each run the records it emitted against the
 * work it had to do: the rows that changed since the day before, the open
 * training rows, the phishing rows inside the event window; the full pass on
 * day 7 emits the whole dump. Beside it, what FULL_TABLE every day would
 * emit. Counts, not times: whatever the machine, the figures are the same.
 *
 *   npm run build && node dist/bench/warehouse-days.js [--records 20000] [--days 8] [--seed 31]
 */
import { PassThrough } from 'node:stream';
import { parseArgs } from 'node:util';
import { startSandbox, type Sandbox } from '../sandbox/server.js';
import { PHISHING, REPORTS, type StreamName, TRAINING } from '../src/catalog/reports.js';
import { resolveConfig } from '../src/config/config.js';
import { discoverStreams } from '../src/catalog/discovery.js';
import { defaultSelection } from '../src/catalog/selection.js';
import { runSync } from '../src/sync/run.js';
import { singer } from '../src/singer/messages.js';
import { createLogger } from '../src/observe/log.js';
import type { TapState } from '../src/state.js';

const { values } = parseArgs({ options: { records: { type: 'string', default: '20000' }, days: { type: 'string', default: '8' }, seed: { type: 'string', default: '31' } } });
const RECORDS = Number(values.records);
const DAYS = Number(values.days);
const DAY_0 = Date.parse('2026-01-01T23:59:59Z');
const STREAMS: readonly StreamName[] = REPORTS.map((r) => r.name);
const KEY_PROPERTIES = Object.fromEntries(REPORTS.map((r) => [r.name, [...r.keyProperties]])) as Record<StreamName, string[]>;

type Rows = Map<string, string>;

function rowsOf(sandbox: Sandbox, stream: StreamName): Rows {
  return new Map([...sandbox.records(stream)].map((r) => [JSON.stringify(KEY_PROPERTIES[stream].map((k) => r[k])), JSON.stringify(r)]));
}

/** Both streams' rows now, by key. */
function snapshot(sandbox: Sandbox): Record<string, Rows> {
  return Object.fromEntries(STREAMS.map((s) => [s, rowsOf(sandbox, s)]));
}

async function run(sandbox: Sandbox, now: number, state: TapState | undefined): Promise<{ state: TapState; emitted: Record<string, number>; pass: boolean }> {
  const config = resolveConfig({ base_url: sandbox.url, access_token: 'demo-token', discovery: 'packaged', log_level: 'error' });
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const summaries = await runSync({ config, streams: defaultSelection(discoverStreams(config)), state, out, protocol: singer, logger: createLogger({ write: () => undefined }), redact: (t) => t, now: () => now });
  const states = text.split('\n').filter((l) => l.startsWith('{"type":"STATE"'));
  return {
    state: (JSON.parse(states.at(-1)!) as { value: TapState }).value,
    emitted: Object.fromEntries(summaries.map((s) => [s.stream, s.records])),
    pass: text.includes('"type":"ACTIVATE_VERSION"'),
  };
}

async function main(): Promise<void> {
  const sandbox = await startSandbox({ seed: Number(values.seed), trainingRecords: RECORDS, phishingRecords: RECORDS, port: 0, log: () => undefined });
  try {
    const rows = [`| day | run | emitted training / phishing | changed rows | open training rows | phishing rows in window | emitted / (changed + open + window) | FULL_TABLE would emit |`, '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |'];
    let previous = await run(sandbox, DAY_0, undefined);
    rows.push(`| 0 | full pass (first run) | ${previous.emitted.training} / ${previous.emitted.phishing} | | | | | ${previous.emitted.training + previous.emitted.phishing} |`);
    let sumEmitted = 0;
    let sumWork = 0;
    let sumFull = 0;
    // The tap only reads: the rows change in simulateDays alone, so a day's `after` is the next day's `before`.
    let before = snapshot(sandbox);
    for (let d = 1; d <= DAYS; d++) {
      const [day] = sandbox.simulateDays(1);
      const now = Date.parse(day.now);
      const after = snapshot(sandbox);
      const changed = STREAMS.reduce((n, s) => n + [...after[s]].filter(([k, v]) => before[s].get(k) !== v).length, 0);
      const open = [...sandbox.records('training', { [TRAINING.openRows.filter]: TRAINING.openRows.value })].length;
      const window = [...sandbox.records('phishing', { sentAt: `>=${new Date(now - PHISHING.eventWindowDays * 86_400_000).toISOString()}` })].length;
      previous = await run(sandbox, now, previous.state);
      const emitted = previous.emitted.training + previous.emitted.phishing;
      const full = after.training.size + after.phishing.size;
      const work = changed + open + window;
      if (!previous.pass) {
        sumEmitted += emitted;
        sumWork += work;
      }
      sumFull += full;
      rows.push(`| ${d} | ${previous.pass ? 'full pass (interval)' : 'incremental + open rows + window'} | ${previous.emitted.training} / ${previous.emitted.phishing} | ${changed} | ${open} | ${window} | ${previous.pass ? '' : (emitted / work).toFixed(2)} | ${full} |`);
      before = after;
    }
    process.stdout.write(`${rows.join('\n')}\n\nDaily runs (not the pass): ${sumEmitted} records emitted for ${sumWork} rows of work (${(sumEmitted / sumWork).toFixed(2)}); FULL_TABLE every day: ${sumFull} records over the ${DAYS} days.\n`);
  } finally {
    await sandbox.close();
  }
}

await main();
