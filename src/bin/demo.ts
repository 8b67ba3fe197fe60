import { startSandbox } from '../../sandbox/server.js';
import { resolveConfig } from '../config/config.js';
import { discoverStreams } from '../catalog/discovery.js';
import { defaultSelection } from '../catalog/selection.js';
import { runSync } from '../sync/run.js';
import { singer } from '../singer/messages.js';
import { EXIT_OK } from '../errors.js';
import type { Session } from '../observe/session.js';

/** The one-command demo: the reference service in-process, both streams synced from it. */
export async function demoCommand(session: Session, records: number): Promise<number> {
  const sandbox = await startSandbox({ port: 0, trainingRecords: records, phishingRecords: records, log: () => undefined });
  const logger = session.logger();
  try {
    logger.info(`demo: sandbox serving at ${sandbox.url} with ${records} records per stream; syncing both streams`);
    const config = resolveConfig({ base_url: sandbox.url, access_token: 'demo-token' });
    const streams = defaultSelection(discoverStreams(config));
    const summaries = await runSync({ config, streams, protocol: singer, logger, redact: (text) => session.redact(text) });
    const total = summaries.reduce((n, s) => n + s.records, 0);
    logger.info(`demo: done, ${total} RECORD messages on stdout. Next: tap-report-dump --help, or pipe into a Singer target.`);
  } finally {
    await sandbox.close();
  }
  return EXIT_OK;
}
