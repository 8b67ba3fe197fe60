import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from '../helpers/build.js';
import { parseMessages, recordMessages, schemasOf, statesOf, type RecordMessage, type SingerMessage } from '../helpers/messages.js';
import { STREAM_NAMES } from '../helpers/sandbox.js';

/**
 * What `npm start` runs (package.json's start script, without npm's own
 * banner), as a newcomer meets it on a terminal and as a pipe meets it.
 * Node has no pseudo-terminal of its own: util-linux's `script` gives the
 * child one (Debian, and so CI, has it; elsewhere the terminal half skips,
 * saying why).
 */

const START = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
/** The records per stream of the sandbox npm start starts (the demo command's --records default). */
const SANDBOX_RECORDS = 2000;
const HAS_SCRIPT = spawnSync('sh', ['-c', 'command -v script'], { stdio: 'ignore' }).status === 0;
if (!HAS_SCRIPT) console.warn('demo-terminal.test.ts: util-linux `script` is not installed here, so the demo is not run on a pseudo-terminal (apt-get install util-linux)');

interface Run {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

function run(command: string, args: readonly string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') });
    });
  });
}

/**
 * The terminal's text as a reader sees it: colours, line clearing and
 * carriage returns left out; cut after 4,000 characters, so that a flooded
 * terminal fails the size test with a readable message, not 2 MB (a screen
 * that passes it is never cut).
 */
function screenText(bytes: Buffer): string {
  const text = bytes.toString('utf8').replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');
  return text.length > 4000 ? `${text.slice(0, 4000)}…` : text;
}

let piped: SingerMessage[];

beforeAll(async () => {
  await ensureBuilt();
  const result = await run('sh', ['-c', START]);
  expect(result.code, result.stderr).toBe(0);
  piped = parseMessages(result.stdout.toString('utf8'));
}, 90_000);

describe('npm start, piped', () => {
  it('writes the Singer messages as a sync does: per stream a SCHEMA first, every RECORD of the sandbox, then STATE', () => {
    expect(piped[0].type).toBe('SCHEMA');
    for (const stream of STREAM_NAMES) {
      expect(schemasOf(piped, stream)).toHaveLength(1);
      expect(recordMessages(piped, stream)).toHaveLength(SANDBOX_RECORDS);
    }
    expect(statesOf(piped)).toHaveLength(STREAM_NAMES.length);
    expect(piped.at(-1)?.type).toBe('STATE');
  });
});

describe.skipIf(!HAS_SCRIPT)('npm start, on a terminal', () => {
  let terminal: Run;
  let screen: string;

  beforeAll(async () => {
    terminal = await run('script', ['-qec', START, '/dev/null']);
    screen = screenText(terminal.stdout);
  }, 90_000);

  it('exits 0 and writes a few lines, not the messages: under 4 KB on the terminal, logs included', () => {
    expect(terminal.code, screen).toBe(0);
    expect(terminal.stdout.length, screen).toBeLessThan(4096);
    expect(screen).not.toMatch(/"type":"(SCHEMA|STATE)"/);
  });

  it('names the sandbox it started', () => {
    expect(screen).toMatch(/sandbox .*http:\/\/127\.0\.0\.1:\d+/);
  });

  it('gives each stream a line with the records the piped run sends (the sandbox\'s), and its time', () => {
    for (const stream of STREAM_NAMES) {
      const records = recordMessages(piped, stream).length.toLocaleString('en-US');
      expect(screen).toMatch(new RegExp(`^\\s*${stream}: ${records} records in \\d+\\.\\d s`, 'm'));
    }
  });

  it('shows one RECORD message per stream as it was emitted', () => {
    for (const stream of STREAM_NAMES) {
      const samples = screen.split('\n').map((line) => line.trim()).filter((line) => line.startsWith(`{"type":"RECORD","stream":"${stream}"`));
      expect(samples, screen).toHaveLength(1);
      const sample = JSON.parse(samples[0]) as RecordMessage;
      expect(Object.keys(sample.record)).toEqual(Object.keys(recordMessages(piped, stream)[0].record));
    }
  });

  it('says what became of the personal fields and of the state, and the next command to try', () => {
    expect(screen).toMatch(/personal_data/);
    expect(screen).toMatch(/state/i);
    expect(screen).toMatch(/Next: .*tap-report-dump/);
  });
});
