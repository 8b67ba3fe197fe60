import type { Session } from '../observe/session.js';
import type { SingerArgs, SyncArgs } from './singer-options.js';

/** What a Singer-standard invocation does, whichever parser read it: --about, else --discover, else a sync. */
export async function runSinger(session: Session, args: SingerArgs): Promise<number> {
  // Loaded here, not at the top: --version and the yargs errors never need the commands' modules.
  const { aboutCommand, discoverCommand, syncCommand } = await import('../singer/commands.js');
  if (args.about) return aboutCommand(args.format);
  if (args.discover) return discoverCommand(session, args.config);
  return syncCommand(session, args.config, args.catalog ?? args.properties, args.state);
}

/** The `sync` subcommand, whichever parser read it: every stream without --catalog. */
export async function runSync(session: Session, args: SyncArgs): Promise<number> {
  return (await import('../singer/commands.js')).syncCommand(session, args.config, args.catalog, args.state);
}
