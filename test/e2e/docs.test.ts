import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { about, aboutMarkdown, CAPABILITIES } from '../../src/singer/about.js';
import { ROOT } from '../helpers/build.js';
import { runTap } from '../helpers/cli.js';

/** The README's settings table and Meltano plugin definition stay true to the code. */

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const meltanoDoc = readFileSync(join(ROOT, 'docs', 'meltano.md'), 'utf8');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string>; scripts: Record<string, string>; engines: { node: string } };

describe('README', () => {
  it('names the Node lines package.json supports, and CI tests each of them', () => {
    const majors = [...pkg.engines.node.matchAll(/(\d+)\.\d+\.\d+/g)].map((m) => m[1]);
    expect(majors.length).toBeGreaterThanOrEqual(3);
    const requirements = readme.split('\n').find((line) => line.startsWith('Requirements:'))!;
    for (const major of majors) expect(requirements).toMatch(new RegExp(`\\b${major}\\b`));
    const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');
    expect(/for major in ([\d ]+); do/.exec(ci)?.[1].split(' ')).toEqual(majors);
  });

  it('lists exactly the settings --about reports', () => {
    const table = /<!-- settings-table:start -->\n([\s\S]*?)\n<!-- settings-table:end -->/.exec(readme)?.[1];
    const expected = aboutMarkdown().split('\n').filter((l) => l.startsWith('|')).join('\n');
    expect(table).toBe(expected);
  });

  it('docs/meltano.md has a Meltano extractor definition matching --about: settings, secret token, capabilities, executable', async () => {
    const block = /```yaml meltano\n([\s\S]*?)```/.exec(meltanoDoc)?.[1];
    expect(block).toBeDefined();
    const meltano = parseYaml(block!) as { plugins: { extractors: Array<{ name: string; namespace: string; executable: string; capabilities: string[]; settings: Array<{ name: string; kind: string }> }> } };
    const [extractor] = meltano.plugins.extractors;
    expect(extractor.name).toBe('tap-report-dump');
    expect(extractor.namespace).toBe('tap_report_dump');
    expect(Object.keys(pkg.bin)).toContain(extractor.executable);
    expect(extractor.capabilities).toEqual([...CAPABILITIES]);
    const settings = about().settings.properties ?? {};
    expect(extractor.settings.map((s) => s.name)).toEqual(Object.keys(settings));
    const kinds = Object.fromEntries(extractor.settings.map((s) => [s.name, s.kind]));
    expect(kinds.access_token).toBe('password');
    for (const [name, schema] of Object.entries(settings)) {
      const expectedKinds: Record<string, string[]> = { string: ['string', 'date_iso8601', 'options', 'password'], integer: ['integer'], number: ['integer', 'decimal'], boolean: ['boolean'], object: ['object'] };
      expect(expectedKinds[String(schema.type)], `${name}: ${kinds[name]}`).toContain(kinds[name]);
    }
    // Meltano calls the executable with --about; the JSON it gets has the same capabilities.
    const run = await runTap(['--about', '--format', 'json']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).capabilities).toEqual(extractor.capabilities);
  });

  it('quick start commands exist as npm scripts', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm test');
    expect(pkg.scripts.start).toMatch(/demo/);
    expect(pkg.scripts.test).toMatch(/vitest run/);
  });
});

/** GitHub's anchor of a heading: lower case, punctuation but hyphens and underscores dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\- _]/gu, '').replaceAll(' ', '-');
}

function anchorsIn(path: string): Set<string> {
  const text = readFileSync(path, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#+ (.+)$/gm)].map((m) => anchorOf(m[1])));
}

describe('README and docs/', () => {
  const documents = [join(ROOT, 'README.md'), ...readdirSync(join(ROOT, 'docs')).map((name) => join(ROOT, 'docs', name))];

  it('link only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const document of documents) {
      const text = readFileSync(document, 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const [file, anchor] = target.split('#');
        const path = file === '' ? document : join(dirname(document), file);
        if (!existsSync(path)) broken.push(`${relative(ROOT, document)}: ${target} (no such file)`);
        else if (anchor !== undefined && path.endsWith('.md') && !anchorsIn(path).has(anchor)) broken.push(`${relative(ROOT, document)}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('keeps the README to what a user needs (about 400 lines); the rest is in docs/', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(420);
    for (const document of documents.slice(1)) expect(readme, `the README links ${relative(ROOT, document)}`).toContain(`(${relative(ROOT, document)}`);
  });
});
