import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { runTap, syncOk } from '../helpers/cli.js';
import { lastState } from '../helpers/messages.js';
import { processProbe } from '../helpers/probe.js';
import { startTestSandbox, tapConfig, type Sandbox } from '../helpers/sandbox.js';

/**
 * What each invocation loads (issue 13, start-up: load only what a command
 * needs), seen from inside the real process: a probe given with --import
 * writes, at exit, the Node builtins it loaded and the modules it resolved.
 */

/**
 * Builtins from process.moduleLoadList; modules from a resolve hook where
 * module.registerHooks exists (Node 22.15+: every line CI runs but 20, where
 * only the builtins are checked) and from the CommonJS cache (ajv is required).
 */
const PROBE = `
import module from 'node:module';
import { writeFileSync } from 'node:fs';
const before = new Set(process.moduleLoadList);
const resolved = [];
const hooked = typeof module.registerHooks === 'function';
if (hooked) module.registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); resolved.push(r.url); return r; } });
process.on('exit', () => {
  const builtins = process.moduleLoadList.filter((m) => !before.has(m) && m.startsWith('NativeModule ')).map((m) => m.slice(13));
  const required = Object.keys(module.createRequire(import.meta.url).cache);
  writeFileSync(process.env.PROBE_FILE, JSON.stringify({ builtins, hooked, modules: [...resolved, ...required] }));
});
`;

interface Loads {
  builtins: string[];
  /** Whether ES modules were seen too (see PROBE). */
  hooked: boolean;
  modules: string[];
}

async function loadsOf(run: (env: Record<string, string>) => Promise<unknown>): Promise<Loads> {
  const probe = processProbe<Loads>(PROBE);
  await run(probe.env);
  return probe.read();
}

const loadedAny = (loads: Loads, pattern: RegExp): boolean => loads.modules.some((url) => pattern.test(url));

describe('start-up loads only what the command needs', () => {
  let sandbox: Sandbox;

  beforeAll(async () => {
    await ensureBuilt();
    sandbox = await startTestSandbox({ trainingRecords: 50, phishingRecords: 50 });
  });

  afterAll(async () => {
    await sandbox?.close();
  });

  it('--version loads neither yargs, ajv, node:http, node:crypto nor node:util beyond parseArgs', async () => {
    const loads = await loadsOf((env) => runTap(['--version'], { env }));
    if (loads.hooked) expect(loadedAny(loads, /\/dist\/src\/bin\/singer-invocation\.js$/)).toBe(true);
    expect(loadedAny(loads, /node_modules\/(yargs|ajv)\//)).toBe(false);
    expect(loads.builtins).not.toContain('http');
    expect(loads.builtins).not.toContain('crypto');
    expect(loads.builtins).not.toContain('internal/util/diff');
  });

  it('a gzip sync answered 304 loads no node:zlib, node:fs/promises, yargs, ajv compiler, batch writer or sandbox; one with a body loads node:zlib (without the change store, which reads its generation file)', async () => {
    const config = tapConfig(sandbox, { compression: 'gzip', discovery: 'packaged', send_changes_only: false });
    let first: Awaited<ReturnType<typeof syncOk>> | undefined;
    const withBody = await loadsOf(async (env) => (first = await syncOk({ config, env })));
    expect(withBody.builtins).toContain('zlib');

    const before = sandbox.stats().byStatus['304'] ?? 0;
    const unchanged = await loadsOf((env) => syncOk({ config, state: lastState(first!.messages), env }));
    // Training's incremental read and its open rows, and phishing's read.
    expect((sandbox.stats().byStatus['304'] ?? 0) - before).toBe(3);
    expect(unchanged.builtins).toEqual(expect.arrayContaining(['http', 'crypto']));
    for (const builtin of ['zlib', 'internal/fs/promises', 'internal/util/diff']) expect(unchanged.builtins).not.toContain(builtin);
    expect(loadedAny(unchanged, /node_modules\/yargs\//)).toBe(false);
    // The config validator compiled ahead of time is required, ajv's compiler is not.
    expect(loadedAny(unchanged, /config-validator\.generated\.cjs$/)).toBe(true);
    expect(loadedAny(unchanged, /node_modules\/ajv\/dist\/(ajv|core|compile\/)/)).toBe(false);
    expect(loadedAny(unchanged, /\/dist\/src\/output\/batch-files\.js$/)).toBe(false);
    expect(loadedAny(unchanged, /\/dist\/sandbox\//)).toBe(false);
  });
});
