#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=1
import { singerInvocation } from './singer-invocation.js';
import { packageVersion } from '../catalog/schemas.js';

// process.argv.slice(2) is what yargs' hideBin returns under Node; both parsers read the same list.
const argv = process.argv.slice(2);
const invocation = argv[0] === 'airbyte' ? undefined : singerInvocation(argv);
if (argv[0] === 'airbyte') {
  // The Airbyte face, as source-report-dump: the same usage in sentences and the same one-line usage errors.
  await (await import('./airbyte-cli.js')).airbyteCli('tap-report-dump airbyte', argv.slice(1));
} else if (invocation?.kind === 'version') {
  process.stdout.write(`${packageVersion()}\n`);
} else if (invocation) {
  const [{ run }, { runSinger, runSync }] = await Promise.all([import('./run.js'), import('./singer-run.js')]);
  await run((session) => (invocation.kind === 'sync' ? runSync(session, invocation.args) : runSinger(session, invocation.args)));
} else {
  // Everything else (subcommands, --help, usage errors) goes to yargs, loaded only now.
  await (await import('./tap-cli.js')).tapCli(argv).parseAsync();
}
