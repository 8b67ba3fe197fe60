import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ensureBuilt, ROOT } from '../helpers/build.js';
import { storeRoot } from '../../src/store/store-directory.js';

/**
 * No Docker engine runs here, so the Dockerfile is checked by reading it: what
 * it copies exists, what the final image runs exists after the build, and it
 * follows the rules an Airbyte source image must.
 */

interface Instruction {
  name: string;
  args: string;
  stage: number;
}

function instructions(text: string): Instruction[] {
  const joined = text.replace(/\\\n/g, ' ');
  const out: Instruction[] = [];
  let stage = -1;
  for (const raw of joined.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const [name, ...rest] = line.split(/\s+/);
    if (name.toUpperCase() === 'FROM') stage++;
    out.push({ name: name.toUpperCase(), args: rest.join(' '), stage });
  }
  return out;
}

const dockerfile = instructions(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const finalStage = Math.max(...dockerfile.map((i) => i.stage));
const final = dockerfile.filter((i) => i.stage === finalStage);
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string>; engines: { node: string } };
/** The newest Node line package.json supports is the active LTS line the image runs. */
const ACTIVE_LTS = Math.max(...[...pkg.engines.node.matchAll(/(\d+)\.\d+\.\d+/g)].map((m) => Number(m[1])));

describe('the Dockerfile', () => {
  it('is multi-stage on the active LTS Node line, the newest that package.json supports', () => {
    expect(ACTIVE_LTS).toBeGreaterThanOrEqual(26);
    const bases = dockerfile.filter((i) => i.name === 'FROM').map((i) => i.args);
    expect(bases.length).toBeGreaterThanOrEqual(2);
    for (const base of bases) expect(base).toMatch(new RegExp(`^node:${ACTIVE_LTS}[-.\\w]*( AS \\w+)?$`, 'i'));
  });

  it('copies from the build context only files that exist in the repository', () => {
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n').filter(Boolean);
    for (const copy of dockerfile.filter((i) => i.name === 'COPY' && !i.args.startsWith('--from'))) {
      const parts = copy.args.split(/\s+/);
      for (const source of parts.slice(0, -1)) {
        expect(existsSync(join(ROOT, source)), `COPY source ${source}`).toBe(true);
        expect(ignored, `${source} is not excluded by .dockerignore`).not.toContain(source);
      }
    }
  });

  it('runs, as a non-root user, an entrypoint that the build produces', async () => {
    await ensureBuilt();
    const user = final.filter((i) => i.name === 'USER').at(-1)?.args;
    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user);
    const entrypoint = JSON.parse(final.find((i) => i.name === 'ENTRYPOINT')!.args) as string[];
    expect(entrypoint[0]).toBe('node');
    const script = entrypoint.find((arg) => arg.endsWith('.js'))!;
    // The final stage copies the build's dist/src to /app/dist/src: the entrypoint must be one of the package's bins.
    const copied = final.filter((i) => i.name === 'COPY' && i.args.startsWith('--from')).map((i) => i.args.split(/\s+/).slice(1));
    const mapping = copied.find(([, target]) => script.startsWith(`/app/${target.replace(/^\.\//, '')}`));
    expect(mapping, `a COPY --from puts ${script} in place`).toBeDefined();
    const relative = script.replace(/^\/app\//, '');
    expect(existsSync(join(ROOT, relative)), `${relative} exists after the build`).toBe(true);
    expect(Object.values(pkg.bin)).toContain(relative);
    for (const [, target] of copied) {
      expect(existsSync(join(ROOT, target.replace(/^\.\//, ''))), `build output ${target}`).toBe(true);
    }
    const env = final.filter((i) => i.name === 'ENV').map((i) => i.args).join(' ');
    expect(env).toContain(`AIRBYTE_ENTRYPOINT="${entrypoint.join(' ')}"`);
    expect(statSync(join(ROOT, relative)).size).toBeGreaterThan(0);
  });

  it('carries the Airbyte and OCI labels with the package version (a release cannot ship a stale one) and installs production dependencies only', () => {
    const labels = dockerfile.filter((i) => i.name === 'LABEL').map((i) => i.args).join(' ');
    expect(labels).toMatch(/io\.airbyte\.name="[^"]+"/);
    const versions = [...labels.matchAll(/(io\.airbyte\.version|org\.opencontainers\.image\.version)="([^"]*)"/g)].map((m) => [m[1], m[2]]);
    expect(versions).toEqual([
      ['io.airbyte.version', pkg.version],
      ['org.opencontainers.image.version', pkg.version],
    ]);
    const runs = dockerfile.filter((i) => i.name === 'RUN').map((i) => i.args).join('\n');
    expect(runs).toMatch(/npm prune --omit=dev/);
    expect(final.some((i) => i.name === 'COPY' && /(^|\s)\.\s/.test(i.args))).toBe(false);
  });

  it('is the image metadata.yaml describes: its repository and tag are the io.airbyte labels, the tag package.json\'s version', () => {
    const labels = dockerfile.filter((i) => i.name === 'LABEL').map((i) => i.args).join(' ');
    const label = (name: string): string | undefined => new RegExp(`${name.replace(/\./g, '\\.')}="([^"]*)"`).exec(labels)?.[1];
    const { data } = parseYaml(readFileSync(join(ROOT, 'metadata.yaml'), 'utf8')) as { data: { dockerRepository: string; dockerImageTag: string } };
    expect([data.dockerRepository, data.dockerImageTag]).toEqual([label('io.airbyte.name'), label('io.airbyte.version')]);
    expect(data.dockerImageTag).toBe(pkg.version);
  });

  it('declares the change store\'s default folder a VOLUME, made and owned by the user it runs as before it is declared (a new named volume copies that owner)', () => {
    const env = Object.fromEntries(final.filter((i) => i.name === 'ENV').flatMap((i) => [...i.args.matchAll(/(\w+)=("[^"]*"|\S+)/g)].map((m) => [m[1], m[2].replace(/^"|"$/g, '')])));
    // The image's HOME is not the one to rely on: an orchestrator may run it with another; XDG_STATE_HOME decides.
    const store = storeRoot(undefined, { XDG_STATE_HOME: env.XDG_STATE_HOME, HOME: '/nonexistent' });
    expect(typeof store === 'string' && store.startsWith('/') && !store.startsWith('/nonexistent'), `the store's default folder is set by ENV XDG_STATE_HOME, not HOME: ${JSON.stringify(store)}`).toBe(true);
    const volumes = final.filter((i) => i.name === 'VOLUME').map((i) => i.args);
    expect(volumes).toEqual([store]);
    const user = final.filter((i) => i.name === 'USER').at(-1)!.args;
    const volumeAt = final.findIndex((i) => i.name === 'VOLUME');
    const made = final.slice(0, volumeAt).filter((i) => i.name === 'RUN').map((i) => i.args).join(' && ');
    expect(made).toMatch(new RegExp(`mkdir -p (\\S+ )*${store}( |$)`));
    expect(made).toMatch(new RegExp(`chown ${user}:${user} (\\S+ )*${store}( |$)`));
    expect(final.slice(volumeAt).some((i) => i.name === 'RUN'), 'no RUN after the VOLUME: its changes to the folder would be lost').toBe(false);
  });

  it('ships the licence notice in the image, as the MIT licence asks of every copy', () => {
    expect(final.filter((i) => i.name === 'COPY' && !i.args.startsWith('--from')).map((i) => i.args)).toContain('LICENSE ./LICENSE');
  });
});
