import { startSandbox } from '../../sandbox/server.js';
import { tapSettingsFor, type LayoutName } from '../../sandbox/layout.js';
import { resolveConfig } from '../config/config.js';
import { discoverStreams } from '../catalog/discovery.js';
import { discoverAsConfigured } from '../catalog/live-discovery.js';
import { defaultSelection } from '../catalog/selection.js';
import { createClient, runSync } from '../sync/run.js';
import { singer } from '../singer/messages.js';
import { EXIT_OK } from '../errors.js';
import type { Session } from '../observe/session.js';
import { warnIfUnsupportedNode } from '../observe/node-support.js';

/**
 * The one-command demo: the reference service in-process, both streams
 * synced from it. In another layout than the packaged one, the streams are
 * discovered live from it, with the settings a tenant with that layout sets.
 */
export async function demoCommand(session: Session, records: number, layout: LayoutName = 'packaged'): Promise<number> {
  const sandbox = await startSandbox({ port: 0, trainingRecords: records, phishingRecords: records, layout, log: () => undefined });
  const logger = session.logger();
  warnIfUnsupportedNode(logger);
  const redact = (text: string): string => session.redact(text);
  try {
    logger.info(`demo: sandbox serving at ${sandbox.url} with ${records} records per stream in the ${layout} layout; syncing both streams`);
    const config = resolveConfig({ base_url: sandbox.url, access_token: 'demo-token', ...tapSettingsFor(layout) });
    const client = createClient(config, logger, redact);
    let summaries;
    try {
      const streams = defaultSelection(layout === 'packaged' ? discoverStreams(config) : await discoverAsConfigured(config, client, logger));
      summaries = await runSync({ config, streams, protocol: singer, logger, redact, client });
    } finally {
      await client.close();
    }
    const total = summaries.reduce((n, s) => n + s.records, 0);
    logger.info(`demo: done, ${total} RECORD messages on stdout. Next: tap-report-dump --help, or pipe into a Singer target.`);
  } finally {
    await sandbox.close();
  }
  return EXIT_OK;
}
