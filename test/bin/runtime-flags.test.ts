import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from '../helpers/build.js';
import { processProbe } from '../helpers/probe.js';

/**
 * The Node flags the tap runs with (README, Performance: a small young
 * generation) are the same wherever it is started: each bin's shebang, as the
 * running process sees them, `npm start` and the Docker entrypoint.
 */

const FLAGS = ['--max-semi-space-size=1'];
/** glibc's malloc arenas (fewer: less fragmentation of freed chunks); set by the bins' shebang and the image. */
const ARENAS = '2';
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string>; scripts: Record<string, string> };

const RUNTIME_PROBE = `
import { writeFileSync } from 'node:fs';
process.on('exit', () => writeFileSync(process.env.PROBE_FILE, JSON.stringify({ execArgv: process.execArgv, arenas: process.env.MALLOC_ARENA_MAX })));
`;

/** The flags and malloc arenas of a bin started as an orchestrator starts it: the file itself, through its shebang. */
function runtimeOf(bin: string): { execArgv: string[]; arenas: string | undefined } {
  const probe = processProbe<{ execArgv: string[]; arenas: string | undefined }>(RUNTIME_PROBE);
  const env: NodeJS.ProcessEnv = { ...process.env, ...probe.env };
  delete env.MALLOC_ARENA_MAX;
  const run = spawnSync(join(ROOT, bin), ['--version'], { env, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`${bin} did not start: ${run.stderr}`);
  return probe.read();
}

describe('runtime flags', () => {
  beforeAll(async () => {
    await ensureBuilt();
  });

  it.each(Object.entries(pkg.bin))('%s runs Node with the tuned young generation and malloc arenas (its shebang)', (_name, bin) => {
    const runtime = runtimeOf(bin);
    expect(runtime.execArgv).toEqual(expect.arrayContaining(FLAGS));
    expect(runtime.arenas).toBe(ARENAS);
  });

  it('npm start and the Docker image pass the same flags (the image also the arenas)', () => {
    for (const flag of FLAGS) expect(pkg.scripts.start).toContain(` ${flag} `);
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const entrypoint = JSON.parse(/^ENTRYPOINT (.*)$/m.exec(dockerfile)![1]) as string[];
    expect(entrypoint).toEqual(expect.arrayContaining(FLAGS));
    expect(dockerfile).toMatch(new RegExp(`^ENV MALLOC_ARENA_MAX=${ARENAS}$`, 'm'));
  });
});
