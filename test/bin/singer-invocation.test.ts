import { describe, expect, it } from 'vitest';
import { singerInvocation } from '../../src/bin/singer-invocation.js';
import { tapCli } from '../../src/bin/tap-cli.js';
import type { SingerArgs, SyncArgs } from '../../src/bin/singer-options.js';
import { packageVersion } from '../../src/catalog/schemas.js';
import { pick, seeded } from '../helpers/random.js';

/**
 * The fast path must read every argv it accepts exactly as the yargs CLI
 * does (same invocation, same options after the same checks), and leave the
 * rest to yargs. yargs is run in-process with hooks that record what it
 * would run instead of running it.
 */

type YargsOutcome = { kind: 'singer'; args: SingerArgs } | { kind: 'sync'; args: SyncArgs } | { kind: 'printed'; text: string } | { kind: 'usage error'; message: string } | { kind: 'other command' };

class UsageError extends Error {}

async function viaYargs(argv: readonly string[]): Promise<YargsOutcome> {
  let outcome: YargsOutcome = { kind: 'other command' };
  const hooks = {
    singer: async (args: SingerArgs) => void (outcome = { kind: 'singer', args }),
    sync: async (args: SyncArgs) => void (outcome = { kind: 'sync', args }),
    usageError: (message: string) => {
      throw new UsageError(message);
    },
  };
  let printed = '';
  try {
    // A parse callback makes yargs hand over what it would print (help, version) instead of printing it and exiting.
    await tapCli(argv, hooks).parseAsync([...argv], {}, (_error: unknown, _argv: unknown, output: string) => void (printed = output));
  } catch (error) {
    if (error instanceof UsageError) return { kind: 'usage error', message: error.message };
    throw error;
  }
  return printed ? { kind: 'printed', text: printed } : outcome;
}

/** What the fast path's answer means in yargs' terms. */
function expectedFromFastPath(argv: readonly string[]): YargsOutcome | undefined {
  const invocation = singerInvocation(argv);
  if (!invocation) return undefined;
  if (invocation.kind === 'version') return { kind: 'printed', text: packageVersion() };
  return invocation.kind === 'sync' ? { kind: 'sync', args: invocation.args } : { kind: 'singer', args: invocation.args };
}

/** Compares where the fast path accepts; says whether it did. */
async function expectSameAsYargs(argv: readonly string[]): Promise<boolean> {
  const fast = expectedFromFastPath(argv);
  if (fast) expect(await viaYargs(argv), JSON.stringify(argv)).toEqual(fast);
  return fast !== undefined;
}

/** The invocations orchestrators make (Meltano, singer-runner scripts, the Singer spec's examples). */
const SUPPORTED: ReadonlyArray<readonly string[]> = [
  ['--version'],
  ['--about'],
  ['--about', '--format', 'json'],
  ['--about', '--format=markdown'],
  ['--about', '--format', 'meltano'],
  ['--config', 'ENV', '--discover'],
  ['--format', 'json', '--about'],
  ['--about', '--config', 'config.json'],
  ['--discover'],
  ['--config', 'config.json', '--discover'],
  ['--discover', '--config=config.json'],
  ['--config', 'config.json'],
  ['--config', 'config.json', '--catalog', 'catalog.json'],
  ['--config', 'config.json', '--catalog', 'catalog.json', '--state', 'state.json'],
  ['--config', 'config.json', '--properties', 'properties.json', '--state', 'state.json'],
  ['--state', 'state.json', '--catalog', 'catalog.json', '--config', 'config.json'],
  ['--config', 'base.json', '--config', 'secrets.json', '--catalog', 'catalog.json'],
  ['--config', '/tmp/meltano run/tap.config.json', '--state', '/tmp/meltano run/state.json', '--catalog', '/tmp/meltano run/tap.properties.json'],
  ['--config', 'c.json', '--catalog', 'a.json', '--properties', 'b.json'],
  [],
  // The tap's own sync subcommand, as the README and the Docker image run it.
  ['sync'],
  ['sync', '--config', 'config.json'],
  ['sync', '--config', 'config.json', '--catalog', 'catalog.json', '--state', 'state.json'],
  ['sync', '--state=state.json', '--config', 'a.json', '--config', 'b.json'],
];

/** What the fast path leaves to yargs: help, subcommands, anything yargs reads differently or refuses. */
const DECLINED: ReadonlyArray<readonly string[]> = [
  ['--help'],
  ['--about', '--help'],
  ['-h'],
  ['--version', '--config', 'config.json'],
  ['--config', 'config.json', '--version'],
  ['sync', '--help'],
  ['sync', '--discover'],
  ['sync', '--properties', 'p.json'],
  ['sync', 'config.json'],
  ['sync', '--config', 'c.json', 'sync'],
  ['sync', '--state', 'a.json', '--state', 'b.json'],
  ['--config', 'config.json', 'sync'],
  ['discover'],
  ['airbyte', 'spec'],
  ['sandbox', '--port', '0'],
  ['config.json'],
  ['--config', 'a.json', 'b.json'],
  ['--config', 'config.json', '--', 'x'],
  ['--'],
  ['--config'],
  ['--config', ''],
  ['--config', 'a.json', '--config', ' '],
  ['--state', ''],
  ['--state=', '--config', 'c.json'],
  ['--state', 'a.json', '--state', 'b.json'],
  ['--catalog', 'a.json', '--catalog', 'b.json'],
  ['--state', '--config', 'c.json'],
  ['--state', '-'],
  ['--state=-x'],
  ['--format', 'xml', '--about'],
  ['--format', 'json', '--format', 'markdown', '--about'],
  ['--discover=true'],
  ['--discover', '--discover'],
  ['--no-discover'],
  ['--bogus'],
  ['--Config', 'c.json'],
  ['--config.path', 'c.json'],
  ['-c', 'c.json'],
];

describe('the fast path of the command line', () => {
  it('accepts every Singer-standard invocation orchestrators make', () => {
    for (const argv of SUPPORTED) expect(singerInvocation(argv), JSON.stringify(argv)).toBeDefined();
  });

  it('reads each of them exactly as the yargs CLI does', async () => {
    for (const argv of SUPPORTED) {
      const fast = expectedFromFastPath(argv);
      expect(await viaYargs(argv), JSON.stringify(argv)).toEqual(fast);
    }
  });

  it('keeps the options yargs hands over: repeated --config as a list, the rest as given', () => {
    expect(singerInvocation(['--config', 'a.json', '--config=b.json', '--catalog', 'c.json', '--state', 's.json'])).toEqual({
      kind: 'singer',
      args: { config: ['a.json', 'b.json'], catalog: 'c.json', state: 's.json' },
    });
    expect(singerInvocation(['--about', '--format', 'markdown'])).toEqual({ kind: 'singer', args: { about: true, format: 'markdown' } });
  });

  it('declines help, subcommands, repeated or empty file options, unknown options and values yargs refuses or reads otherwise', () => {
    for (const argv of DECLINED) expect(singerInvocation(argv), JSON.stringify(argv)).toBeUndefined();
  });

  it('never accepts an argv yargs would read differently or refuse (every pair of a token pool, and random longer lists)', async () => {
    // Tokens the fast path may take, and tokens it must leave to yargs (alone or by what they do to their neighbours).
    const good: ReadonlyArray<readonly string[]> = [
      ['--config', 'c.json'], ['--config=d.json'], ['--discover'], ['--about'], ['--catalog', 'cat.json'], ['--catalog=cat.json'],
      ['--properties', 'p.json'], ['--state', 's.json'], ['--state=s2.json'], ['--state', '5'], ['--format', 'json'], ['--format=markdown'],
    ];
    const bad: ReadonlyArray<readonly string[]> = [
      ['--config', ''], ['--config'], ['--config', ' '], ['--discover=true'], ['--no-discover'], ['--catalog', ''], ['--state', '-'], ['--state', '-x'],
      ['--format', 'xml'], ['--format'], ['--format', '1'], ['--help'], ['--version'], ['-h'], ['-v'], ['--bogus'], ['sync'], ['discover'], ['x.json'],
      ['--'], ['--Config', 'c.json'], ['--config.x', '1'],
    ];
    const pool = [...good, ...bad];
    let accepted = 0;
    for (const a of pool) {
      if (await expectSameAsYargs(a)) accepted++;
      if (await expectSameAsYargs(['sync', ...a])) accepted++;
      for (const b of pool) {
        if (await expectSameAsYargs([...a, ...b])) accepted++;
        if (await expectSameAsYargs(['sync', ...a, ...b])) accepted++;
      }
    }
    const random = seeded(13);
    for (let i = 0; i < 600; i++) {
      const length = 3 + Math.floor(random() * 3);
      const tokens = Array.from({ length }, () => pick(random, random() < 0.85 ? good : bad)).flat();
      if (await expectSameAsYargs(random() < 0.3 ? ['sync', ...tokens] : tokens)) accepted++;
    }
    // The comparison is not empty: a good share of the lists are ones the fast path takes.
    expect(accepted).toBeGreaterThan(200);
  });
});
