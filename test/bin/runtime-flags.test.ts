import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from '../helpers/build.js';
import { writeTempText } from '../helpers/files.js';

/**
 * The Node flags the tap runs with (README, Performance: a small young
 * generation) are the same wherever it is started: each bin's shebang, as the
 * running process sees them, `npm start` and the Docker entrypoint.
 */

const FLAGS = ['--max-semi-space-size=1'];
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string>; scripts: Record<string, string> };

/** The flags of a bin started as an orchestrator starts it: the file itself, through its shebang. */
function execArgvOf(bin: string): string[] {
  const probe = writeTempText(`process.on('exit', () => process.stderr.write('EXEC_ARGV ' + JSON.stringify(process.execArgv) + '\\n'));`, 'probe.mjs');
  const run = spawnSync(join(ROOT, bin), ['--version'], { env: { ...process.env, NODE_OPTIONS: `--import=${probe}` }, encoding: 'utf8' });
  const line = run.stderr.split('\n').find((l) => l.startsWith('EXEC_ARGV '));
  if (line === undefined) throw new Error(`${bin} did not start: ${run.stderr}`);
  return JSON.parse(line.slice('EXEC_ARGV '.length)) as string[];
}

describe('runtime flags', () => {
  beforeAll(async () => {
    await ensureBuilt();
  });

  it.each(Object.entries(pkg.bin))('%s runs Node with the tuned young generation (its shebang)', (_name, bin) => {
    expect(execArgvOf(bin)).toEqual(expect.arrayContaining(FLAGS));
  });

  it('npm start and the Docker entrypoint pass the same flags', () => {
    for (const flag of FLAGS) expect(pkg.scripts.start).toContain(` ${flag} `);
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const entrypoint = JSON.parse(/^ENTRYPOINT (.*)$/m.exec(dockerfile)![1]) as string[];
    expect(entrypoint).toEqual(expect.arrayContaining(FLAGS));
  });
});
