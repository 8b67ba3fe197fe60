import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { about, aboutMarkdown, CAPABILITIES } from '../../src/singer/about.js';
import { meltanoDefinition } from '../../src/singer/meltano.js';
import { ROOT } from '../helpers/build.js';
import { runTap } from '../helpers/cli.js';

/** The README's settings table and Meltano plugin definition stay true to the code. */

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const meltanoDoc = readFileSync(join(ROOT, 'docs', 'meltano.md'), 'utf8');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; bin: Record<string, string>; scripts: Record<string, string>; engines: { node: string }; license: string; files: string[] };

describe('README', () => {
  it('names the Node lines package.json supports, and CI tests each of them', () => {
    const majors = [...pkg.engines.node.matchAll(/(\d+)\.\d+\.\d+/g)].map((m) => m[1]);
    expect(majors.length).toBeGreaterThanOrEqual(3);
    const requirements = readme.split('\n').find((line) => line.startsWith('Requirements:'))!;
    for (const major of majors) expect(requirements).toMatch(new RegExp(`\\b${major}\\b`));
    const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');
    expect(/for major in ([\d ]+); do/.exec(ci)?.[1].split(' ')).toEqual(majors);
  });

  it('docs/settings.md lists exactly the settings --about reports, as --about --format markdown prints them', () => {
    const table = /<!-- settings-table:start -->\n([\s\S]*?)\n<!-- settings-table:end -->/.exec(readFileSync(join(ROOT, 'docs', 'settings.md'), 'utf8'))?.[1];
    const expected = aboutMarkdown().split('\n').filter((l) => l.startsWith('|')).join('\n');
    expect(table).toBe(expected);
  });

  it('sums up every setting --about reports in one line each, in the same order, and no other', () => {
    const table = /<!-- settings-summary:start -->\n([\s\S]*?)\n<!-- settings-summary:end -->/.exec(readme)?.[1] ?? '';
    const rows = table.split('\n').slice(2);
    expect(rows.map((row) => /^\| `([a-z_]+)` \| /.exec(row)?.[1])).toEqual(Object.keys(about().settings.properties ?? {}));
    for (const row of rows) expect(row.split(' | ')[1].length, row).toBeLessThanOrEqual(100);
  });

  it('docs/meltano.md has the Meltano extractor definition the code generates (--about --format meltano): settings, kinds, secrets, capabilities, executable', async () => {
    const block = /```yaml meltano\n([\s\S]*?)```/.exec(meltanoDoc)?.[1];
    expect(block).toBe(meltanoDefinition());
    type Setting = { name: string; kind: string; sensitive?: boolean; options?: Array<{ label: string; value: string }> };
    const meltano = parseYaml(block!) as { plugins: { extractors: Array<{ name: string; namespace: string; executable: string; capabilities: string[]; settings: Setting[] }> } };
    const [extractor] = meltano.plugins.extractors;
    expect(extractor.name).toBe('tap-report-dump');
    expect(extractor.namespace).toBe('tap_report_dump');
    expect(Object.keys(pkg.bin)).toContain(extractor.executable);
    expect(extractor.capabilities).toEqual([...CAPABILITIES]);
    const settings = about().settings.properties ?? {};
    expect(extractor.settings.map((s) => s.name)).toEqual(Object.keys(settings));
    // Read back as YAML, each setting has the kind Meltano (3.9+) has for its type, and the secrets are sensitive.
    const byName = Object.fromEntries(extractor.settings.map((s) => [s.name, s]));
    for (const [name, schema] of Object.entries(settings)) {
      const setting = byName[name];
      if (Array.isArray(schema.enum)) expect(setting.options?.map((o) => o.value), name).toEqual(schema.enum);
      else expect(setting.kind, name).toBe({ integer: 'integer', number: 'decimal', boolean: 'boolean', object: 'object', array: 'array' }[String(schema.type)] ?? (name === 'start_date' ? 'date_iso8601' : 'string'));
      expect(setting.sensitive === true, name).toBe(schema.secret === true);
    }
    expect(['access_token', 'pseudonymisation_key'].map((name) => byName[name])).toEqual([
      { name: 'access_token', kind: 'string', sensitive: true },
      { name: 'pseudonymisation_key', kind: 'string', sensitive: true },
    ]);
    // Meltano calls the executable with --about; the JSON it gets has the same capabilities, and --format meltano prints the block.
    const [run, definition] = await Promise.all([runTap(['--about', '--format', 'json']), runTap(['--about', '--format', 'meltano'])]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).capabilities).toEqual(extractor.capabilities);
    expect([definition.code, definition.stdout, definition.stderr]).toEqual([0, block, '']);
  });

  it("installs, as the Install section says, the tarball npm pack writes for this version, and recommends no git-URL install", () => {
    const install = readme.slice(readme.indexOf('## Install\n'), readme.indexOf('## Usage\n'));
    const tarball = `${pkg.name}-${pkg.version}.tgz`;
    expect(install).toContain(`npm install -g ./${tarball}`);
    for (const named of install.matchAll(/tap-report-dump-[\d.]+\.tgz/g)) expect(named[0]).toBe(tarball);
    for (const command of install.matchAll(/^npm install -g .*$/gm)) expect(command[0]).not.toMatch(/git|https?:/);
  });

  it('ships the licence package.json names: an MIT LICENSE among the packed files', () => {
    expect(pkg.license).toBe('MIT');
    expect(pkg.files).toContain('LICENSE');
    const licence = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
    expect(licence.split('\n').slice(0, 3)).toEqual(['MIT License', '', 'Copyright (c) 2026 the tap-report-dump authors']);
    expect(licence).toContain('THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND');
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

  it('docs/troubleshooting.md quotes only words the tap writes: each fragment of its first column is in the source', () => {
    const sources = sourceTexts(join(ROOT, 'src'));
    const rows = readFileSync(join(ROOT, 'docs', 'troubleshooting.md'), 'utf8').split('\n').filter((line) => line.startsWith('| `'));
    expect(rows.length).toBeGreaterThanOrEqual(20);
    const missing = rows.flatMap((row) => [...row.split(' | ')[0].matchAll(/`([^`]+)`/g)].map((m) => m[1])).filter((fragment) => !sources.some((text) => text.includes(fragment)));
    expect(missing).toEqual([]);
  });

  it('keeps the README to what a user needs (at most 25 KB, one idea a line); the rest is in docs/', () => {
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(25 * 1024);
    // One idea a sentence: a prose line of the README holds at most two sentences, each of at most 40 words.
    expectOneIdeaALine(readme);
    for (const document of documents.slice(1)) expect(readme, `the README links ${relative(ROOT, document)}`).toContain(`(${relative(ROOT, document)}`);
  });

  it('keeps every docs page in the README\'s style', () => {
    for (const document of documents.slice(1)) expectOneIdeaALine(readFileSync(document, 'utf8'));
  });
});

/** One idea a sentence: each prose line holds at most two sentences, each of at most 40 words. */
function expectOneIdeaALine(markdown: string): void {
  const prose = markdown.replace(/```[\s\S]*?```/g, '').split('\n').filter((line) => line.trim() !== '' && !/^(#|\||-|\d+\.|<!--|\s)/.test(line));
  for (const line of prose) {
    const sentences = line.split(/(?<=[.:!?])\s+(?=[A-Z`])/);
    expect(sentences.length, line).toBeLessThanOrEqual(2);
    for (const sentence of sentences) expect(sentence.split(/\s+/).length, sentence).toBeLessThanOrEqual(40);
  }
}

/** The text of every TypeScript file under `folder`. */
function sourceTexts(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.ts')).map((name) => readFileSync(join(folder, name), 'utf8'));
}
