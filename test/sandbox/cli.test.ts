import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { request } from 'undici';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ROOT, ensureBuilt } from '../helpers/build.js';
import { runTap } from '../helpers/cli.js';

const root = ROOT;
const cli = CLI;

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});

async function startCli(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [cli, 'sandbox', '--port', '0', ...args], {
    cwd: root,
    env: { ...process.env, SANDBOX_TOKENS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`sandbox exited with ${code}: ${stderr}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, url, stderr: () => stderr, exited };
}

beforeAll(() => ensureBuilt(), 60_000);

describe('tap-report-dump sandbox (binary)', () => {
  it('prints the base URL first, serves the demo token and stops cleanly on SIGTERM', async () => {
    const { child, url, stderr, exited } = await startCli(['--training-records', '50', '--verbose']);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await request(`${url}/public/v1/report/training/dump.csv`, { headers: { authorization: 'Bearer demo-token' } });
    expect(res.statusCode).toBe(200);
    const text = await res.body.text();
    expect(text.split('\r\n').filter(Boolean)).toHaveLength(51);
    expect(stderr()).toContain('demo-token');
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr()).toContain('GET /public/v1/report/training/dump.csv 200');
  });

  it('stops cleanly on a SIGTERM sent the moment its URL is read: it listens for the signal before printing the URL', async () => {
    // Listening only after the URL, a signal sent at once killed it (no exit code) about one try in three.
    for (let i = 1; i <= 8; i++) {
      const { child, exited } = await startCli(['--training-records', '10', '--phishing-records', '10']);
      child.kill('SIGTERM');
      expect(await exited, `try ${i}`).toBe(0);
    }
  });

  it('takes tokens from SANDBOX_TOKENS, --token overriding it, and never logs them', async () => {
    const env = { SANDBOX_TOKENS: 'envtok:report:training:read;envboth:report:training:read,report:phishing:read' };
    const a = await startCli(['--verbose'], env);
    const phishing = `${a.url}/public/v1/report/phishing/dump.jsonl`;
    expect((await request(phishing, { headers: { authorization: 'Bearer envtok' } })).statusCode).toBe(403);
    expect((await request(phishing, { headers: { authorization: 'Bearer envboth' } })).statusCode).toBe(200);
    expect((await request(phishing, { headers: { authorization: 'Bearer demo-token' } })).statusCode).toBe(401);
    a.child.kill('SIGINT');
    expect(await a.exited).toBe(0);
    expect(a.stderr()).not.toMatch(/envtok|envboth/);

    const b = await startCli(['--token', 'flagtok:report:phishing:read', '--seed', '2', '--fail-rate', '1', '--fail-statuses', '503'], env);
    const res = await request(`${b.url}/public/v1/report/phishing/dump.jsonl`, { headers: { authorization: 'Bearer flagtok' } });
    expect(res.statusCode).toBe(503);
    await res.body.dump();
    expect((await request(`${b.url}/public/v1/report/phishing/dump.jsonl`, { headers: { authorization: 'Bearer envboth' } })).statusCode).toBe(401);
    b.child.kill('SIGTERM');
    expect(await b.exited).toBe(0);
  });

  it('refuses invalid options', async () => {
    await expect(startCli(['--date-offset', 'CET'])).rejects.toThrow(/exited/);
    await expect(startCli(['--order', 'random'])).rejects.toThrow(/exited/);
  });

  it('a port in use, a port that is not one, or a misspelt option: one line saying what to do, exit 2', async () => {
    const first = await startCli([]);
    const taken = new URL(first.url).port;
    const run = (args: string[]) => runTap(['sandbox', ...args]);
    const [inUse, notAPort, misspelt] = await Promise.all([run(['--port', taken]), run(['--port', 'abc']), run(['--prot', '1'])]);
    expect(inUse.code).toBe(2);
    expect(inUse.stderr).toBe(`sandbox: port ${taken} on 127.0.0.1 is already in use (another sandbox?); give another with --port, or --port 0 for any free port\n`);
    expect(notAPort.code).toBe(2);
    expect(notAPort.stderr).toBe('sandbox: --port must be a whole number from 0 to 65535 (0: any free port)\n');
    expect(misspelt.code).toBe(2);
    expect(misspelt.stderr).toBe('tap-report-dump: error: --prot is not a command or option of tap-report-dump sandbox (did you mean --port?). See tap-report-dump --help.\n');
    first.child.kill('SIGTERM');
    await first.exited;
  });

  it('by default dates its records to end the day before its clock; --anchor 2026-01-01 serves the dates of before; a bad --anchor is one line, exit 2', async () => {
    const dump = async (url: string): Promise<Array<Record<string, string | null>>> => {
      const res = await request(`${url}/public/v1/report/training/dump.jsonl`, { headers: { authorization: 'Bearer demo-token' } });
      return (await res.body.text()).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, string | null>);
    };
    const newest = (records: Array<Record<string, string | null>>): number =>
      Math.max(...records.flatMap((r) => [r.availableFrom, r.completedAt, r.lastActivityAt]).filter((v): v is string => v !== null).map(Date.parse));
    const before = Date.now();
    const [recent, fixed] = await Promise.all([startCli(['--training-records', '200']), startCli(['--training-records', '200', '--anchor', '2026-01-01'])]);
    const now = await dump(recent.url);
    expect(newest(now)).toBeLessThanOrEqual(Date.now());
    expect(newest(now)).toBeGreaterThan(before - 2 * 86_400_000);
    const old = await dump(fixed.url);
    expect(old[0]).toMatchObject({ userId: 'usr-0000000', completedAt: '2025-04-24T12:20:00Z' });
    expect(newest(old)).toBeLessThan(Date.parse('2026-01-01T00:00:00Z'));
    for (const { child, exited } of [recent, fixed]) {
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
    const bad = await runTap(['sandbox', '--port', '0', '--anchor', '1 Jan 2026']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('sandbox: anchor must be a day YYYY-MM-DD (the synthetic history ends before it), got "1 Jan 2026"\n');
  });

  it('serves the rows in the --order given, and says so', async () => {
    const { child, url, stderr, exited } = await startCli(['--training-records', '80', '--order', 'descending']);
    const res = await request(`${url}/public/v1/report/training/dump.jsonl`, { headers: { authorization: 'Bearer demo-token' } });
    const keys = (await res.body.text()).split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { completedAt: string | null }).completedAt);
    expect(keys).toHaveLength(80);
    const instants = keys.map((k) => (k === null ? Number.NEGATIVE_INFINITY : Date.parse(k)));
    for (let i = 1; i < instants.length; i++) expect(instants[i]).toBeLessThanOrEqual(instants[i - 1]);
    expect(keys.at(-1)).toBeNull();
    expect(stderr()).toContain('descending order');
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
