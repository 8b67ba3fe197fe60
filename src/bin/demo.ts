import { startSandbox } from '../../sandbox/server.js';
import { tapSettingsFor, type LayoutName } from '../../sandbox/layout.js';
import { resolveConfig, type Config } from '../config/config.js';
import { discoverStreams } from '../catalog/discovery.js';
import { discoverAsConfigured } from '../catalog/live-discovery.js';
import { defaultSelection } from '../catalog/selection.js';
import { createClient, runSync } from '../sync/run.js';
import { singer } from '../singer/messages.js';
import { EXIT_OK } from '../errors.js';
import type { Session } from '../observe/session.js';
import { warnIfUnsupportedNode } from '../observe/node-support.js';
import type { StreamSummary } from '../sync/output/stream-stats.js';
import { MessageTally } from './demo-tally.js';
import { demoSummaryLines } from './demo-summary.js';

/**
 * The one-command demo: the reference service in-process, both streams
 * synced from it. In another layout than the packaged one, the streams are
 * discovered live from it, with the settings a tenant with that layout sets.
 * On a terminal, the messages are counted as they pass and a few lines say
 * what the run did (its info logs would repeat them); elsewhere they go to
 * stdout as a sync's do.
 */
export async function demoCommand(session: Session, records: number, layout: LayoutName = 'packaged'): Promise<number> {
  const sandbox = await startSandbox({ port: 0, trainingRecords: records, phishingRecords: records, layout, log: () => undefined });
  const tally = process.stdout.isTTY ? new MessageTally() : undefined;
  const logger = tally === undefined ? session.logger() : session.logger({ level: 'warn' });
  warnIfUnsupportedNode(logger);
  const redact = (text: string): string => session.redact(text);
  try {
    logger.info(`demo: sandbox serving at ${sandbox.url} with ${records} records per stream in the ${layout} layout; syncing both streams`);
    const config = resolveConfig({ base_url: sandbox.url, access_token: 'demo-token', ...tapSettingsFor(layout) });
    const client = createClient(config, logger, redact);
    let summaries: StreamSummary[];
    try {
      const streams = defaultSelection(layout === 'packaged' ? discoverStreams(config) : await discoverAsConfigured(config, client, logger));
      summaries = await runSync({ config, streams, protocol: singer, logger, redact, client, out: tally });
    } finally {
      await client.close();
    }
    const total = summaries.reduce((n, s) => n + s.records, 0);
    logger.info(`demo: done, ${total} RECORD messages on stdout. Next: tap-report-dump --help, or pipe into a Singer target.`);
    if (tally !== undefined) process.stdout.write(`${terminalSummary(tally, summaries, { sandboxUrl: sandbox.url, records, layout, config }).join('\n')}\n`);
  } finally {
    await sandbox.close();
  }
  return EXIT_OK;
}

/** The terminal's lines: counts and samples from what passed through the tally, times and bookmarks from the run. */
function terminalSummary(tally: MessageTally, summaries: readonly StreamSummary[], run: { sandboxUrl: string; records: number; layout: LayoutName; config: Config }): string[] {
  const passed = new Map(tally.streams().map((s) => [s.stream, s]));
  return demoSummaryLines({
    sandboxUrl: run.sandboxUrl,
    recordsPerStream: run.records,
    layout: run.layout,
    streams: summaries.map((s) => ({
      stream: s.stream,
      records: passed.get(s.stream)?.records ?? 0,
      seconds: s.durationMs / 1000,
      bookmark: s.bookmark,
      sample: passed.get(s.stream)?.sample,
    })),
    messages: tally.messages,
    bytes: tally.bytes,
    personalData: run.config.personal_data,
  });
}
