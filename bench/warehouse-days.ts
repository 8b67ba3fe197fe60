/**
 * What the daily runs cost, measured on the sandbox's simulated organisation:
 * a run a simulated day, the tap in process (over real HTTP, its clock on the
 * sandbox's calendar), with the change store (the default): each daily run is
 * a change pass, and sends the rows that changed since the day before and a
 * delete record per row that left. For each run: what it sent against what
 * changed or left, beside what the same run without the store would send (the
 * changed rows, every open training row, every phishing row of the event
 * window) and what FULL_TABLE every day would; and the store's size on disk.
 * Counts, not times: whatever the machine, the figures are the same.
 *
 *   npm run build && node dist/bench/warehouse-days.js [--records 20000] [--days 8] [--seed 31]
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { parseArgs } from 'node:util';
import { startSandbox, type Sandbox } from '../sandbox/server.js';
import { FIXED_ANCHOR } from '../sandbox/placement.js';
import { PHISHING, REPORTS, type StreamName, TRAINING } from '../src/catalog/reports.js';
import { resolveConfig } from '../src/config/config.js';
import { discoverStreams } from '../src/catalog/discovery.js';
import { defaultSelection } from '../src/catalog/selection.js';
import { runSync } from '../src/sync/run.js';
import { singer } from '../src/singer/messages.js';
import { createLogger } from '../src/observe/log.js';
import { storeRecordOf, type TapState } from '../src/state.js';

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

interface DayRun {
  state: TapState;
  /** RECORD messages sent (delete records included), and delete records, by stream. */
  sent: Record<string, number>;
  deleted: number;
  pass: boolean;
}

async function run(sandbox: Sandbox, store: string, now: number, state: TapState | undefined): Promise<DayRun> {
  const config = resolveConfig({ base_url: sandbox.url, access_token: 'demo-token', discovery: 'packaged', log_level: 'error', store_directory: store });
  const out = new PassThrough();
  const sent: Record<string, number> = { training: 0, phishing: 0 };
  let deleted = 0;
  let pass = false;
  let last = '';
  let rest = '';
  out.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString('utf8')).split('\n');
    rest = lines.pop()!;
    for (const line of lines) {
      if (line.startsWith('{"type":"RECORD"')) {
        sent[/"stream":"(\w+)"/.exec(line)![1]]++;
        if (line.includes('"_sdc_deleted_at":"')) deleted++;
      } else if (line.startsWith('{"type":"STATE"')) last = line;
      else if (line.startsWith('{"type":"ACTIVATE_VERSION"')) pass = true;
    }
  });
  await runSync({ config, streams: defaultSelection(discoverStreams(config)), state, out, protocol: singer, logger: createLogger({ write: () => undefined }), redact: (t) => t, now: () => now });
  return { state: (JSON.parse(last) as { value: TapState }).value, sent, deleted, pass };
}

/** Bytes of the store's generation files, and the rows they hold. */
function storeSize(store: string, state: TapState): { bytes: number; rows: number } {
  const files = readdirSync(store, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.gen'));
  const named = new Set(STREAMS.map((s) => `${state.bookmarks?.[s]?.store?.generation}.gen`));
  const bytes = files.filter((name) => named.has(name.split('/').at(-1)!)).reduce((n, name) => n + statSync(join(store, name)).size, 0);
  return { bytes, rows: STREAMS.reduce((n, s) => n + (storeRecordOf(state.bookmarks?.[s])?.rows ?? 0), 0) };
}

async function main(): Promise<void> {
  const sandbox = await startSandbox({ anchor: FIXED_ANCHOR, seed: Number(values.seed), trainingRecords: RECORDS, phishingRecords: RECORDS, port: 0, log: () => undefined });
  const store = mkdtempSync(join(tmpdir(), 'tap-bench-store-'));
  try {
    const rows = [
      '| day | run | sent training / phishing | of which delete records | rows changed | rows left | sent / (changed + left) | without the store (changed + open + window) | FULL_TABLE would send |',
      '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ];
    let previous = await run(sandbox, store, DAY_0, undefined);
    rows.push(`| 0 | full pass (first run) | ${previous.sent.training} / ${previous.sent.phishing} | | | | | | ${previous.sent.training + previous.sent.phishing} |`);
    const sum = { sent: 0, work: 0, without: 0, full: 0 };
    let worst = 0;
    // The tap only reads: the rows change in simulateDays alone, so a day's `after` is the next day's `before`.
    let before = snapshot(sandbox);
    for (let d = 1; d <= DAYS; d++) {
      const [day] = sandbox.simulateDays(1);
      const now = Date.parse(day.now);
      const after = snapshot(sandbox);
      const changed = STREAMS.reduce((n, s) => n + [...after[s]].filter(([k, v]) => before[s].get(k) !== v).length, 0);
      const left = STREAMS.reduce((n, s) => n + [...before[s].keys()].filter((k) => !after[s].has(k)).length, 0);
      const open = [...sandbox.records('training', { [TRAINING.openRows.filter]: TRAINING.openRows.value })].length;
      const window = [...sandbox.records('phishing', { sentAt: `>=${new Date(now - PHISHING.eventWindowDays * 86_400_000).toISOString()}` })].length;
      previous = await run(sandbox, store, now, previous.state);
      const sent = previous.sent.training + previous.sent.phishing;
      const full = after.training.size + after.phishing.size;
      const ratio = sent / (changed + left);
      sum.sent += sent;
      sum.work += changed + left;
      sum.without += changed + open + window;
      sum.full += full;
      worst = Math.max(worst, ratio);
      rows.push(`| ${d} | ${previous.pass ? 'full pass' : 'change pass'} | ${previous.sent.training} / ${previous.sent.phishing} | ${previous.deleted} | ${changed} | ${left} | ${ratio.toFixed(2)} | ${changed + open + window} | ${full} |`);
      before = after;
    }
    const size = storeSize(store, previous.state);
    process.stdout.write(
      `${rows.join('\n')}\n\nDaily runs: ${sum.sent} records sent for ${sum.work} rows that changed or left (${(sum.sent / sum.work).toFixed(2)}; at most ${worst.toFixed(2)} on any day); without the store they would have sent ${sum.without}, FULL_TABLE every day ${sum.full}. The store: ${size.bytes} bytes for ${size.rows} rows (${(size.bytes / size.rows).toFixed(1)} bytes a row).\n`,
    );
  } finally {
    await sandbox.close();
    rmSync(store, { recursive: true, force: true });
  }
}

await main();
