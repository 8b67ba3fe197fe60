import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from '../helpers/build.js';
import { shellBlocks } from '../helpers/fenced-commands.js';
import { tempFolder } from '../helpers/files.js';
import { airbyteMessages } from '../helpers/airbyte.js';
import { parseMessages, recordMessages } from '../helpers/messages.js';
import { installedCommands, type Ran, runInShell } from '../helpers/reader-shell.js';
import { DEMO_TOKEN, type Sandbox, startTestSandbox } from '../helpers/sandbox.js';

/**
 * The README's commands work as written: every command of its ```sh blocks
 * that runs the tap (both faces, `npx` or not, the environment example) is
 * run in README order, in one folder, against the sandbox (config.json names
 * it, with the demo token), through a shell, as a reader would paste it.
 * Each must exit 0, and each sync or read must emit records. What needs
 * another program (a target, docker, meltano, curl, npm) or never ends (the
 * sandbox server) is left out (docs-commands.test.ts runs the sandbox block
 * and its curl); the list of what ran is checked, so a block the filter
 * drops by mistake shows. The configured catalog read takes is the one the
 * README's configured-catalog command writes.
 */

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const RUNS_THE_TAP = /^(export TAP_REPORT_DUMP_|(npx )?tap-report-dump |source-report-dump )/;
const NEEDS_ANOTHER_PROGRAM = /\| *(target-|tail)|\bsandbox --port\b/;

let sandbox: Sandbox;
let folder: string;
let bin: string;

beforeAll(async () => {
  await ensureBuilt();
  sandbox = await startTestSandbox({ trainingRecords: 200, phishingRecords: 100 });
  folder = tempFolder('readme-commands-');
  bin = installedCommands();
  writeFileSync(join(folder, 'config.json'), JSON.stringify({ base_url: sandbox.url, access_token: DEMO_TOKEN, start_date: '2025-01-01', discovery: 'packaged', store_directory: join(folder, 'store') }));
  writeFileSync(join(folder, 'state.json'), '');
});

afterAll(async () => {
  await sandbox?.close();
});

/** Runs the commands of a block one after the other in one shell, so an `export` reaches the commands after it. */
async function runBlock(commands: readonly string[]): Promise<Ran[]> {
  const ran: Ran[] = [];
  const exported: string[] = [];
  for (const command of commands) {
    // The reader's `…` stands for their token: the sandbox's.
    const typed = command.replace('…', DEMO_TOKEN).replace(/^npx /, '');
    if (typed.startsWith('export ')) {
      exported.push(typed);
      continue;
    }
    ran.push(await runInShell([...exported, typed].join('\n'), command, { cwd: folder, bin }));
  }
  return ran;
}

function emitsRecords(ran: Ran): boolean {
  const output = /> (\S+)\s*$/.exec(ran.command)?.[1];
  const text = output === undefined ? ran.stdout : readFileSync(join(folder, output), 'utf8');
  if (ran.command.startsWith('source-report-dump')) return airbyteMessages(text).some((m) => m.type === 'RECORD');
  return recordMessages(parseMessages(text)).length > 0;
}

describe('the README', () => {
  it('runs every command of its shell blocks that runs the tap, against the sandbox, as written', async () => {
    const blocks = shellBlocks(README).map((block) => ({ ...block, commands: block.commands.filter((c) => RUNS_THE_TAP.test(c) && !NEEDS_ANOTHER_PROGRAM.test(c)) }));
    const ran: Ran[] = [];
    for (const block of blocks.filter((b) => b.commands.length > 0)) ran.push(...(await runBlock(block.commands)));
    // Usage, Singer-standard invocation, the environment example, Airbyte: the blocks the README has today.
    expect(ran.map((r) => r.command.split(' ').slice(0, 2).join(' '))).toEqual(expect.arrayContaining(['tap-report-dump --version', 'tap-report-dump discover', 'tap-report-dump sync', 'tap-report-dump check', 'tap-report-dump --config', 'source-report-dump spec', 'source-report-dump configured-catalog', 'source-report-dump read']));
    for (const r of ran) {
      expect(r.code, `${r.command}\n${r.stderr}`).toBe(0);
      if (/ (sync|read) | --catalog /.test(` ${r.command} `)) expect(emitsRecords(r), `${r.command} emits records\n${r.stderr}`).toBe(true);
    }
  });

  it('has an environment example whose filter selects rows the sandbox has (its sync emits training records)', async () => {
    const block = shellBlocks(README).find((b) => b.commands.some((c) => c.startsWith('export TAP_REPORT_DUMP_FILTERS')));
    expect(block, 'the README shows settings from the environment').toBeDefined();
    const [sync] = await runBlock(block!.commands);
    expect(sync.code, sync.stderr).toBe(0);
    expect(recordMessages(parseMessages(sync.stdout), 'training').length, 'training records selected by the example filter').toBeGreaterThan(0);
  });
});
