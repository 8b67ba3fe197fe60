import { startSandbox } from '../../sandbox/server.js';
import { resolveConfig } from '../config/config.js';
import { defaultSelection } from '../singer/catalog.js';
import { createLogger } from '../observe/log.js';
import { runSync } from '../sync/run.js';
import { EXIT_OK } from '../errors.js';

/** The one-command demo: the reference service in-process, both streams synced from it. */
export async function demoCommand(records: number): Promise<number> {
  const sandbox = await startSandbox({ port: 0, trainingRecords: records, phishingRecords: records, log: () => undefined });
  const logger = createLogger();
  try {
    logger.info(`demo: sandbox serving at ${sandbox.url} with ${records} records per stream; syncing both streams`);
    const config = resolveConfig({ base_url: sandbox.url, access_token: 'demo-token' });
    const summaries = await runSync({ config, streams: defaultSelection(config), logger });
    const total = summaries.reduce((n, s) => n + s.records, 0);
    logger.info(`demo: done, ${total} RECORD messages on stdout. Next: tap-report-dump --help, or pipe into a Singer target.`);
  } finally {
    await sandbox.close();
  }
  return EXIT_OK;
}
