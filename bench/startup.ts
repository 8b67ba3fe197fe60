/**
 * Start-up: whole processes of the invocations a scheduler makes most
 * (--version, --about, discover without a config, --help, and an incremental
 * sync whose dumps answer 304 Not Modified), each alternated round by round
 * with bare `node -e 0`, so that the ratio (the median of the rounds'
 * ratios) holds on a machine whose speed drifts. Output goes to /dev/null.
 * The sandbox runs in its own process, so this one only measures.
 *
 *   npm run build && node dist/bench/startup.js [--rounds 21]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { FIXED_ANCHOR } from '../sandbox/placement.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const CLI = join(HERE, '..', '..', 'dist', 'src', 'bin', 'tap.js');

function roundsFrom(argv: readonly string[]): number {
  if (argv.length === 0) return 21;
  if (argv.length === 2 && argv[0] === '--rounds' && Number(argv[1]) >= 1) return Number(argv[1]);
  throw new Error('usage: node dist/bench/startup.js [--rounds N]');
}

async function startSandbox(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [CLI, 'sandbox', '--port', '0', '--anchor', FIXED_ANCHOR], { stdio: ['ignore', 'pipe', 'ignore'] });
  for await (const line of createInterface({ input: child.stdout! })) if (line.startsWith('http://')) return { url: line.trim(), child };
  throw new Error('bench: the sandbox did not print its URL');
}

/** Runs `node ...args` to completion: wall seconds, and what it printed. */
async function run(args: readonly string[], keepOutput = false): Promise<{ seconds: number; stdout: string; stderr: string }> {
  const devNull = openSync('/dev/null', 'w');
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, args, { stdio: ['ignore', keepOutput ? 'pipe' : devNull, keepOutput ? 'pipe' : devNull] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  closeSync(devNull);
  if (code !== 0) throw new Error(`bench: node ${args.join(' ')} exited ${code}: ${stderr.slice(-2000)}`);
  return { seconds, stdout, stderr };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The files of an incremental run whose next sync finds every dump unchanged. */
async function incrementalFiles(url: string, work: string): Promise<{ config: string; catalog: string; state: string }> {
  const config = join(work, 'config.json');
  writeFileSync(config, JSON.stringify({ base_url: url, access_token: 'demo-token' }));
  const catalog = join(work, 'catalog.json');
  writeFileSync(catalog, (await run([CLI, '--config', config, '--discover'], true)).stdout);
  const lines = (await run([CLI, '--config', config, '--catalog', catalog], true)).stdout.trim().split('\n');
  const lastState = lines.map((line) => JSON.parse(line) as { type: string; value?: unknown }).filter((m) => m.type === 'STATE').pop();
  const state = join(work, 'state.json');
  writeFileSync(state, JSON.stringify(lastState?.value));
  const again = await run([CLI, '--config', config, '--catalog', catalog, '--state', state], true);
  const unchanged = again.stderr.match(/unchanged \(HTTP 304\)/g)?.length ?? 0;
  if (unchanged !== 2) throw new Error(`bench: the second sync should find both dumps unchanged (HTTP 304), its log says:\n${again.stderr}`);
  return { config, catalog, state };
}

const rounds = roundsFrom(process.argv.slice(2));
const sandbox = await startSandbox();
const work = mkdtempSync(join(tmpdir(), 'tap-startup-'));
try {
  const files = await incrementalFiles(sandbox.url, work);
  const cases: ReadonlyArray<{ name: string; args: readonly string[] }> = [
    { name: '`--version`', args: ['--version'] },
    { name: '`--about`', args: ['--about'] },
    { name: '`--discover` without a config', args: ['--discover'] },
    { name: '`--help`', args: ['--help'] },
    { name: 'sync getting 304s: `--config --catalog --state`', args: ['--config', files.config, '--catalog', files.catalog, '--state', files.state] },
    { name: 'the same with the `sync` subcommand: `sync --config --catalog --state`', args: ['sync', '--config', files.config, '--catalog', files.catalog, '--state', files.state] },
    { name: 'sync getting 304s without a catalog (live discovery reads a sample of each dump)', args: ['--config', files.config, '--state', files.state] },
  ];
  const rows = ['| invocation | tap ms | `node -e 0` ms | tap / node |', '| --- | ---: | ---: | ---: |'];
  for (const { name, args } of cases) {
    const tap: number[] = [];
    const node: number[] = [];
    const ratios: number[] = [];
    await run([CLI, ...args]);
    for (let round = 0; round < rounds; round++) {
      const a = (await run([CLI, ...args])).seconds;
      const b = (await run(['-e', '0'])).seconds;
      tap.push(a);
      node.push(b);
      ratios.push(a / b);
    }
    rows.push(`| ${name} | ${(median(tap) * 1000).toFixed(0)} | ${(median(node) * 1000).toFixed(0)} | ${median(ratios).toFixed(2)} |`);
    process.stderr.write(`${rows[rows.length - 1]}\n`);
  }
  console.log(`Start-up, ${rounds} alternating rounds, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}:\n\n${rows.join('\n')}`);
} finally {
  sandbox.child.kill('SIGTERM');
  rmSync(work, { recursive: true, force: true });
}
