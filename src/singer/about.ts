import { ENV_PREFIX } from '../config/config.js';
import { configSchema } from '../config/schema.js';
import { packageVersion } from '../catalog/schemas.js';

export const CAPABILITIES = ['catalog', 'discover', 'state', 'properties', 'about', 'batch', 'activate-version'] as const;

export interface About {
  name: string;
  description: string;
  version: string;
  capabilities: readonly string[];
  settings: ReturnType<typeof configSchema>;
  env_prefix: string;
}

/** What `--about` prints: the Meltano SDK's layout, settings as the config JSON Schema. */
export function about(): About {
  return {
    name: 'tap-report-dump',
    description: 'Singer tap for the report data dump API: training progress and phishing campaign results, incremental by completedAt / sentAt.',
    version: packageVersion(),
    capabilities: CAPABILITIES,
    settings: configSchema(),
    env_prefix: ENV_PREFIX,
  };
}

export function aboutMarkdown(info: About = about()): string {
  const lines = [
    `# ${info.name}`,
    '',
    info.description,
    '',
    `Version: ${info.version}`,
    '',
    '## Capabilities',
    '',
    ...info.capabilities.map((c) => `- \`${c}\``),
    '',
    '## Settings',
    '',
    '| Setting | Type | Required | Default | Description |',
    '| --- | --- | --- | --- | --- |',
  ];
  const required = new Set(info.settings.required ?? []);
  for (const [name, schema] of Object.entries(info.settings.properties ?? {})) {
    const type = Array.isArray(schema.type) ? schema.type.join(' | ') : String(schema.type ?? '');
    const shown = (value: unknown): string => (typeof value === 'string' && /^[\w.-]+$/.test(value) ? value : JSON.stringify(value));
    const enumValues = Array.isArray(schema.enum) ? ` (${schema.enum.map(shown).join(', ')})` : '';
    const secret = schema.secret === true ? ' Secret.' : '';
    const fallback = schema.default === undefined ? '' : `\`${JSON.stringify(schema.default)}\``;
    const description = String(schema.description ?? '').replace(/\|/g, '\\|');
    lines.push(`| \`${name}\` | ${`${type}${enumValues}`.replace(/\|/g, '\\|')} | ${required.has(name) ? 'yes' : 'no'} | ${fallback} | ${description}${secret} |`);
  }
  lines.push('', `Every setting can also be set with an environment variable \`${info.env_prefix}<SETTING>\` (upper case), e.g. \`${info.env_prefix}ACCESS_TOKEN\`.`, '');
  return lines.join('\n');
}
